"""Service metrics kept in Redis, exposed in the Prometheus text format.

Workers are many processes on many hosts, so counters live in one Redis hash
(``cw:metrics``, ``HINCRBY``/``HINCRBYFLOAT``) and every API replica renders the same
numbers. :class:`RedisCollector` turns the hash into metric families at scrape time;
queue depth is read live (``LLEN`` of the Celery queue list).
"""

from __future__ import annotations

from collections.abc import Iterator

import redis
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from chunkweave.worker.jobs import as_text

METRICS_KEY = "cw:metrics"
#: Upper bounds (seconds) of the task-duration histogram buckets.
DURATION_BUCKETS: tuple[float, ...] = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)


def record_document(
    client: redis.Redis,
    *,
    outcome: str,
    pages: int,
    chunks_added: int,
    chunks_unchanged: int,
    chunks_deleted: int,
    seconds: float,
) -> None:
    """Count one processed document and its task duration."""
    pipe = client.pipeline(transaction=False)
    pipe.hincrby(METRICS_KEY, f"documents|{outcome}", 1)
    pipe.hincrby(METRICS_KEY, "pages|", pages)
    pipe.hincrby(METRICS_KEY, "chunks|added", chunks_added)
    pipe.hincrby(METRICS_KEY, "chunks|unchanged", chunks_unchanged)
    pipe.hincrby(METRICS_KEY, "chunks|deleted", chunks_deleted)
    _observe(pipe, seconds)
    pipe.execute()


def record_failure(client: redis.Redis, *, reason: str, seconds: float | None = None) -> None:
    """Count one failed document by its reason code."""
    pipe = client.pipeline(transaction=False)
    pipe.hincrby(METRICS_KEY, f"failures|{reason}", 1)
    if seconds is not None:
        _observe(pipe, seconds)
    pipe.execute()


def _observe(pipe: redis.client.Pipeline, seconds: float) -> None:
    # Cumulative buckets are computed at render time; store the one bucket hit.
    bound = next((b for b in DURATION_BUCKETS if seconds <= b), float("inf"))
    pipe.hincrby(METRICS_KEY, f"duration_bucket|{bound}", 1)
    pipe.hincrbyfloat(METRICS_KEY, "duration_sum|", seconds)
    pipe.hincrby(METRICS_KEY, "duration_count|", 1)


class RedisCollector(Collector):
    """Prometheus collector reading the shared counters and the queue length."""

    def __init__(self, client: redis.Redis, *, queue: str) -> None:
        self.r = client
        self.queue = queue

    def collect(self) -> Iterator[Metric]:
        """Yield the metric families (called on each scrape)."""
        raw = {as_text(k): as_text(v) for k, v in self.r.hgetall(METRICS_KEY).items()}
        split = [(k.partition("|")[0], k.partition("|")[2], v) for k, v in raw.items()]

        docs = CounterMetricFamily(
            "chunkweave_documents_processed",
            "Documents processed, by outcome.",
            labels=["outcome"],
        )
        chunks = CounterMetricFamily(
            "chunkweave_chunks_processed", "Chunks processed, by kind.", labels=["kind"]
        )
        fails = CounterMetricFamily(
            "chunkweave_failures", "Failed documents, by reason code.", labels=["reason"]
        )
        pages = 0
        buckets: dict[float, int] = {}
        for name, label, value in split:
            if name == "documents":
                docs.add_metric([label], float(value))
            elif name == "chunks":
                chunks.add_metric([label], float(value))
            elif name == "failures":
                fails.add_metric([label], float(value))
            elif name == "pages":
                pages = int(value)
            elif name == "duration_bucket":
                buckets[float(label)] = int(value)
        yield docs
        yield chunks
        yield fails
        yield CounterMetricFamily(
            "chunkweave_pages_processed", "Pages of processed documents.", value=pages
        )

        cumulative, running = [], 0
        for bound in (*DURATION_BUCKETS, float("inf")):
            running += buckets.get(bound, 0)
            cumulative.append(("+Inf" if bound == float("inf") else str(bound), running))
        yield HistogramMetricFamily(
            "chunkweave_task_duration_seconds",
            "Wall-clock seconds per document task.",
            buckets=cumulative,
            sum_value=float(raw.get("duration_sum|", 0.0)),
        )
        yield GaugeMetricFamily(
            "chunkweave_queue_depth",
            "Messages waiting in the Celery queue.",
            value=int(self.r.llen(self.queue)),
        )

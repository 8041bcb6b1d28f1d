"""Service metrics kept in Redis, exposed in the Prometheus text format.

Workers are many processes on many hosts, so counters live in one Redis hash
(``cw:metrics``, ``HINCRBY``/``HINCRBYFLOAT``) and every API replica renders the same
numbers. :class:`RedisCollector` turns the hash into metric families at scrape time;
queue depth is read live (``LLEN`` of the Celery queue list).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import redis
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from chunkweave.worker import keys
from chunkweave.worker.jobs import as_text

METRICS_KEY = keys.METRICS
#: Upper bounds (seconds) of the task-duration histogram buckets.
DURATION_BUCKETS: tuple[float, ...] = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
#: Upper bounds (seconds) of the per-stage histogram buckets (stages are shorter).
STAGE_BUCKETS: tuple[float, ...] = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)


def record_document(
    client: redis.Redis,
    *,
    stages: Mapping[str, float] | None = None,
    outcome: str,
    pages: int,
    chunks_added: int,
    chunks_unchanged: int,
    chunks_deleted: int,
    seconds: float,
) -> None:
    """Count one processed document, its task duration and its seconds per stage."""
    pipe = client.pipeline(transaction=False)
    pipe.hincrby(METRICS_KEY, f"documents|{outcome}", 1)
    pipe.hincrby(METRICS_KEY, "pages|", pages)
    pipe.hincrby(METRICS_KEY, "chunks|added", chunks_added)
    pipe.hincrby(METRICS_KEY, "chunks|unchanged", chunks_unchanged)
    pipe.hincrby(METRICS_KEY, "chunks|deleted", chunks_deleted)
    _observe(pipe, seconds)
    for stage, spent in (stages or {}).items():
        _observe(pipe, spent, f"stage_{stage}")
    pipe.execute()


def record_failure(client: redis.Redis, *, reason: str, seconds: float | None = None) -> None:
    """Count one failed document by its reason code."""
    pipe = client.pipeline(transaction=False)
    pipe.hincrby(METRICS_KEY, f"failures|{reason}", 1)
    if seconds is not None:
        _observe(pipe, seconds)
    pipe.execute()


def _observe(pipe: redis.client.Pipeline, seconds: float, name: str = "duration") -> None:
    # Cumulative buckets are computed at render time; store the one bucket hit.
    buckets = DURATION_BUCKETS if name == "duration" else STAGE_BUCKETS
    bound = next((b for b in buckets if seconds <= b), float("inf"))
    pipe.hincrby(METRICS_KEY, f"{name}_bucket|{bound}", 1)
    pipe.hincrbyfloat(METRICS_KEY, f"{name}_sum|", seconds)
    pipe.hincrby(METRICS_KEY, f"{name}_count|", 1)


def _histogram(
    raw: dict[str, str], name: str, bounds: tuple[float, ...]
) -> tuple[list[tuple[str, float]], float]:
    """Cumulative buckets and the sum of one stored histogram."""
    cumulative: list[tuple[str, float]] = []
    running = 0
    for bound in (*bounds, float("inf")):
        running += int(raw.get(f"{name}_bucket|{bound}", 0))
        cumulative.append(("+Inf" if bound == float("inf") else str(bound), running))
    return cumulative, float(raw.get(f"{name}_sum|", 0.0))


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
        for name, label, value in split:
            if name == "documents":
                docs.add_metric([label], float(value))
            elif name == "chunks":
                chunks.add_metric([label], float(value))
            elif name == "failures":
                fails.add_metric([label], float(value))
            elif name == "pages":
                pages = int(value)
        yield docs
        yield chunks
        yield fails
        yield CounterMetricFamily(
            "chunkweave_pages_processed", "Pages of processed documents.", value=pages
        )

        cumulative, total = _histogram(raw, "duration", DURATION_BUCKETS)
        yield HistogramMetricFamily(
            "chunkweave_task_duration_seconds",
            "Wall-clock seconds per document task.",
            buckets=cumulative,
            sum_value=total,
        )
        stages = HistogramMetricFamily(
            "chunkweave_stage_duration_seconds",
            "Seconds per document spent in each stage (fetch, lock, check, parse, chunk, "
            "embed, upsert, prune).",
            labels=["stage"],
        )
        # Stored as ``stage_<name>_bucket|<bound>``, ``stage_<name>_sum|``, ``..._count|``.
        names = sorted({n for n, _, _ in split if n.startswith("stage_") and n.endswith("_count")})
        for count_name in names:
            stage = count_name.removeprefix("stage_").removesuffix("_count")
            buckets_of, spent = _histogram(raw, f"stage_{stage}", STAGE_BUCKETS)
            stages.add_metric([stage], buckets_of, spent)
        yield stages
        yield GaugeMetricFamily(
            "chunkweave_queue_depth",
            "Messages waiting in the Celery queue.",
            value=int(self.r.llen(self.queue)),
        )

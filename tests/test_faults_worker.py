"""Faults that used to lose or stall work, against real Redis, Weaviate and workers.

Heartbeats, the reconciler and grace periods are set short through the environment,
so each scenario recovers in seconds; every test asserts its recovery bound and
prints the seconds measured.

- A worker killed as a whole (SIGKILL to its process group, pool included) mid-ingest:
  a second worker finishes every document (real pipeline), nothing lost, nothing
  written twice (Weaviate objects per document equal the ledger's chunk count), and
  the requeued document does not wait out the dead task's 30 s lock.
- A worker group killed while it holds a step of a fanned-out PDF (a page-range part,
  the join, a chunk slice or the commit): the step is requeued by the reconciler, not
  after the broker's 21-minute visibility timeout, and the document is stored exactly
  as a single-task ingest stores it.
- Redis SIGKILLed mid-run and started again on the same port and append-only file:
  every document ends ``done`` and the job finishes.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
import redis

from chunkweave import enqueue
from chunkweave.storage.identity import doc_id_for
from chunkweave.worker import keys
from chunkweave.worker.jobs import JobStore
from chunkweave.worker.local_redis import LocalRedis
from chunkweave.worker.ownership import owners, split_field
from tests.fixtures_services import ROOT, env_settings, wait_for, wait_job
from tests.standin_pipeline import FACTORY

pytestmark = pytest.mark.integration

#: Short ownership timings for tests (the defaults are 5 s / 15 s / 10 s / 30 s).
FAST = {
    "CHUNKWEAVE_HEARTBEAT_INTERVAL_S": "0.5",
    "CHUNKWEAVE_HEARTBEAT_TTL_S": "2",
    "CHUNKWEAVE_RECONCILE_INTERVAL_S": "0.5",
    "CHUNKWEAVE_RECONCILE_GRACE_S": "2",
    # Long enough that a wait on a dead task's lock would show in the bound.
    "CHUNKWEAVE_LOCK_TTL_S": "30",
    "CHUNKWEAVE_MAX_ATTEMPTS": "3",
}
T = TypeVar("T")
SMALL = ("word_sample.docx", "lorem_ipsum.docx", "multi_page.pdf")


def _worker_ids(r: redis.Redis, prefix: str) -> list[str]:
    return [w.decode() for w in r.zrange(keys.WORKERS, 0, -1) if w.decode().startswith(prefix)]


def _first_worker(r: redis.Redis, start: Callable[[], T]) -> tuple[T, str]:
    """Start the test's first worker; return what ``start`` returned and the worker's id.

    Workers of earlier tests on the same Redis (killed ones stay registered) are told
    apart by being there before.
    """
    before = set(_worker_ids(r, "w0-"))
    started = start()
    new = wait_for(
        lambda: [w for w in _worker_ids(r, "w0-") if w not in before],
        timeout_s=60,
        what="the first worker's heartbeat",
    )
    assert isinstance(new, list) and len(new) == 1, new
    return started, new[0]


@pytest.mark.slow
def test_worker_group_killed_mid_ingest_second_worker_finishes_everything(
    pipeline_env, pipeline_settings, corpus, tmp_path, workers, stored
):
    env = {**pipeline_env, **FAST}
    docs_dir = tmp_path / "docs"
    docs_dir.mkdir()
    paths = [
        Path(shutil.copy(corpus / name, docs_dir / f"{i}-{name}"))
        for i in range(2)
        for name in SMALL
    ]
    r = redis.Redis.from_url(env["CHUNKWEAVE_REDIS_URL"])
    jobs = JobStore(r, ttl_s=3600)
    doomed, w0 = _first_worker(r, lambda: workers.start(env, concurrency=2))  # killed below
    job_id = enqueue(docs_dir, settings=pipeline_settings)

    def held_by_w0() -> list[str]:
        running = jobs.doc_ids(job_id, "running")
        return [d for d, o in owners(r, job_id).items() if o.worker == w0 and d in running]

    victims = wait_for(held_by_w0, timeout_s=90, what="a document running on the first worker")
    os.killpg(doomed.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    doomed.wait(timeout=10)
    workers.start(env, concurrency=1)  # the survivor (its start-up counts in the bound)
    job = wait_job(jobs, job_id, workers, timeout_s=120)
    recovered_s = time.monotonic() - killed_at
    print(f"worker group killed: job finished {recovered_s:.1f}s after the kill")
    print("\n".join(ln for ln in workers.logs().splitlines() if "requeued" in ln or "broke" in ln))

    assert (job.status, job.done, job.failed) == ("done", len(paths), 0), job
    states = {d.doc_id: d for d in job.docs or ()}
    for path in paths:
        doc_id = doc_id_for(path)
        entry = stored.ledger.get(doc_id)
        assert entry is not None and entry.status == "ok", (path.name, entry)
        assert stored.store.count(doc_id) == entry.chunk_count > 0, path.name
    for doc_id in victims:  # requeued, and never waited on the dead task's lock
        assert states[doc_id].timings is not None
        assert states[doc_id].timings.get("lock", 0) < 5, states[doc_id]
    assert recovered_s < 90, recovered_s
    r.close()


def _half(step: str) -> str:
    return "" if not step else "parse" if step.startswith("part") else "write"


@pytest.mark.slow
@pytest.mark.parametrize("half", ["parse", "write"])
def test_worker_group_killed_holding_a_fan_out_step_the_step_is_requeued(
    half, pipeline_env, pipeline_settings, corpus, tmp_path, workers, stored, clean_pipeline
):
    env = {
        **pipeline_env,
        **FAST,
        "CHUNKWEAVE_FANOUT_PAGES": "4",
        "CHUNKWEAVE_FANOUT_PART_PAGES": "2",
        "CHUNKWEAVE_FANOUT_EMBED_CHUNKS": "8",
    }
    docs_dir = tmp_path / "docs"
    docs_dir.mkdir()
    path = Path(shutil.copy(corpus / "redp5110_sampled.pdf", docs_dir / "big.pdf"))  # 18 pages
    doc_id = doc_id_for(path)
    r = redis.Redis.from_url(env["CHUNKWEAVE_REDIS_URL"])
    jobs = JobStore(r, ttl_s=3600)
    doomed, w0 = _first_worker(r, lambda: workers.start(env, concurrency=1))  # killed below
    job_id = enqueue(path, settings=pipeline_settings)

    def step_held_by_w0() -> list[str]:
        held = owners(r, job_id).items()
        return [f for f, o in held if o.worker == w0 and _half(split_field(f)[1]) == half]

    # The write half (join, slices, commit) lasts about a second: poll fast, and freeze
    # the worker group the moment it is seen holding a step, then kill it.
    what = f"a step of the {half} half on the worker"
    (step, *_) = wait_for(step_held_by_w0, timeout_s=90, what=what, interval_s=0.01)
    os.killpg(doomed.pid, signal.SIGSTOP)
    os.killpg(doomed.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    doomed.wait(timeout=10)
    workers.start(env, concurrency=1)
    job = wait_job(jobs, job_id, workers, timeout_s=150)
    recovered_s = time.monotonic() - killed_at
    requeued = [ln for ln in workers.logs().splitlines() if "requeued" in ln]
    print(f"worker group killed holding {split_field(step)[1]}: done {recovered_s:.1f}s later")
    print("\n".join(requeued))

    assert (job.status, job.done, job.failed) == ("done", 1, 0), job
    assert any(f"({split_field(step)[1]})" in ln for ln in requeued), requeued
    entry = stored.ledger.get(doc_id)
    assert entry is not None and entry.status == "ok", entry
    assert stored.store.count(doc_id) == entry.chunk_count > 8  # sliced, nothing twice
    clean_pipeline.ingest(path, source=str(path), doc_id=doc_id)
    assert stored.store.doc_uuids(doc_id) == clean_pipeline.store.doc_uuids(doc_id)
    assert recovered_s < 120, recovered_s  # the visibility timeout would be 21 minutes
    assert not list(r.scan_iter(f"cw:fan:{doc_id}:*"))  # scratch cleaned up
    r.close()


class KillableRedis:
    """A persistent ``redis-server`` that a test can SIGKILL and start again in place."""

    def __init__(self, data_dir: Path) -> None:
        self.server = LocalRedis(data_dir, persist=True)

    @property
    def url(self) -> str:
        return self.server.url

    def kill(self) -> None:
        """SIGKILL the server (no shutdown, no final AOF write) and reap it."""
        proc = self.server._proc  # noqa: SLF001 - the test's own server
        assert proc is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        self.server._proc = None  # noqa: SLF001

    def start(self) -> None:
        """Start it (again) on the same port, password and append-only file."""
        self.server.start()


@pytest.fixture
def killable_redis(tmp_path: Path) -> Iterator[KillableRedis]:
    """A Redis of this test's own, with its append-only file, that may be killed."""
    server = KillableRedis(tmp_path / "redis")
    server.start()
    yield server
    server.server.stop()


def _standin_env(url: str, tmp_path: Path) -> dict[str, str]:
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
    env.update(
        {
            **FAST,
            "CHUNKWEAVE_REDIS_URL": url,
            "CHUNKWEAVE_QUEUE": queue,
            "CHUNKWEAVE_DATA_DIR": str(tmp_path / "data"),
            "CHUNKWEAVE_PIPELINE_FACTORY": FACTORY,
            "CHUNKWEAVE_TASK_SOFT_TIME_LIMIT_S": "20",
            "CHUNKWEAVE_TASK_HARD_TIME_LIMIT_S": "30",
            "CHUNKWEAVE_RETRY_BACKOFF_MAX_S": "1",
            "STANDIN_NS": queue,
            "STANDIN_DELAY_S": "1.5",
            "PYTHONPATH": str(ROOT),
        }
    )
    return env


@pytest.mark.slow
def test_redis_killed_mid_run_and_restarted_every_document_ends_ok(
    killable_redis, tmp_path, workers
):
    env = _standin_env(killable_redis.url, tmp_path)
    docs_dir = tmp_path / "in"
    docs_dir.mkdir()
    paths = []
    for i in range(8):
        path = docs_dir / f"doc{i}.pdf"
        path.write_bytes(f"%PDF-1.4 document {i}".encode())
        paths.append(path)
    workers.start(env, concurrency=2)
    settings = env_settings(env, data_dir=tmp_path)
    r = redis.Redis.from_url(killable_redis.url)
    wait_for(lambda: r.zcard(keys.WORKERS), timeout_s=60, what="the worker's heartbeat")
    job_id = enqueue(docs_dir, settings=settings)
    jobs = JobStore(r, ttl_s=3600)

    def two_running() -> bool:
        job = jobs.get(job_id)
        return job is not None and job.running >= 2 and job.done >= 1

    wait_for(two_running, timeout_s=60, what="documents in flight")
    time.sleep(1.2)  # let the append-only file (fsync every second) hold the job's state
    killable_redis.kill()
    time.sleep(2)
    killable_redis.start()
    restarted_at = time.monotonic()
    r = redis.Redis.from_url(killable_redis.url)
    jobs = JobStore(r, ttl_s=3600)
    assert jobs.get(job_id) is not None, "the job did not survive the restart (AOF)"
    job = wait_job(jobs, job_id, workers, timeout_s=120)
    recovered_s = time.monotonic() - restarted_at
    print(f"Redis killed and restarted: job finished {recovered_s:.1f}s after the restart")
    print(
        "\n".join(
            ln for ln in workers.logs().splitlines() if "requeued" in ln or "Redis restarted" in ln
        )
    )

    assert (job.status, job.done, job.failed) == ("done", len(paths), 0), job
    assert all(d.status == "done" for d in job.docs or ()), job.docs
    assert jobs.get(job_id) is not None and jobs.get(job_id).running == 0  # type: ignore[union-attr]
    assert recovered_s < 90, recovered_s
    r.close()

"""Pytest plugin: a real Redis and a real S3 server for the session, plus worker helpers.

- ``redis_url``: a ``redis-server`` started by ``chunkweave.worker.local_redis``
  (or the one in ``CHUNKWEAVE_TEST_REDIS_URL``).
- ``s3_server``: SeaweedFS ``weed mini`` started by ``tests.local_s3``.
- ``service_env``: environment for one test's service processes (unique queue, short
  time limits, its own data dir); tests add their own keys.
- ``workers``: starts real Celery worker processes (prefork pool) with that
  environment and stops them (SIGTERM, then SIGKILL) at the end of the test.
- ``pipeline_env`` / ``pipeline_settings``: ``service_env`` pointed at the test's
  Weaviate collections (``weaviate_cfg``), for workers running the real pipeline;
  ``stored``: the real pipeline in the test process on those collections, to
  check what the workers wrote; ``clean_pipeline``: the same pipeline on fresh
  collections, the reference run a test compares the workers' result with.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.config import server_env as weaviate_env
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.pipeline.conductor import Pipeline, open_pipeline
from chunkweave.worker.enqueue import Enqueuer
from chunkweave.worker.jobs import JobState, JobStore
from chunkweave.worker.local_redis import LocalRedis
from chunkweave.worker.settings import Settings
from tests.local_s3 import LocalS3

ROOT = Path(__file__).resolve().parents[1]
REDIS_ENV = "CHUNKWEAVE_TEST_REDIS_URL"


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a running real Redis for the whole session."""
    reuse = os.environ.get(REDIS_ENV)
    if reuse:
        yield reuse
        return
    with LocalRedis(tmp_path_factory.mktemp("redis"), persist=False) as server:
        yield server.url


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    """A client on the session Redis."""
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@dataclass(frozen=True)
class S3Server:
    """Where the test S3 server listens and its bucket."""

    endpoint_url: str
    bucket: str

    def env(self) -> dict[str, str]:
        """``CHUNKWEAVE_S3__*`` variables pointing at this server."""
        return {
            "CHUNKWEAVE_S3__ENDPOINT_URL": self.endpoint_url,
            "CHUNKWEAVE_S3__ACCESS_KEY_ID": "test",
            "CHUNKWEAVE_S3__SECRET_ACCESS_KEY": "test",
        }


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A real S3-compatible server (SeaweedFS) with one bucket."""
    with LocalS3(tmp_path_factory.mktemp("s3"), bucket="chunkweave-test") as server:
        yield S3Server(server.endpoint_url, server.bucket)


@pytest.fixture
def service_env(redis_url: str, tmp_path: Path) -> dict[str, str]:
    """Environment for this test's service processes: own queue, short limits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
    env.update(
        {
            "CHUNKWEAVE_REDIS_URL": redis_url,
            "CHUNKWEAVE_QUEUE": f"test-{uuid.uuid4().hex[:8]}",
            "CHUNKWEAVE_DATA_DIR": str(tmp_path / "data"),
            "CHUNKWEAVE_TASK_SOFT_TIME_LIMIT_S": "20",
            "CHUNKWEAVE_TASK_HARD_TIME_LIMIT_S": "30",
            "CHUNKWEAVE_LOCK_TTL_S": "3",
            "CHUNKWEAVE_MAX_ATTEMPTS": "2",
            "PYTHONPATH": str(ROOT),
        }
    )
    return env


@pytest.fixture
def service_enqueuer(service_env: dict[str, str]) -> Iterator[Enqueuer]:
    """An :class:`Enqueuer` on ``service_env``'s Redis and queue (no workers)."""
    enq = Enqueuer(
        Settings(
            redis_url=service_env["CHUNKWEAVE_REDIS_URL"],
            tasks={"queue": service_env["CHUNKWEAVE_QUEUE"]},
        )
    )
    yield enq
    enq.close()


class WorkerProcs:
    """Celery worker processes started for one test."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, env: dict[str, str], *, concurrency: int = 1) -> subprocess.Popen[bytes]:
        """Start one ``celery worker`` (prefork) consuming the test's queue."""
        log = self.log_dir / f"worker-{len(self.procs)}.log"
        args = [
            sys.executable, "-m", "celery", "-A", "chunkweave.worker.celery_app", "worker",
            "--pool", "prefork", "--concurrency", str(concurrency),
            "-Q", env["CHUNKWEAVE_QUEUE"], "--loglevel", "INFO",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
            "-n", f"w{len(self.procs)}-{uuid.uuid4().hex[:6]}@%h",
        ]  # fmt: skip
        with open(log, "wb") as fh:
            proc = subprocess.Popen(
                args, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        self.procs.append(proc)
        return proc

    def logs(self) -> str:
        """All worker logs so far (for assertion messages)."""
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.log_dir.glob("*.log")))

    def stop(self) -> None:
        """Warm-stop every worker (SIGTERM to its process group), SIGKILL stragglers."""
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[WorkerProcs]:
    """Starts real worker processes on demand; all are stopped after the test."""
    log_dir = tmp_path / "worker-logs"
    log_dir.mkdir()
    procs = WorkerProcs(log_dir)
    yield procs
    procs.stop()


def wait_for(
    predicate: Callable[[], object], *, timeout_s: float, what: str, interval_s: float = 0.1
) -> object:
    """Poll ``predicate`` until it returns a truthy value; fail the test after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s:.0f}s waiting for {what}")
        time.sleep(interval_s)


def wait_job(
    jobs: JobStore, job_id: str, workers: WorkerProcs, *, timeout_s: float = 60
) -> JobState:
    """Wait until the job is finished and return it with its documents.

    On a timeout the workers' log tail is printed before the test fails.
    """

    def finished() -> JobState | None:
        job = jobs.get(job_id, with_docs=True)
        return job if job is not None and job.finished_at is not None else None

    try:
        job = wait_for(finished, timeout_s=timeout_s, what=f"job {job_id}")
    except pytest.fail.Exception:
        print(workers.logs()[-6000:])
        raise
    assert isinstance(job, JobState)
    return job


def env_settings(env: dict[str, str], **extra: Any) -> Settings:
    """Settings for a producer in the test process matching the service environment ``env``.

    Its Redis, queue and data directory; ``extra`` adds or overrides settings.
    """
    base: dict[str, Any] = {
        "redis_url": env["CHUNKWEAVE_REDIS_URL"],
        "tasks": {"queue": env["CHUNKWEAVE_QUEUE"]},
        "data_dir": Path(env["CHUNKWEAVE_DATA_DIR"]),
    }
    return Settings(**{**base, **extra})


@pytest.fixture
def pipeline_env(service_env: dict[str, str], weaviate_cfg: WeaviateConfig) -> dict[str, str]:
    """``service_env`` for workers running the real pipeline on this test's collections."""
    service_env.update(
        {
            **weaviate_env(weaviate_cfg),
            "CHUNKWEAVE_WEAVIATE__COLLECTION": weaviate_cfg.collection,
            "CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION": weaviate_cfg.ledger_collection,
            # Real parsing and embedding on a shared 2-core machine: generous limits.
            "CHUNKWEAVE_TASK_SOFT_TIME_LIMIT_S": "120",
            "CHUNKWEAVE_TASK_HARD_TIME_LIMIT_S": "150",
        }
    )
    return service_env


@pytest.fixture
def pipeline_settings(pipeline_env: dict[str, str], weaviate_cfg: WeaviateConfig) -> Settings:
    """Settings matching ``pipeline_env`` for producers in the test process."""
    return env_settings(pipeline_env, weaviate=weaviate_cfg)


@pytest.fixture
def stored(pipeline_settings: Settings) -> Iterator[Pipeline]:
    """The real pipeline in this process, on the collections the workers write to."""
    s = pipeline_settings
    pipe = open_pipeline(s.weaviate, make_embedder(s.embedder), s.parse, s.chunking)
    yield pipe
    pipe.close()


def reference_config(settings: Settings) -> WeaviateConfig:
    """Return ``settings``' Weaviate config on the reference (``...Ref``) collections."""
    cfg = settings.weaviate
    update = {
        "collection": cfg.collection + "Ref",
        "ledger_collection": cfg.ledger_collection + "Ref",
    }
    return cfg.model_copy(update=update)


@pytest.fixture
def clean_pipeline(pipeline_settings: Settings) -> Iterator[Pipeline]:
    """The same pipeline on fresh collections: the reference "clean run"."""
    s = pipeline_settings
    pipe = open_pipeline(reference_config(s), make_embedder(s.embedder), s.parse, s.chunking)
    yield pipe
    pipe.store.close()

"""The store under faults (issue 37, items 3 and 4): real Redis, Weaviate and workers.

- Weaviate SIGKILLed while the workers upsert, and started again on its port and
  data directory: every document ends ``ok``, none fails, and the ledger's chunk
  count of each document equals the objects Weaviate holds for it (nothing lost,
  nothing duplicated).
- Weaviate gone while documents are queued: the worker leaves them retrying, none
  failed; once it is back every document is stored.
- The ledger never says ``failed`` for a document stored as it is, and a late
  (deferred) failure record does not overwrite a later ``ok``.
- A failure met while the store is down, and one recorded by the worker's parent (the
  hard time limit), still reach the ledger (through the deferred record task).
- An upload stored while the last release of the same file removes its folder (what
  made one of 24 parallel same-name uploads to ``serve`` fail 500).

Fast: the ``none`` embedder (no model), small DOCX files built here, short retry
bounds set for the test (the outage is covered by the Celery task retry, not only by
the store session's own retries).
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from docx import Document

from chunkweave import enqueue
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.config import EmbedderConfig, WeaviateConfig, server_env
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.pipeline.conductor import Pipeline, open_pipeline
from chunkweave.storage.weaviate.server.local import LocalWeaviate
from chunkweave.worker import keys, uploads
from chunkweave.worker.jobs import JobState, JobStore
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import Settings
from tests.fixtures_services import WorkerProcs, env_settings, wait_for, wait_job
from tests.standin_pipeline import FACTORY

pytestmark = pytest.mark.integration
DOCS = 8


def _docx(path: Path, n: int, paragraphs: int = 60) -> Path:
    doc = Document()
    doc.add_heading(f"Harbour log {n}", level=1)
    for p in range(paragraphs):
        if p % 6 == 0:
            doc.add_heading(f"Day {p // 6} of log {n}", level=2)
        doc.add_paragraph(f"Entry {p} of log {n}: three ferries, a seal and a gale. " * 6)
    doc.save(str(path))
    return path


def _corpus(folder: Path) -> list[Path]:
    folder.mkdir()
    return [_docx(folder / f"log-{n:02d}.docx", n) for n in range(DOCS)]


@pytest.fixture
def store_env(service_env: dict[str, str], own_weaviate: LocalWeaviate) -> dict[str, str]:
    """Workers on the test's own Weaviate; the outage is left to the task retry."""
    service_env.update(
        {
            **server_env(own_weaviate.config()),
            "CHUNKWEAVE_EMBEDDER__KIND": "none",
            # One quick retry inside the store session, then the Celery task retries.
            "CHUNKWEAVE_WEAVIATE__RETRIES": "1",
            "CHUNKWEAVE_TASK_MAX_RETRIES": "12",
            "CHUNKWEAVE_RETRY_BACKOFF_MAX_S": "5",
            "CHUNKWEAVE_TASK_SOFT_TIME_LIMIT_S": "120",
            "CHUNKWEAVE_TASK_HARD_TIME_LIMIT_S": "150",
        }
    )
    return service_env


@pytest.fixture
def store_settings(store_env: dict[str, str], own_weaviate: LocalWeaviate) -> Settings:
    """Settings matching ``store_env`` for the producer in the test process."""
    return env_settings(
        store_env,
        weaviate=own_weaviate.config(WeaviateConfig(retries=8)),
        embedder=EmbedderConfig(kind="none"),
    )


def _pipeline(settings: Settings) -> Pipeline:
    return open_pipeline(settings.weaviate, make_embedder(settings.embedder))


def _kill(server: LocalWeaviate) -> None:
    """SIGKILL the server's process group (no shutdown), then forget the dead process."""
    assert server.pid is not None
    os.killpg(server.pid, signal.SIGKILL)
    server.stop()  # reaps the dead process and releases the data directory


def _job(settings: Settings, job_id: str, workers: WorkerProcs, timeout_s: float) -> JobState:
    return wait_job(
        JobStore(redis_client(settings), ttl_s=3600), job_id, workers, timeout_s=timeout_s
    )


def _assert_stored_once(pipe: Pipeline, job: JobState) -> None:
    """Every document done and ``ok``; ledger counts equal Weaviate's objects, per document."""
    docs = job.docs or ()
    assert len(docs) == DOCS
    assert {d.status for d in docs} == {"done"}, [(d.source, d.error_code, d.error) for d in docs]
    total = 0
    for d in docs:
        entry = pipe.ledger.get(d.doc_id)
        assert entry is not None and entry.status == "ok", (d.source, entry)
        held = len(pipe.store.doc_uuids(d.doc_id))
        assert held == entry.chunk_count > 0, (d.source, held, entry.chunk_count)
        total += held
    assert pipe.store.count() == total  # no stray objects of any document


@pytest.fixture
def checker(store_settings: Settings) -> Iterator[list[Pipeline]]:
    """Pipelines opened by the test (closed at the end)."""
    opened: list[Pipeline] = []
    yield opened
    for pipe in opened:
        pipe.close()


def test_weaviate_killed_mid_upsert_and_restarted_loses_and_duplicates_nothing(
    store_env, store_settings, own_weaviate, workers, checker, tmp_path
):
    files = _corpus(tmp_path / "docs")
    workers.start(store_env, concurrency=2)
    job_id = enqueue(tmp_path / "docs", settings=store_settings)
    pipe = _pipeline(store_settings)  # the collections exist before the kill
    jobs = JobStore(redis_client(store_settings), ttl_s=3600)

    def writing() -> bool:  # one document stored: the next ones are being written
        job = jobs.get(job_id, with_docs=True)
        return job is not None and any(d.status == "done" for d in job.docs or ())

    pipe.close()
    wait_for(writing, timeout_s=120, what="the first document stored", interval_s=0.02)
    _kill(own_weaviate)
    time.sleep(3)  # down for the restart's time and these 3 s
    own_weaviate.start()
    back = time.monotonic()
    job = _job(store_settings, job_id, workers, timeout_s=180)
    recovered_s = time.monotonic() - back
    checker.append(pipe := _pipeline(store_settings))
    _assert_stored_once(pipe, job)
    assert {Path(d.source).name for d in job.docs or ()} == {f.name for f in files}
    assert recovered_s < 150


def test_worker_without_its_store_leaves_documents_retrying_not_failed(
    store_env, store_settings, own_weaviate, workers, checker, tmp_path
):
    _corpus(tmp_path / "docs")
    checker.append(_pipeline(store_settings))  # creates the collections while it is up
    workers.start(store_env, concurrency=2)
    time.sleep(2)  # the worker is up, with its store client
    own_weaviate.stop()
    job_id = enqueue(tmp_path / "docs", settings=store_settings)
    jobs = JobStore(redis_client(store_settings), ttl_s=3600)

    def retrying() -> bool:
        job = jobs.get(job_id, with_docs=True)
        stages = [d.stage or "" for d in (job.docs or ()) if job is not None]
        return any(s.startswith("waiting to retry") for s in stages)

    wait_for(retrying, timeout_s=60, what="a document waiting to retry", interval_s=0.2)
    time.sleep(8)
    job = jobs.get(job_id, with_docs=True)
    assert job is not None and job.finished_at is None
    assert not [d for d in job.docs or () if d.status == "failed"], workers.logs()[-3000:]

    own_weaviate.start()
    job = _job(store_settings, job_id, workers, timeout_s=180)
    checker.append(pipe := _pipeline(store_settings))
    _assert_stored_once(pipe, job)


def test_ledger_never_says_failed_for_a_stored_version(store_settings, checker, tmp_path):
    checker.append(pipe := _pipeline(store_settings))
    path = _docx(tmp_path / "one.docx", 1, paragraphs=6)
    stored = pipe.ingest(path)
    assert stored.status == "added", stored.error
    entry = pipe.ledger.get(stored.doc_id)
    assert entry is not None and entry.status == "ok"

    # A duplicate attempt at the same version failed (its staged file was gone).
    gone = ErrorCode.NOT_FOUND
    assert not pipe.record_failed(stored.doc_id, stored.source, gone, "x", sha1=entry.doc_sha1)
    # A late record of a failure older than the stored version.
    earlier = datetime.now(UTC) - timedelta(minutes=5)
    assert not pipe.record_failed(stored.doc_id, stored.source, gone, "x", since=earlier)
    assert pipe.ledger.get(stored.doc_id) == entry

    # Another version failed: that is recorded, with its code and reason.
    assert pipe.record_failed(stored.doc_id, stored.source, ErrorCode.CORRUPT, "bad", sha1="f" * 40)
    failed = pipe.ledger.get(stored.doc_id)
    assert failed is not None and (failed.status, failed.error_code) == ("failed", "corrupt")
    assert failed.error == "bad" and failed.chunk_count == entry.chunk_count


def test_failure_while_the_store_is_down_reaches_the_ledger_once_it_is_back(
    store_env, store_settings, own_weaviate, workers, checker, tmp_path
):
    store_env.update({"CHUNKWEAVE_TASK_MAX_RETRIES": "0", "CHUNKWEAVE_WEAVIATE__RETRIES": "0"})
    folder = tmp_path / "docs"
    folder.mkdir()
    path = _docx(folder / "late.docx", 1, paragraphs=6)
    checker.append(_pipeline(store_settings))
    workers.start(store_env)
    time.sleep(2)
    own_weaviate.stop()
    job_id = enqueue(path, settings=store_settings)
    job = _job(store_settings, job_id, workers, timeout_s=120)
    (doc,) = job.docs or ()
    assert (doc.status, doc.error_code) == ("failed", "store_unavailable"), doc.error

    own_weaviate.start()  # the deferred record lands once the store answers
    checker.append(pipe := _pipeline(store_settings))
    entry = wait_for(lambda: pipe.ledger.get(doc.doc_id), timeout_s=90, what="the ledger entry")
    assert entry.status == "failed" and entry.error_code == "store_unavailable", entry
    assert entry.error == doc.error


def test_hard_time_limit_is_recorded_in_the_ledger(service_env, workers, tmp_path):
    ns = f"faults-{time.monotonic_ns()}"
    service_env.update(
        {
            "CHUNKWEAVE_PIPELINE_FACTORY": FACTORY,
            "STANDIN_NS": ns,
            "CHUNKWEAVE_TASK_SOFT_TIME_LIMIT_S": "2",
            "CHUNKWEAVE_TASK_HARD_TIME_LIMIT_S": "3",
            "CHUNKWEAVE_RETRY_BACKOFF_MAX_S": "1",
        }
    )
    settings = env_settings(service_env)
    stuck = tmp_path / "stuck.pdf"
    stuck.write_bytes(b"%PDF-1.4 STUCK-IN-C")
    workers.start(service_env)
    job = _job(settings, enqueue(stuck, settings=settings), workers, timeout_s=90)
    (doc,) = job.docs or ()
    assert doc.error_code == "timeout" and "hard time limit" in (doc.error or ""), doc
    # Recorded by the worker's parent, which holds no store client: through the task.
    failed = f"cw:standin:{ns}:failed"
    r = redis_client(settings)
    recorded = wait_for(lambda: r.hget(failed, doc.doc_id), timeout_s=60, what="ledger record")
    assert isinstance(recorded, bytes) and recorded.decode().startswith("timeout: "), recorded


def test_an_upload_stored_while_the_last_release_removes_its_folder(redis_client, tmp_path):
    settings = Settings(redis_url="redis://unused", data_dir=tmp_path / "data")
    final = settings.upload_dir / ("a" * 40) / "handbook.docx"
    staged = tmp_path / "staged"
    staged.write_bytes(b"same bytes")
    # Another upload's release holds the file's lock and is about to remove its folder.
    lock = redis_client.lock(keys.upload_lock(str(final)), timeout=30)
    assert lock.acquire(blocking=False)
    saving = ThreadPoolExecutor(1).submit(
        uploads.save, staged, "a" * 40, "handbook.docx", settings, redis_client
    )
    time.sleep(0.5)  # the save waits on the lock
    shutil.rmtree(settings.upload_dir, ignore_errors=True)  # the release's rmdir
    lock.release()
    assert saving.result(timeout=30) == str(final)
    assert final.read_bytes() == b"same bytes"
    redis_client.hdel(keys.UPLOAD_HOLDS, str(final))

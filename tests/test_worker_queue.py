"""Queue mechanics against a real Redis with real prefork workers (stand-in pipeline).

Covers delivery guarantees independent of parsing: every document processed once,
duplicates harmless, kill -9 mid-document redelivered, poison documents bounded,
hanging documents stopped by the time limit, one writer per document, webhooks.
One worker (two prefork processes) serves the whole module, so each test also
shows the worker keeps serving after the previous test's crashes and timeouts.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis

from chunkweave.storage.identity import doc_id_for
from chunkweave.worker.enqueue import Enqueuer
from chunkweave.worker.settings import Settings
from tests.fixtures_services import ROOT, WorkerProcs, env_settings, wait_for, wait_job
from tests.standin_pipeline import FACTORY

pytestmark = pytest.mark.integration
_BACKOFF_MAX_S = 1


def _settings(env: dict[str, str]) -> Settings:
    return env_settings(env, webhook={"secret": env["CHUNKWEAVE_WEBHOOK_SECRET"]})


@pytest.fixture(scope="module")
def env(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One environment for the module's shared workers: stand-in pipeline, short limits."""
    queue = f"test-queue-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
    env.update(
        {
            "CHUNKWEAVE_REDIS_URL": redis_url,
            "CHUNKWEAVE_QUEUE": queue,
            "CHUNKWEAVE_DATA_DIR": str(tmp_path_factory.mktemp("queue-data")),
            "CHUNKWEAVE_PIPELINE_FACTORY": FACTORY,
            "CHUNKWEAVE_TASK_SOFT_TIME_LIMIT_S": "4",
            "CHUNKWEAVE_TASK_HARD_TIME_LIMIT_S": "6",
            "CHUNKWEAVE_LOCK_TTL_S": "3",
            "CHUNKWEAVE_MAX_ATTEMPTS": "2",
            # Retries come within a second, so "no further call" can be waited out.
            "CHUNKWEAVE_RETRY_BACKOFF_MAX_S": str(_BACKOFF_MAX_S),
            "CHUNKWEAVE_WEBHOOK_SECRET": "hook-key",
            # The receiver runs on loopback, which webhooks may reach only when allowed.
            "CHUNKWEAVE_WEBHOOK_ALLOW_HOSTS": '["127.0.0.1"]',
            "STANDIN_NS": queue,
            "PYTHONPATH": str(ROOT),
        }
    )
    return env


@pytest.fixture(scope="module")
def workers(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory):
    """Two prefork worker processes shared by the module's tests (started once)."""
    procs = WorkerProcs(tmp_path_factory.mktemp("queue-logs"))
    procs.start(env, concurrency=2)
    yield procs
    procs.stop()


@pytest.fixture(scope="module")
def enq(env: dict[str, str]):
    e = Enqueuer(_settings(env))
    yield e
    e.close()


def _docs(tmp_path: Path, n: int, tag: str = "") -> list[Path]:
    out = []
    for i in range(n):
        p = tmp_path / "in" / f"doc{i}{tag}.pdf"
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(f"%PDF-1.4 document {i} {tag}".encode())
        out.append(p)
    return out


def _writes(r: redis.Redis, env: dict[str, str], docs: list[Path]) -> dict[str, int]:
    """Writes the stand-in made, for these documents only (the namespace is shared)."""
    ids = [doc_id_for(d) for d in docs]
    values = r.hmget(f"cw:standin:{env['STANDIN_NS']}:writes", ids)
    return {i: int(v) for i, v in zip(ids, values, strict=True) if v is not None}


def test_every_document_once_and_duplicates_harmless(env, enq, workers, redis_client, tmp_path):
    docs = _docs(tmp_path, 4)
    # The same document twice in one job is one task; a second job re-delivers all.
    job1 = enq.submit([(str(d), "ingest") for d in docs + docs[:1]])
    job2 = enq.submit([(str(d), "ingest") for d in docs])
    first = wait_job(enq.jobs, job1, workers)
    second = wait_job(enq.jobs, job2, workers)
    assert (first.total, first.done, first.failed, first.status) == (4, 4, 0, "done")
    assert second.done == 4
    writes = _writes(redis_client, env, docs)
    assert len(writes) == 4 and set(writes.values()) == {1}, writes
    outcomes = sorted(d.outcome or "" for j in (first, second) for d in j.docs or ())
    assert outcomes.count("unchanged") == 4 and outcomes.count("added") == 4


def test_kill9_mid_document_is_redelivered_and_completes(env, enq, workers, redis_client, tmp_path):
    doc = tmp_path / "slow.pdf"
    doc.write_bytes(b"%PDF-1.4 DELAY=2.5")
    job_id = enq.submit([(str(doc), "ingest")])
    pid_key = f"cw:standin:{env['STANDIN_NS']}:pid"
    pid = wait_for(
        lambda: redis_client.hget(pid_key, doc_id_for(doc)), timeout_s=30, what="task start"
    )
    os.kill(int(pid), signal.SIGKILL)  # type: ignore[arg-type]
    job = wait_job(enq.jobs, job_id, workers)
    assert job.done == 1, job
    (state,) = job.docs or ()
    assert state.attempts == 2, state  # the killed run counted, then one clean run
    assert _writes(redis_client, env, [doc]) == {state.doc_id: 1}


def test_poison_document_fails_after_bounded_attempts(env, enq, workers, redis_client, tmp_path):
    poison = tmp_path / "poison.pdf"
    poison.write_bytes(b"%PDF-1.4 CRASH-ME")
    job_id = enq.submit([(str(poison), "ingest")])
    job = wait_job(enq.jobs, job_id, workers)
    (state,) = job.docs or ()
    assert (state.status, state.error_code) == ("failed", "poison"), state
    assert state.attempts == 3  # max_attempts=2 crashes, then given up without running
    assert "killed its worker process 2 times" in (state.error or "")
    # The worker keeps serving.
    (good,) = _docs(tmp_path, 1)
    assert wait_job(enq.jobs, enq.submit([(str(good), "ingest")]), workers).done == 1


def test_hanging_document_hits_time_limit_and_worker_keeps_serving(
    env, enq, workers, redis_client, tmp_path
):
    hang = tmp_path / "hang.pdf"
    hang.write_bytes(b"%PDF-1.4 HANG-ME")
    (good,) = _docs(tmp_path, 1)
    job_id = enq.submit([(str(hang), "ingest"), (str(good), "ingest")])
    job = wait_job(enq.jobs, job_id, workers, timeout_s=40)
    by_source = {Path(d.source).name: d for d in job.docs or ()}
    assert by_source["hang.pdf"].status == "failed"
    assert by_source["hang.pdf"].error_code == "timeout"
    assert by_source["doc0.pdf"].status == "done", by_source["doc0.pdf"]


def test_two_workers_same_document_write_once(env, enq, workers, redis_client, tmp_path):
    doc = tmp_path / "contended.pdf"
    doc.write_bytes(b"%PDF-1.4 DELAY=1.5")
    jobs = [enq.submit([(str(doc), "ingest")]) for _ in range(2)]
    results = [wait_job(enq.jobs, j, workers) for j in jobs]
    assert all(r.done == 1 for r in results)
    assert list(_writes(redis_client, env, [doc]).values()) == [1]
    outcomes = sorted(r.docs[0].outcome or "" for r in results if r.docs)
    assert outcomes == ["added", "unchanged"]


class _Receiver(http.server.BaseHTTPRequestHandler):
    calls: list[tuple[dict[str, str], bytes]] = []
    fail_first = 1

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).calls.append((dict(self.headers), body))
        failing = len(type(self).calls) <= type(self).fail_first
        self.send_response(500 if failing else 204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_completion_webhook_signed_and_retried(env, enq, workers, tmp_path):
    from chunkweave.worker.webhook import verify

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        job_id = enq.submit([(str(d), "ingest") for d in _docs(tmp_path, 2)], webhook_url=url)
        wait_for(lambda: len(_Receiver.calls) >= 2, timeout_s=60, what="webhook delivered")
    finally:
        server.shutdown()
    headers, body = _Receiver.calls[-1]
    payload = json.loads(body)
    assert payload["id"] == job_id and payload["status"] == "done" and payload["done"] == 2
    assert verify("hook-key", headers["X-Chunkweave-Timestamp"], body,
                  headers["X-Chunkweave-Signature"])  # fmt: skip
    assert not verify("other-key", headers["X-Chunkweave-Timestamp"], body,
                      headers["X-Chunkweave-Signature"])  # fmt: skip
    # One failure, one success, then nothing more: any further retry would have come
    # within the backoff bound (plus delivery time).
    time.sleep(_BACKOFF_MAX_S + 2)
    assert len(_Receiver.calls) == 2


def test_hang_ignoring_soft_limit_is_killed_by_hard_limit(env, enq, workers, tmp_path):
    stuck = tmp_path / "stuck.pdf"
    stuck.write_bytes(b"%PDF-1.4 STUCK-IN-C")
    (good,) = _docs(tmp_path, 1)
    job = wait_job(enq.jobs, enq.submit([(str(stuck), "ingest"), (str(good), "ingest")]), workers)
    by_source = {Path(d.source).name: d for d in job.docs or ()}
    assert by_source["stuck.pdf"].error_code == "timeout", by_source["stuck.pdf"]
    assert "hard time limit of 6s" in (by_source["stuck.pdf"].error or "")
    assert by_source["doc0.pdf"].status == "done"

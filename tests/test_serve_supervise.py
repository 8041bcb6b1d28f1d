"""``chunkweave serve`` supervises what it starts: kill a part, watch it come back.

One real ``serve`` (a subprocess, with its own embedded Redis and Weaviate and one
worker, restart backoff 2 s) for the module; each test kills one part and checks that
serve brings it back, ``/healthz`` goes red then green, and work goes on. The last
test stops serve with its Redis gone for good. Recovery seconds are printed (``-s``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docx
import httpx
import pytest
import redis
from weaviate.classes.query import Filter

from chunkweave.storage.server_process import free_port
from chunkweave.storage.weaviate.client import connect
from chunkweave.worker.discovery import discover
from chunkweave.worker.settings import Settings
from tests.fixtures_services import ROOT, wait_for

pytestmark = pytest.mark.integration
CLI = str(Path(sys.executable).parent / "chunkweave")
BACKOFF_S = 2.0


@dataclass
class Served:
    """The running ``serve`` and how to reach it."""

    proc: subprocess.Popen[bytes]
    api: str
    data: Path
    log: Path
    env: dict[str, str]

    def out(self) -> str:
        return self.log.read_text(errors="replace")

    def record(self, server: str) -> dict[str, object]:
        return dict(json.loads((self.data / server / "server.json").read_text()))

    def health(self) -> tuple[int, dict[str, object]]:
        try:
            resp = httpx.get(f"{self.api}/healthz", timeout=3)
        except httpx.HTTPError:
            return 0, {}
        return resp.status_code, resp.json()

    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(str(self.record("redis")["url"]), socket_timeout=2)

    def child(self, name: str) -> int:
        for child in _children(self.proc.pid):
            if name in Path(f"/proc/{child}/cmdline").read_text(errors="replace"):
                return child
        raise AssertionError(f"no {name} process under serve")

    def worker_pid(self) -> int:
        return self.child("celery")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _docx(path: Path, words: str) -> Path:
    document = docx.Document()
    document.add_heading(f"Notes on {words}", level=1)
    for i in range(3):
        document.add_paragraph(f"{words} paragraph {i}: " + "lorem ipsum dolor " * 20)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(str(path))
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("supervise")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
    env.update(
        {
            "CHUNKWEAVE_DATA_DIR": str(base / "data"),
            "CHUNKWEAVE_SUPERVISE__BACKOFF_S": str(BACKOFF_S),
            "CHUNKWEAVE_SUPERVISE__BACKOFF_MAX_S": "4",
            "CHUNKWEAVE_LOCK_TTL_S": "3",
            "PYTHONPATH": str(ROOT),
        }
    )
    port = free_port()
    log = base / "serve.log"
    (base / "inbox").mkdir()
    cmd = [CLI, "serve", "--workers", "1", "--api-port", str(port), "--watch", str(base / "inbox")]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
    it = Served(proc, f"http://127.0.0.1:{port}", base / "data", log, env)
    try:
        wait_for(lambda: it.health()[0] == 200, timeout_s=120, what="serve healthy")
        yield it
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _recovers(served: Served, part: str, killed_at: float) -> float:
    """Wait for ``/healthz`` to show ``part`` not ok (503), then all ok; return the seconds."""
    seen_red = False
    deadline = killed_at + 120
    while time.monotonic() < deadline:
        code, body = served.health()
        parts = body.get("parts", {})
        assert isinstance(parts, dict)
        if code == 0 or (code == 503 and parts.get(part, {}).get("status") != "ok"):
            seen_red = True  # 0: nothing answers (the API itself is down)
        elif code == 200 and seen_red:
            return time.monotonic() - killed_at
        time.sleep(0.1)
    pytest.fail(f"{part}: /healthz red seen {seen_red}, never green again:\n{served.out()[-3000:]}")


def _stored(served: Served, name: str) -> None:
    """Upload a new document through the API; assert it ends ``done`` with its chunks stored."""
    body = _docx(served.data.parent / "docs" / name, name.removesuffix(".docx")).read_bytes()
    resp = httpx.post(
        f"{served.api}/jobs",
        files=[("file", (name, body, "application/octet-stream"))],
        timeout=30,
    )
    assert resp.status_code == 202, resp.text
    job_id = resp.json()["job_id"]

    def finished() -> dict[str, object] | None:
        job = httpx.get(f"{served.api}/jobs/{job_id}", timeout=10).json()
        return job if job.get("finished_at") else None

    job = wait_for(finished, timeout_s=120, what=f"{name} processed", interval_s=0.5)
    assert isinstance(job, dict)
    (doc,) = job["docs"]
    assert doc["status"] == "done" and doc["chunks_added"] > 0, (doc, served.out()[-3000:])
    cfg = discover(Settings(data_dir=served.data), weaviate=True).settings.weaviate
    client = connect(cfg)
    try:
        where = Filter.by_property("doc_id").equal(doc["doc_id"])
        total = client.collections.get(cfg.collection).aggregate.over_all(
            filters=where, total_count=True
        )
        assert total.total_count == doc["chunks_added"], (total, doc)
    finally:
        client.close()


def test_a_killed_redis_is_restarted_and_work_goes_on(served: Served):
    killed_at = time.monotonic()
    os.kill(int(served.record("redis")["pid"]), signal.SIGKILL)
    seconds = _recovers(served, "redis", killed_at)
    print(f"\nredis SIGKILL -> /healthz green in {seconds:.1f} s")
    out = served.out()
    assert f"serve: redis exited (signal 9); restarting in {BACKOFF_S:g} s" in out, out[-3000:]
    wait_for(lambda: "serve: redis is back" in served.out(), timeout_s=5, what="the line")
    _stored(served, "after-redis.docx")
    # Open to anyone, so it names states only.
    code, body = served.health()
    text = json.dumps(body)
    assert code == 200 and str(served.data) not in text and "127.0.0.1" not in text
    assert body["parts"]["watcher"] == {"status": "ok"}
    assert str(served.redis().connection_pool.connection_kwargs["port"]) not in text


def test_a_killed_weaviate_is_restarted_and_work_goes_on(served: Served):
    killed_at = time.monotonic()
    os.kill(int(served.record("weaviate")["pid"]), signal.SIGKILL)
    seconds = _recovers(served, "weaviate", killed_at)
    print(f"\nweaviate SIGKILL -> /healthz green in {seconds:.1f} s")
    assert "serve: weaviate exited (signal 9)" in served.out()
    _stored(served, "after-weaviate.docx")


def test_a_killed_worker_is_restarted(served: Served):
    before = served.worker_pid()
    killed_at = time.monotonic()
    os.kill(before, signal.SIGKILL)
    seconds = _recovers(served, "worker", killed_at)
    print(f"\nworker SIGKILL -> /healthz green in {seconds:.1f} s")
    assert "serve: worker exited (signal 9)" in served.out()
    assert served.worker_pid() != before
    assert served.health()[1]["parts"]["worker"] == {"status": "ok", "alive": 1, "expected": 1}
    _stored(served, "after-worker.docx")


def test_a_killed_api_is_restarted(served: Served):
    killed_at = time.monotonic()
    os.kill(served.child("uvicorn"), signal.SIGKILL)
    seconds = _recovers(served, "api", killed_at)
    print(f"\napi SIGKILL -> /healthz green in {seconds:.1f} s")
    assert "serve: api exited (signal 9)" in served.out()


def test_status_says_unreachable_while_redis_does_not_answer(served: Served):
    pid = int(served.record("redis")["pid"])
    os.kill(pid, signal.SIGSTOP)  # alive (serve leaves it be) but answering nothing
    try:
        out = subprocess.run(
            [CLI, "status"], env=served.env, capture_output=True, text=True, timeout=60
        )
        wait_for(lambda: served.health()[0] == 503, timeout_s=10, what="/healthz red")
    finally:
        os.kill(pid, signal.SIGCONT)
    assert out.returncode == 1
    assert "Redis unreachable" in out.stderr and "is unreachable" in out.stderr, out.stderr
    assert "no Redis configured" not in out.stderr, out.stderr
    password = str(served.record("redis")["url"]).split("@")[0].rsplit(":", 1)[1]
    assert password not in out.stderr
    wait_for(lambda: served.health()[0] == 200, timeout_s=10, what="/healthz green")


def test_backfill_wait_rides_out_a_redis_restart(served: Served, tmp_path: Path):
    folder = tmp_path / "backfill"
    for i in range(2):
        _docx(folder / f"b{i}.docx", f"backfill {i}")
    worker = served.worker_pid()
    os.killpg(worker, signal.SIGSTOP)  # nothing in flight when Redis goes: only queued
    client = served.redis()
    try:
        backfill = subprocess.Popen(
            [CLI, "backfill", str(folder)],
            env=served.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: client.llen("chunkweave") >= 2, timeout_s=60, what="queued")
        time.sleep(1.5)  # the append-only file is written once a second
        os.kill(int(served.record("redis")["pid"]), signal.SIGKILL)
        time.sleep(BACKOFF_S + 1)
    finally:
        os.killpg(worker, signal.SIGCONT)
        client.close()
    out, err = backfill.communicate(timeout=180)
    assert backfill.returncode == 0, (out, err, served.out()[-3000:])
    assert "unreachable; retrying in" in err and "Redis is back after" in err, err
    assert "2 documents: 2 done, 0 failed" in out, out


def test_sigterm_with_redis_gone_stops_within_seconds(served: Served):
    port = int(str(served.record("redis")["url"]).rsplit(":", 1)[1].split("/")[0])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        os.kill(int(served.record("redis")["pid"]), signal.SIGKILL)
        # Take its port so that it cannot come back: Redis is gone for good.
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        wait_for(lambda: _bound(squatter, port), timeout_s=5, what="Redis's port taken")
        squatter.listen()
        wait_for(
            lambda: "serve: redis did not come back" in served.out(),
            timeout_s=30,
            what="a failed restart",
        )
        started = time.monotonic()
        os.kill(served.proc.pid, signal.SIGTERM)
        code = served.proc.wait(timeout=60)
        took = time.monotonic() - started
    out = served.out()
    steps = [ln for ln in out[out.find("received SIGTERM") :].splitlines() if ln[:1].isalpha()]
    print(f"\nSIGTERM with Redis gone -> serve exited in {took:.1f} s:", *steps, sep="\n  ")
    assert code == 0, out[-3000:]
    assert took < 10, out[-3000:]
    assert "the embedded Redis is already gone" in out, out[-3000:]
    assert "stopping the worker (up to 2 s)" in out, out[-3000:]


def _bound(sock: socket.socket, port: int) -> bool:
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        return False
    return True

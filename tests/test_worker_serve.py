"""``chunkweave serve``: embedded Redis, watched folder, API, real pipeline, clean Ctrl-C."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.server_process import free_port
from tests.fixtures_services import ROOT, wait_for

pytestmark = pytest.mark.integration


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        parent = frontier.pop()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                continue
            if ppid == parent and int(entry.name) not in found:
                found.add(int(entry.name))
                frontier.add(int(entry.name))
    return found


def _reap(proc: subprocess.Popen[bytes], children: set[int]) -> None:
    """Kill ``proc`` and what it started, if a failed test left them running."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=10)
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _nice(pid: int, tid: int | None = None) -> int:
    """Return the niceness of a process (its main thread) or of one of its threads."""
    stat = Path(f"/proc/{pid}/task/{tid or pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])  # field 19 of proc_pid_stat(5)


def test_serve_watch_folder_end_to_end_and_clean_shutdown(
    pipeline_env, stored: Pipeline, corpus: Path, tmp_path: Path
):
    env = dict(pipeline_env)
    del env["CHUNKWEAVE_REDIS_URL"]  # serve must start its own embedded redis-server
    env["CHUNKWEAVE_WATCH_SETTLE_S"] = "0.5"
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    port = free_port()
    log = tmp_path / "serve.log"
    cmd = [
        str(Path(sys.executable).parent / "chunkweave"), "serve", "--watch", str(inbox),
        "--workers", "1", "--api-port", str(port),
    ]  # fmt: skip
    with open(log, "wb") as fh:
        # Its own process group, as a terminal's foreground job has.
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
    api = f"http://127.0.0.1:{port}"
    children: set[int] = set()
    try:

        def healthy() -> bool:
            try:
                return httpx.get(f"{api}/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(healthy, timeout_s=90, what="serve API healthy", interval_s=0.5)
        assert "started embedded Redis" in log.read_text()

        # A second terminal, no CHUNKWEAVE_REDIS_URL: status and enqueue find serve's Redis.
        cli = str(Path(sys.executable).parent / "chunkweave")
        other = Path(shutil.copy(corpus / "lorem_ipsum.docx", tmp_path / "other.docx"))
        queued = subprocess.run(
            [cli, "enqueue", "--json", str(other)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert queued.returncode == 0, queued.stderr
        assert "using the running `chunkweave serve`'s embedded Redis" in queued.stderr
        job_id = json.loads(queued.stdout)["job_id"]
        shown = subprocess.run(
            [cli, "status", "--json", job_id],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["id"] == job_id

        doc = Path(shutil.copy(corpus / "lorem_ipsum.docx", inbox / "lorem.docx"))
        doc_id = doc_id_for(doc)
        wait_for(lambda: stored.store.count(doc_id) > 0, timeout_s=120, what="watched file stored")
        done = httpx.get(f"{api}/jobs", params={"status": "done"}, timeout=5).json()["jobs"]
        assert any(j["done"] == 1 for j in done), done

        doc.unlink()
        wait_for(lambda: stored.store.count(doc_id) == 0, timeout_s=60, what="removed file gone")

        children = _descendants(proc.pid)
        assert children, "serve started no child processes"
        # The watcher thread (and the observer threads it started) sends at the
        # producer's lower priority; serve's main thread and its children do not.
        base = os.getpriority(os.PRIO_PROCESS, 0)
        threads = {
            int(t.name): _nice(proc.pid, int(t.name))
            for t in Path(f"/proc/{proc.pid}/task").iterdir()
        }
        assert threads[proc.pid] == base, threads
        assert set(threads.values()) == {base, min(19, base + 10)}, threads
        assert {_nice(c) for c in children if _alive(c)} == {base}
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole group
        assert proc.wait(timeout=90) == 0, log.read_text()[-3000:]
        deadline = time.monotonic() + 10
        while (left := {p for p in children if _alive(p)}) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"processes left after shutdown: {left}"
        out = log.read_text()
        assert "Cannot connect to redis" not in out and "Connection refused" not in out, out
        steps = [
            "stopping the watcher",
            "stopping the api",
            "stopping the worker",
            "stopping the embedded Redis",  # (Weaviate is the test's own here)
        ]
        at = [out.find(step) for step in steps]
        assert -1 not in at and at == sorted(at), out[-3000:]
    finally:
        _reap(proc, children)


def test_serve_killed_hard_leaves_no_process_behind(pipeline_env, tmp_path: Path):
    env = dict(pipeline_env)
    del env["CHUNKWEAVE_REDIS_URL"]
    port = free_port()
    log = tmp_path / "serve.log"
    cmd = [
        str(Path(sys.executable).parent / "chunkweave"), "serve",
        "--workers", "1", "--api-port", str(port),
    ]  # fmt: skip
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
    children: set[int] = set()
    try:
        wait_for(
            lambda: " ready." in log.read_text(errors="replace"),
            timeout_s=90,
            what="serve's worker ready",
            interval_s=0.5,
        )
        children = _descendants(proc.pid)
        assert len(children) >= 3, children  # redis-server, API, worker (and its pool)
        proc.kill()  # no chance to stop anything in order
        proc.wait(timeout=10)
        deadline = time.monotonic() + 60
        while (left := {p for p in children if _alive(p)}) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"processes left after serve was killed: {left}"
    finally:
        _reap(proc, children)


def test_local_redis_that_cannot_bind_fails_fast_with_its_log(tmp_path):
    import socket

    from chunkweave.storage.server_process import LocalServiceError
    from chunkweave.worker.local_redis import LocalRedis

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(LocalServiceError, match=rf"redis-server on port {port} exited"):
            LocalRedis(tmp_path / "r", port=port, persist=False, start_timeout_s=30).start()
        assert time.monotonic() - started < 15  # the exit is noticed, not the timeout

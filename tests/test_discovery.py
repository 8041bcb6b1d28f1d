"""One discovery of the running service: commands, ``enqueue()``, MCP and ``/ui`` beside ``serve``.

A real ``chunkweave serve`` (embedded Redis and Weaviate, one worker, the API) runs
in a subprocess on a temporary data directory; every other process gets that data
directory and no URL at all, and must find both servers, with their keys, and say so
in one line. Without a service, or with one recorded but dead, the errors say which.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest

from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.server_process import free_port
from tests.fixtures_services import ROOT, wait_for

pytestmark = pytest.mark.integration

CLI = str(Path(sys.executable).parent / "chunkweave")
FOUND = "using the running `chunkweave serve`'s embedded Redis (redis://127.0.0.1:"
FOUND_WEAVIATE = "and Weaviate (http://127.0.0.1:"


def _bare_env(data_dir: Path) -> dict[str, str]:
    """This process's environment without any CHUNKWEAVE_ setting but the data directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
    env.update({"CHUNKWEAVE_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)})
    return env


@dataclass
class Served:
    env: dict[str, str]
    data_dir: Path
    api: str
    log: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A ``chunkweave serve`` with its embedded Redis and Weaviate, for the module."""
    base = tmp_path_factory.mktemp("served")
    data_dir = base / "data"
    env = _bare_env(data_dir)
    env["CHUNKWEAVE_QUEUE"] = f"test-{uuid.uuid4().hex[:8]}"  # serve's and ours alike
    port = free_port()
    log = base / "serve.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [CLI, "serve", "--workers", "1", "--api-port", str(port)],
            cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        wait_for(
            lambda: " ready." in log.read_text(errors="replace"),
            timeout_s=180,
            what=f"serve's worker ready ({log})",
            interval_s=0.5,
        )
        yield Served(env, data_dir, f"http://127.0.0.1:{port}", log)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def _run(args: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, **kw
    )


def test_commands_and_enqueue_beside_serve_find_its_redis_and_weaviate(
    served: Served, corpus: Path, tmp_path: Path
):
    env = served.env
    assert "CHUNKWEAVE_REDIS_URL" not in env and "CHUNKWEAVE_WEAVIATE__URL" not in env

    for flags in (["--dry-run"], ["--list"]):
        out = _run([CLI, "reindex", *flags], env)
        assert out.returncode == 0, out.stderr
        assert FOUND in out.stderr and FOUND_WEAVIATE in out.stderr, out.stderr
        assert len([ln for ln in out.stderr.splitlines() if "using the running" in ln]) == 1
    rolled = _run([CLI, "reindex", "--rollback"], env)  # nothing to roll back to, yet
    assert FOUND_WEAVIATE in rolled.stderr
    assert "no Weaviate" not in rolled.stderr and "no Redis" not in rolled.stderr, rolled.stderr

    # The Python API in another process: no URL anywhere, one INFO line says where it went.
    doc = Path(shutil.copy(corpus / "lorem_ipsum.docx", tmp_path / "lorem.docx"))
    script = (
        "import logging, sys\n"
        "logging.basicConfig(level=logging.INFO, stream=sys.stderr)\n"
        "from chunkweave import enqueue\n"
        f"print(enqueue({str(doc)!r}))\n"
    )
    queued = _run([sys.executable, "-c", script], env)
    assert queued.returncode == 0, queued.stderr
    assert FOUND in queued.stderr, queued.stderr
    job_id = queued.stdout.strip()

    def job() -> dict:
        shown = _run([CLI, "status", "--json", job_id], env)
        assert shown.returncode == 0, shown.stderr
        assert FOUND in shown.stderr
        return dict(json.loads(shown.stdout))

    # serve's worker stored it in serve's Weaviate: the job ends done.
    wait_for(lambda: job()["status"] == "done", timeout_s=120, what="job done")

    # `chunkweave api` beside it: its /ui lists the job and inspects the stored document.
    port = free_port()
    api = subprocess.Popen(
        [CLI, "api", "--port", str(port)], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"

        def up() -> bool:
            with contextlib.suppress(httpx.HTTPError):
                return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
            return False

        wait_for(up, timeout_s=60, what="api up")
        assert job_id in httpx.get(f"{base}/ui", timeout=10).text
        page = httpx.get(f"{base}/ui/inspect", params={"doc_id": doc_id_for(doc)}, timeout=60)
        assert page.status_code == 200, page.text[:500]
        assert "Lorem" in page.text or "lorem" in page.text
    finally:
        os.killpg(api.pid, signal.SIGTERM)
        out = api.communicate(timeout=30)[0].decode(errors="replace")
    assert FOUND in out and FOUND_WEAVIATE in out, out


def test_mcp_beside_serve_lists_and_reads_its_jobs(served: Served, corpus: Path, tmp_path: Path):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    doc = Path(shutil.copy(corpus / "lorem_ipsum.docx", tmp_path / "mcp.docx"))
    queued = _run([CLI, "enqueue", "--json", str(doc)], served.env)
    assert queued.returncode == 0, queued.stderr
    job_id = json.loads(queued.stdout)["job_id"]

    async def session() -> None:
        params = StdioServerParameters(command=CLI, args=["mcp"], env=served.env, cwd=str(ROOT))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            listed = await s.call_tool("list_jobs", {})
            assert not listed.is_error, listed.content
            assert job_id in json.dumps(listed.structured_content)
            one = await s.call_tool("job_status", {"job_id": job_id})
            assert not one.is_error, one.content
            assert one.structured_content is not None
            assert one.structured_content["id"] == job_id

    anyio.run(session)


def test_worker_beside_serve_takes_serves_redis_not_amqp(served: Served):
    queue = f"side-{uuid.uuid4().hex[:8]}"  # its own queue: it takes nothing from serve's
    log = served.log.parent / f"{queue}.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [CLI, "worker", "-c", "1", "-Q", queue], cwd=ROOT, env=served.env,
            stdout=fh, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        wait_for(
            lambda: " ready." in log.read_text(errors="replace") or proc.poll() is not None,
            timeout_s=120,
            what="side worker ready",
            interval_s=0.5,
        )
        out = log.read_text(errors="replace")
        assert proc.poll() is None, out
        assert FOUND in out and FOUND_WEAVIATE in out, out
        assert "Connected to redis://" in out and "amqp://" not in out, out
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)


def test_the_serve_hint_only_when_none_runs_and_unreachable_when_it_died(tmp_path: Path):
    data_dir = tmp_path / "data"
    env = _bare_env(data_dir)
    none = _run([CLI, "status"], env)
    assert none.returncode == 1
    assert "no Redis configured" in none.stderr and "run `chunkweave serve`" in none.stderr
    assert f"none runs on {data_dir}" in none.stderr, none.stderr
    no_weaviate = _run([CLI, "reindex", "--dry-run"], env)
    assert no_weaviate.returncode == 1
    assert "no Weaviate configured" in no_weaviate.stderr, no_weaviate.stderr
    assert "run `chunkweave serve`" in no_weaviate.stderr

    # Records a `serve` killed with SIGKILL leaves behind: its servers are gone.
    dead_redis, dead_weaviate = free_port(), free_port()
    (data_dir / "redis").mkdir(parents=True)
    (data_dir / "redis" / "server.json").write_text(
        json.dumps({"url": f"redis://:secret@127.0.0.1:{dead_redis}/0", "pid": 1})
    )
    (data_dir / "weaviate").mkdir()
    ports = {"http": dead_weaviate, "grpc": 1, "gossip": 2, "raft": 4, "profiling": 6}
    (data_dir / "weaviate" / "server.json").write_text(json.dumps({"api_key": "k", **ports}))
    for args, name in ((["status"], "Redis"), (["reindex", "--dry-run"], "Weaviate")):
        dead = _run([CLI, *args], env)
        assert dead.returncode == 1
        assert f"the embedded {name}" in dead.stderr and "is unreachable" in dead.stderr
        assert "run `chunkweave serve`" not in dead.stderr, dead.stderr
        assert "secret" not in dead.stderr  # the recorded password is never printed
    assert str(dead_redis) in _run([CLI, "status"], env).stderr


def test_worker_refuses_to_start_without_a_weaviate(redis_url: str, tmp_path: Path):
    env = _bare_env(tmp_path / "data")
    env["CHUNKWEAVE_REDIS_URL"] = redis_url
    env["CHUNKWEAVE_QUEUE"] = f"test-{uuid.uuid4().hex[:8]}"
    out = _run([CLI, "worker", "-c", "1"], env)
    assert out.returncode == 1
    assert "no Weaviate configured" in out.stderr and "ready" not in out.stderr, out.stderr


def test_a_configured_redis_that_is_down_is_said_unreachable(tmp_path: Path):
    env = _bare_env(tmp_path / "data")
    env["CHUNKWEAVE_REDIS_URL"] = f"redis://:pw@127.0.0.1:{free_port()}/0"
    out = _run([CLI, "status"], env)
    assert out.returncode == 1
    assert out.stderr.startswith("error: Redis unreachable:"), out.stderr
    assert "pw@" not in out.stderr and "run `chunkweave serve`" not in out.stderr

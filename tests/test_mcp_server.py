"""``chunkweave mcp`` driven by the MCP SDK's own stdio client, on real Redis and Weaviate.

A corpus PDF is ingested by the real pipeline into this test's collections; the
client starts the server as a subprocess, lists its tools, searches (with
filters), reads the ledger, queues a document under the allowed root and reads
its job, and is refused every source outside the root, a symlink out of it and
out-of-bounds arguments.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from chunkweave.storage.pipeline.conductor import Pipeline
from tests.fixtures_services import ROOT

pytestmark = pytest.mark.integration

PDF = "2305.03393v1-pg9.pdf"
TOOLS = {"search", "enqueue", "job_status", "list_jobs", "list_documents"}


def _result(res: Any) -> Any:
    assert not res.is_error, res.content
    if res.structured_content is not None:
        return res.structured_content
    return json.loads(res.content[0].text)


def _error(res: Any) -> str:
    assert res.is_error, res
    return " ".join(getattr(c, "text", "") for c in res.content)


async def _session_run(env: dict[str, str], root: Path, outside: Path, source: Path) -> None:
    cli = str(Path(sys.executable).parent / "chunkweave")
    params = StdioServerParameters(command=cli, args=["mcp"], env=env, cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        search_tool = next(t for t in listed.tools if t.name == "search")
        assert {"query", "k", "doc_id", "type", "page"} <= set(
            search_tool.input_schema["properties"]
        )

        hits = _result(await session.call_tool("search", {"query": "TED score inference"}))["hits"]
        assert hits and all(h["source"] == str(source) for h in hits)
        assert any("TED" in h["text"] for h in hits)
        tables = _result(
            await session.call_tool("search", {"query": "OTSL HTML", "type": "table", "k": 10})
        )["hits"]
        assert tables and {h["type"] for h in tables} == {"table"}
        assert all(h["regions"] for h in tables)
        none = _result(
            await session.call_tool("search", {"query": "TED", "source": "/elsewhere.pdf"})
        )["hits"]
        assert none == []
        assert "k must be" in _error(
            await session.call_tool("search", {"query": "TED", "k": 100000})
        )

        docs = _result(await session.call_tool("list_documents", {}))
        assert docs["total"] == 1
        assert docs["documents"][0]["source"] == str(source)
        assert docs["documents"][0]["chunk_count"] > 0

        # Confinement: the same refusals as POST /jobs, and no job is made for them.
        def job_ids(listed: Any) -> list[str]:
            return [j["id"] for j in listed["jobs"]]

        before = job_ids(_result(await session.call_tool("list_jobs", {"limit": 50})))
        stray = outside / PDF
        # Each refusal says which check failed (the agent works under the operator's roots).
        (root / "notes").mkdir()
        (root / "notes" / "notes.txt").write_text("not a document")
        for bad, why in (
            (str(stray), "not under an allowed root"),
            (str(root / ".." / "outside" / PDF), "not under an allowed root"),
            (str(root / "link.pdf"), "a link that leads outside the allowed roots"),
            (str(root / "missing.pdf"), "no such file or folder (it is under an allowed root)"),
            (PDF, "must be absolute paths"),
            (str(root / "notes"), "no PDF or DOCX document there"),
            ("s3://elsewhere/a.pdf", "bucket 'elsewhere' is not allowed"),
        ):
            message = _error(await session.call_tool("enqueue", {"sources": [bad]}))
            assert why in message, (bad, message)
        assert _error(await session.call_tool("enqueue", {"sources": []}))
        after = job_ids(_result(await session.call_tool("list_jobs", {"limit": 50})))
        # (Other tests may add jobs meanwhile: none of the new ones holds a refused path.)
        for new_id in set(after) - set(before):
            state = _result(await session.call_tool("job_status", {"job_id": new_id}))
            assert not {d["source"] for d in state["docs"]} & {str(stray), str(root / "link.pdf")}

        queued = _result(await session.call_tool("enqueue", {"sources": [str(source)]}))
        assert queued["documents"] == 1
        job = _result(await session.call_tool("job_status", {"job_id": queued["job_id"]}))
        assert job["id"] == queued["job_id"] and job["total"] == 1
        assert [d["source"] for d in job["docs"]] == [str(source)]
        assert "not found" in _error(
            await session.call_tool("job_status", {"job_id": "no-such-job"})
        )
        newest = job_ids(_result(await session.call_tool("list_jobs", {"limit": 50})))
        assert queued["job_id"] in newest


def test_mcp_client_searches_enqueues_and_is_refused_outside_the_roots(
    pipeline_env: dict[str, str], stored: Pipeline, corpus: Path, tmp_path: Path
) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    source = Path(shutil.copy(corpus / PDF, root / PDF))
    shutil.copy(corpus / PDF, outside / PDF)
    (root / "link.pdf").symlink_to(outside / PDF)
    outcome = stored.ingest(source, source=str(source))
    assert outcome.chunks_added > 0
    env = dict(pipeline_env, CHUNKWEAVE_SOURCES__ROOTS=json.dumps([str(root)]))
    anyio.run(_session_run, env, root, outside, source)


def test_mcp_says_how_to_install_the_sdk_when_it_is_missing(tmp_path: Path) -> None:
    import subprocess

    # An import hook that hides the SDK: the command must name the extra to install.
    hide = tmp_path / "sitecustomize.py"
    hide.write_text(
        "import importlib.abc, sys\n"
        "class _Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mcp' or name.startswith('mcp.'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, _Hide())\n"
    )
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", "from chunkweave.worker.cli import main; main()", "mcp"],
        env=env, capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert out.returncode != 0
    assert "pip install 'chunkweave[mcp]'" in out.stderr


async def _unreachable_run(env: dict[str, str], errlog: Any) -> None:
    cli = str(Path(sys.executable).parent / "chunkweave")
    params = StdioServerParameters(command=cli, args=["mcp"], env=env, cwd=str(ROOT))
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for tool, args in (("list_jobs", {}), ("job_status", {"job_id": "x"})):
            message = _error(await session.call_tool(tool, args))
            assert "Error executing tool" in message and "ConnectionError" in message, message
            assert "Connection refused" in message or "connecting to" in message, message


def test_mcp_failures_are_tool_errors_with_the_reason_and_no_traceback(
    pipeline_env: dict[str, str], tmp_path: Path
) -> None:
    from chunkweave.storage.server_process import free_port

    env = dict(pipeline_env, CHUNKWEAVE_REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    log = tmp_path / "stderr.log"
    with open(log, "w") as errlog:
        anyio.run(_unreachable_run, env, errlog)
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


def test_mcp_refuses_a_tenant_weaviate_would_not_accept(tmp_path: Path) -> None:
    import subprocess

    cli = str(Path(sys.executable).parent / "chunkweave")
    env = {"PATH": "/usr/bin:/bin", "CHUNKWEAVE_DATA_DIR": str(tmp_path)}
    out = subprocess.run(
        [cli, "mcp", "--tenant", "../acme"], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2, out.stderr
    assert "--tenant" in out.stderr and "A-Z a-z 0-9 _ -" in out.stderr

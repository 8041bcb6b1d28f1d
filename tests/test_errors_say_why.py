"""What the service shows says which and why: doc ids in ``docs``, file names in ``/ui``,
reindex counters that survive a resume. Against the real Redis, Weaviate and workers.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from chunkweave import enqueue
from chunkweave.chunking.models import ChunkOptions
from chunkweave.storage.config import WeaviateConfig, server_env
from chunkweave.storage.identity import doc_id_for
from chunkweave.worker import reindex as rx
from chunkweave.worker.api import create_app
from chunkweave.worker.jobs import JobStore
from chunkweave.worker.reindex.state import ReindexState, resumed
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import Settings, SourcesConfig
from tests.fixtures_services import ROOT, WorkerProcs, env_settings, wait_for

CLI = str(Path(sys.executable).parent / "chunkweave")


@pytest.mark.integration
def test_docs_shows_each_documents_doc_id(
    tmp_path: Path, corpus: Path, weaviate_cfg: WeaviateConfig
):
    doc = Path(shutil.copy(corpus / "lorem_ipsum.docx", tmp_path / "lorem.docx"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
    env.update(server_env(weaviate_cfg), PYTHONPATH=str(ROOT), CHUNKWEAVE_EMBEDDER__KIND="none")
    env["CHUNKWEAVE_WEAVIATE__COLLECTION"] = weaviate_cfg.collection
    env["CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION"] = weaviate_cfg.ledger_collection
    run = {"cwd": ROOT, "env": env, "capture_output": True, "text": True, "timeout": 300}
    ingested = subprocess.run([CLI, "ingest", str(doc)], **run)  # type: ignore[call-overload]
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    listed = subprocess.run([CLI, "docs"], **run)  # type: ignore[call-overload]
    assert listed.returncode == 0, listed.stderr
    # One entry line; the parser's warnings follow it, indented (this DOCX has no
    # page-break markers: page numbers are unknown).
    (line, *warnings) = listed.stdout.splitlines()
    assert doc_id_for(doc) in line.split() and str(doc) in line.split(), line
    assert all(w.startswith("        warning: ") for w in warnings), warnings


@pytest.mark.integration
def test_ui_job_list_names_jobs_by_their_files(service_env: dict[str, str], tmp_path: Path):
    settings = env_settings(service_env, sources=SourcesConfig(roots=(tmp_path,)))
    folder = tmp_path / "reports"
    folder.mkdir()
    for i in range(5):
        (folder / f"q{i}-report.pdf").write_bytes(b"%%PDF %d" % i)
    with TestClient(create_app(settings)) as client:
        one = client.post("/jobs", json={"sources": [str(folder / "q0-report.pdf")]}).json()
        many = client.post("/jobs", json={"sources": [str(folder)]}).json()
        page = client.get("/ui").text
    assert "q0-report.pdf</a>" in page and one["job_id"] in page
    # A bigger job: a few of its names, and how many more.
    assert re.search(r">q\d-report\.pdf, q\d-report\.pdf, q\d-report\.pdf \+2 more<", page)
    assert many["job_id"] in page


def test_a_resumed_reindex_keeps_its_counters():
    ended = ReindexState(
        alias="Chunk", target="Chunk_v2", live="Chunk_v1", phase="incomplete",
        job_ids=("j1",), total=4, done=3, failed=1, reused=40, embedded=12,
        message="1 documents failed",
    )  # fmt: skip
    again = resumed(ended, "Chunk_v2")
    assert again is not None and again.phase == "building" and again.message == "resumed"
    assert (again.done, again.total, again.reused, again.embedded) == (3, 4, 40, 12)
    assert again.job_ids == ()  # the ended run's failures are sent again, not waited on
    running = ended.model_copy(update={"phase": "building"})
    assert resumed(running, "Chunk_v2").job_ids == ("j1",)  # type: ignore[union-attr]
    assert resumed(ended, "Chunk_v3") is None and resumed(None, "Chunk_v2") is None


@pytest.mark.integration
def test_reindex_counters_survive_a_resume_after_an_incomplete_end(
    corpus: Path,
    tmp_path: Path,
    pipeline_env: dict[str, str],
    pipeline_settings: Settings,
    workers: WorkerProcs,
):
    settings = pipeline_settings
    folder = tmp_path / "docs"
    folder.mkdir()
    names = ("word_sample.docx", "handbook-1p.docx", "lorem_ipsum.docx")
    for name in names:
        shutil.copy(corpus / name, folder / name)
    workers.start(pipeline_env, concurrency=1)
    jobs = JobStore(redis_client(settings), ttl_s=3600)
    job_id = enqueue(str(folder), settings=settings)
    wait_for(
        lambda: (j := jobs.get(job_id)) is not None and j.finished_at is not None,
        timeout_s=240,
        what="ingest",
    )
    gone = folder / names[0]
    kept = gone.read_bytes()
    gone.unlink()  # its source is gone: the reindex ends incomplete

    def drive() -> rx.ReindexState:
        deadline = time.monotonic() + 300
        state = rx.load_state(redis_client(settings), settings.weaviate.collection)
        while state is not None and state.phase not in rx.FINAL:
            assert time.monotonic() < deadline, state.line()
            state = rx.advance(settings, settle_s=2.0, stall_s=60)
            time.sleep(0.3)
        assert state is not None
        return state

    spec = rx.SpecFactory(settings, chunking=ChunkOptions(strategy="fixed", max_tokens=128))
    rx.start(settings, spec)
    first = drive()
    assert first.phase == "incomplete" and first.done == 2, first
    assert first.reused + first.embedded > 0
    gone.write_bytes(kept)  # fixed: the same reindex again takes up where it ended
    again = rx.start(settings, spec)
    assert again.message == "resumed", again
    assert (again.done, again.reused, again.embedded) == (first.done, first.reused, first.embedded)
    last = drive()
    assert last.phase == "done", last
    assert last.done == 3 and last.reused + last.embedded > first.reused + first.embedded

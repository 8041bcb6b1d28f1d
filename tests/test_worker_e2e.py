"""End to end: real Redis, real Weaviate, real workers running the real pipeline.

Every document enqueued (from Python, the CLI and HTTP; repeatedly) ends up in
Weaviate exactly once: per-document chunk UUIDs equal those of a clean in-process
run of the same pipeline. A worker killed with SIGKILL mid-document has the task
redelivered and the final state equals the clean run's.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from chunkweave import enqueue
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.worker.api import create_app
from chunkweave.worker.jobs import JobStore
from chunkweave.worker.settings import Settings, SourcesConfig
from tests.fixtures_services import ROOT, wait_for, wait_job

pytestmark = pytest.mark.integration
SMALL = ("multi_page.pdf", "word_sample.docx", "lorem_ipsum.docx")


def _copy(corpus: Path, dest: Path, names: tuple[str, ...]) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy(corpus / n, dest / n)) for n in names]


def _assert_matches_clean_run(paths: list[Path], store: Pipeline, clean: Pipeline) -> None:
    for path in paths:
        doc_id = doc_id_for(path)
        clean.ingest(path, source=str(path), doc_id=doc_id)
        expected = clean.store.doc_uuids(doc_id)
        assert expected, f"clean run stored nothing for {path.name}"
        assert store.store.doc_uuids(doc_id) == expected, path.name
    assert store.store.count() == clean.store.count()


def test_enqueue_python_cli_http_exactly_once(
    pipeline_env, pipeline_settings, corpus, tmp_path, workers, stored, clean_pipeline
):
    workers.start(pipeline_env, concurrency=2)
    py_doc, cli_doc, http_doc = _copy(corpus, tmp_path / "docs", SMALL)
    jobs = JobStore(r_client := _redis(pipeline_settings), ttl_s=3600)

    job_py = enqueue(py_doc, settings=pipeline_settings)
    out = subprocess.run(
        [str(Path(sys.executable).parent / "chunkweave"), "enqueue", "--json", str(cli_doc)],
        cwd=ROOT, env=pipeline_env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    job_cli = json.loads(out.stdout)["job_id"]
    api_settings = pipeline_settings.model_copy(
        update={"sources": SourcesConfig(roots=(tmp_path / "docs",))}
    )
    with TestClient(create_app(api_settings)) as http:
        resp = http.post("/jobs", json={"sources": [str(http_doc)]})
        assert resp.status_code == 202
        job_http = resp.json()["job_id"]
        # Status is right while work is under way and after it.
        assert http.get(f"/jobs/{job_http}").json()["status"] in ("queued", "running", "done")
    for job_id in (job_py, job_cli, job_http):
        job = wait_job(jobs, job_id, workers, timeout_s=150)
        assert (job.status, job.done, job.failed) == ("done", 1, 0), job
        (doc,) = job.docs or ()
        assert doc.outcome == "added" and doc.chunks_added > 0
        assert doc.pages >= 1 or doc.source.endswith(".docx")

    # Everything again, all at once: nothing new is written.
    again = enqueue(tmp_path / "docs", settings=pipeline_settings)
    job = wait_job(jobs, again, workers, timeout_s=150)
    assert sorted(d.outcome or "" for d in job.docs or ()) == ["unchanged"] * 3
    _assert_matches_clean_run([py_doc, cli_doc, http_doc], stored, clean_pipeline)
    r_client.close()


def _redis(settings: Settings):
    import redis

    assert settings.redis_url is not None
    return redis.Redis.from_url(settings.redis_url.get_secret_value())


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


@pytest.mark.slow
def test_kill9_worker_mid_document_then_redelivered(
    pipeline_env, pipeline_settings, corpus, tmp_path, workers, stored, clean_pipeline
):
    proc = workers.start(pipeline_env, concurrency=1)
    (doc,) = _copy(corpus, tmp_path / "docs", ("redp5110_sampled.pdf",))
    r = _redis(pipeline_settings)
    jobs = JobStore(r, ttl_s=3600)
    job_id = enqueue(doc, settings=pipeline_settings)

    def parsing() -> bool:
        state = jobs.get_doc(job_id, doc_id_for(doc))
        return state is not None and state.stage == "parsing"

    wait_for(parsing, timeout_s=60, what="document in progress")
    (child,) = wait_for(lambda: _children(proc.pid), timeout_s=10, what="pool child")  # type: ignore[misc]
    os.kill(child, signal.SIGKILL)
    job = wait_job(jobs, job_id, workers, timeout_s=200)
    (state,) = job.docs or ()
    assert (state.status, state.attempts) == ("done", 2), state
    _assert_matches_clean_run([doc], stored, clean_pipeline)
    r.close()


@pytest.mark.integration
def test_fanned_out_ingest_equals_single_task_ingest(
    pipeline_env, pipeline_settings, corpus, tmp_path, workers, stored, clean_pipeline
):
    pipeline_env["CHUNKWEAVE_FANOUT_PAGES"] = "3"
    pipeline_env["CHUNKWEAVE_FANOUT_PART_PAGES"] = "2"
    pipeline_env["CHUNKWEAVE_FANOUT_EMBED_CHUNKS"] = "4"
    workers.start(pipeline_env, concurrency=1)
    workers.start(pipeline_env, concurrency=1)
    dest = tmp_path / "docs"
    dest.mkdir()
    doc = Path(shutil.copy(corpus / "multi_page.pdf", dest / "multi_page.pdf"))
    r = _redis(pipeline_settings)
    jobs = JobStore(r, ttl_s=3600)
    job = wait_job(jobs, enqueue(doc, settings=pipeline_settings), workers, timeout_s=120)
    (state,) = job.docs or ()
    assert (state.status, state.outcome) == ("done", "added"), state
    logs = workers.logs()
    assert logs.count("chunkweave.parse_part[") >= 3 and "chunkweave.finish_document[" in logs
    assert logs.count("chunkweave.embed_slice[") >= 2 and "chunkweave.commit_document[" in logs
    assert state.chunks_added == stored.store.count(state.doc_id) > 4
    assert not list(r.scan_iter(f"cw:fan:{doc_id_for(doc)}:*"))  # scratch cleaned up
    _assert_matches_clean_run([doc], stored, clean_pipeline)
    r.close()

"""Every failure ends in the ledger with its code and reason: real Redis, Weaviate, workers.

A job with a good document, one whose sidecar is refused (``bad_metadata``, decided by
the producer), one that cannot be parsed (the pipeline's failure) and one removed
after it was queued (the task's): the job records each, and so does each document's
ledger entry (what ``chunkweave docs`` lists). ``chunkweave ingest`` does the same for
a refused sidecar.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from docx import Document

from chunkweave import enqueue
from chunkweave.storage.config import server_env
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.pipeline.conductor import Pipeline, open_pipeline
from chunkweave.storage.values import LedgerEntry
from chunkweave.worker.jobs import JobState, JobStore
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import Settings
from tests.fixtures_services import WorkerProcs, wait_for

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
CHUNKWEAVE = str(Path(sys.executable).parent / "chunkweave")


def _docx(path: Path) -> Path:
    doc = Document()
    doc.add_heading("Harbour log", level=1)
    doc.add_paragraph("The harbour master logged three ferries and a seal. " * 3)
    doc.save(str(path))
    return path


def _job(settings: Settings, job_id: str, workers: WorkerProcs) -> JobState:
    jobs = JobStore(redis_client(settings), ttl_s=3600)

    def finished() -> JobState | None:
        job = jobs.get(job_id, with_docs=True)
        return job if job is not None and job.finished_at is not None else None

    try:
        job = wait_for(finished, timeout_s=240, what=f"job {job_id}", interval_s=0.3)
    except pytest.fail.Exception:
        print(workers.logs()[-5000:])
        raise
    assert isinstance(job, JobState)
    return job


def _entry(pipe: Pipeline, path: Path) -> LedgerEntry:
    """The ledger entry of ``path`` once it is there (a worker writes it)."""
    found = wait_for(
        lambda: pipe.ledger.get(doc_id_for(path)),
        timeout_s=60,
        what=f"the ledger entry of {path.name}",
    )
    assert isinstance(found, LedgerEntry)
    return found


def test_every_failure_of_a_job_is_in_the_ledger_with_its_code_and_reason(
    pipeline_env, pipeline_settings, workers, tmp_path
):
    folder = tmp_path / "docs"
    folder.mkdir()
    good = _docx(folder / "good.docx")
    refused = _docx(folder / "refused.docx")
    (folder / "refused.docx.meta.json").write_text(json.dumps({"colour": "red"}))
    broken = folder / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n" + b"\x00 not a pdf body " * 64)
    gone = _docx(folder / "gone.docx")
    job_id = enqueue(folder, settings=pipeline_settings)
    gone.unlink()  # queued, then removed: the task fails it, not the pipeline
    workers.start(pipeline_env)

    job = _job(pipeline_settings, job_id, workers)
    states = {Path(d.source).name: d for d in job.docs or ()}
    assert states["good.docx"].status == "done", states
    assert states["refused.docx"].error_code == "bad_metadata"
    assert states["broken.pdf"].status == "failed" and states["broken.pdf"].error_code
    assert states["gone.docx"].error_code == "not_found"

    s = pipeline_settings
    pipe = open_pipeline(s.weaviate, make_embedder(s.embedder), s.parse, s.chunking)
    try:
        assert _entry(pipe, good).status == "ok"
        bad = _entry(pipe, refused)
        assert (bad.status, bad.error_code) == ("failed", "bad_metadata")
        assert "refused.docx.meta.json" in (bad.error or "") and "'colour'" in (bad.error or "")
        unparsed = _entry(pipe, broken)
        assert (unparsed.status, unparsed.error_code) == (
            "failed",
            states["broken.pdf"].error_code,
        )
        assert unparsed.error == states["broken.pdf"].error
        missing = _entry(pipe, gone)
        assert (missing.status, missing.error_code) == ("failed", "not_found")
        assert missing.error == states["gone.docx"].error
    finally:
        pipe.close()


@pytest.mark.slow
def test_cli_ingest_records_a_refused_sidecar_in_the_ledger(weaviate_cfg, tmp_path):
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")},
        **server_env(weaviate_cfg),
        "PYTHONPATH": str(ROOT),
        "CHUNKWEAVE_WEAVIATE__COLLECTION": weaviate_cfg.collection,
        "CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION": weaviate_cfg.ledger_collection,
        "CHUNKWEAVE_EMBEDDER__KIND": "none",
    }
    refused = _docx(tmp_path / "refused.docx")
    (tmp_path / "refused.docx.meta.json").write_text(json.dumps({"colour": "red"}))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CHUNKWEAVE, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
        )

    run = cli("ingest", str(refused), "--json")
    assert run.returncode == 1, run.stderr
    (failed,) = json.loads(run.stdout)["failed"]
    assert failed["error_code"] == "bad_metadata"
    docs = cli("docs", "--json")
    assert docs.returncode == 0, docs.stderr
    (entry,) = [e for e in json.loads(docs.stdout) if Path(e["source"]).name == "refused.docx"]
    assert (entry["status"], entry["error_code"]) == ("failed", "bad_metadata")
    assert entry["error"] == failed["error"]

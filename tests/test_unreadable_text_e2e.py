"""The damaged-font PDF through real Celery workers, Redis and Weaviate.

``tests/data/damaged/unmapped-fonts.pdf`` (fonts without Unicode maps, a repaired
xref): with OCR the document is stored from its page images, no chunk is glyph soup,
and the parser's warnings (repair, pages OCRed) reach the job and the ledger; with
OCR off it fails ``unreadable_text`` with the reason, in the job and the ledger.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chunkweave import enqueue
from chunkweave.parsers.pdf.legibility import legibility
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.worker.jobs import DocState, JobStore
from chunkweave.worker.settings import Settings
from tests.fixtures_services import ROOT, WorkerProcs, wait_for

pytestmark = pytest.mark.integration
DAMAGED = Path(__file__).parent / "data" / "damaged" / "unmapped-fonts.pdf"
CHUNKWEAVE = str(Path(sys.executable).parent / "chunkweave")


def _docs(env: dict[str, str]) -> str:
    """``chunkweave docs`` as a user runs it, on the test's ledger."""
    run = subprocess.run(
        [CHUNKWEAVE, "docs"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def _run(settings: Settings, workers: WorkerProcs, tmp_path: Path) -> DocState:
    import redis

    doc = Path(shutil.copy(DAMAGED, tmp_path / DAMAGED.name))
    job_id = enqueue(doc, settings=settings)
    assert settings.redis_url is not None
    client = redis.Redis.from_url(settings.redis_url.get_secret_value())
    jobs = JobStore(client, ttl_s=3600)

    def finished() -> object:
        job = jobs.get(job_id, with_docs=True)
        return job if job is not None and job.finished_at is not None else None

    try:
        job = wait_for(finished, timeout_s=240, what=f"job {job_id}", interval_s=0.5)
    except pytest.fail.Exception:
        print(workers.logs()[-5000:])
        raise
    client.close()
    (state,) = job.docs or ()  # type: ignore[attr-defined]
    return state


@pytest.mark.slow
def test_damaged_fonts_are_ocred_and_the_warnings_reach_job_and_ledger(
    pipeline_env, pipeline_settings: Settings, stored: Pipeline, workers: WorkerProcs, tmp_path
):
    workers.start(pipeline_env)
    state = _run(pipeline_settings, workers, tmp_path)
    assert (state.status, state.outcome) == ("done", "added"), state
    assert any("repaired" in w for w in state.warnings), state.warnings
    assert any("not language" in w and "read by OCR" in w for w in state.warnings), state
    (entry,) = [e for e in stored.ledger.entries() if e.doc_id == state.doc_id]
    assert entry.status == "ok" and entry.warnings == state.warnings
    chunks = stored.store.chunks(state.doc_id, limit=1000)
    assert chunks and len(chunks) == entry.chunk_count
    for chunk in chunks:
        assert not legibility([chunk.text]).garbled, chunk.text
    assert "word processor" in " ".join(c.text for c in chunks).lower()
    listed = _docs(pipeline_env)
    assert "warning: file was damaged; MuPDF repaired its structure" in listed
    assert "warning: page 1: text layer is not language" in listed


def test_without_ocr_the_damaged_pdf_fails_unreadable_text_in_job_and_ledger(
    pipeline_env, pipeline_settings: Settings, stored: Pipeline, workers: WorkerProcs, tmp_path
):
    workers.start({**pipeline_env, "CHUNKWEAVE_PARSE__OCR": "false"})
    state = _run(pipeline_settings, workers, tmp_path)
    assert (state.status, state.error_code) == ("failed", "unreadable_text"), state
    assert state.error and "not language" in state.error and "glyph codes" in state.error
    (entry,) = [e for e in stored.ledger.entries() if e.doc_id == state.doc_id]
    assert (entry.status, entry.error_code) == ("failed", "unreadable_text")
    assert entry.error == state.error
    assert stored.store.chunks(state.doc_id, limit=10) == []
    assert "[unreadable_text]" in _docs(pipeline_env)

"""Twenty-four uploads of one file under one name at the same moment (issue 37, item 5).

Real Redis, Weaviate, workers and MiniLM. The uploads share one stored file; each
holds it until its document ends, so none fails ``not_found``: one document, its
chunks stored once, every job ``done``, the ledger ``ok``, and the file deleted by
the last upload to end (the default retention).
"""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docx
import pytest
from fastapi.testclient import TestClient

from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.worker import keys
from chunkweave.worker.api import create_app
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import Settings
from tests.fixtures_services import WorkerProcs, wait_for

pytestmark = pytest.mark.integration
UPLOADS = 24


def _handbook() -> bytes:
    document = docx.Document()
    document.add_heading("Staff handbook", level=0)
    for heading in ("Leave", "Expenses", "Travel"):
        document.add_heading(heading, level=1)
        document.add_paragraph(f"The {heading.lower()} rules of the handbook apply to all. " * 8)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_same_name_uploads_at_once_all_end_done_and_store_one_document(
    pipeline_env, pipeline_settings: Settings, stored: Pipeline, workers: WorkerProcs
):
    body = _handbook()
    workers.start(pipeline_env, concurrency=2)
    with TestClient(create_app(pipeline_settings)) as client:

        def upload(_: int) -> str:
            resp = client.post(
                "/jobs",
                files=[("file", ("handbook.docx", body, "application/octet-stream"))],
                data={"document_id": "handbook"},
            )
            assert resp.status_code == 202, resp.text
            return str(resp.json()["job_id"])

        with ThreadPoolExecutor(max_workers=UPLOADS) as pool:
            job_ids = list(pool.map(upload, range(UPLOADS)))

        def finished() -> list[dict] | None:
            jobs = [client.get(f"/jobs/{j}").json() for j in job_ids]
            return jobs if all(j["finished_at"] for j in jobs) else None

        jobs = wait_for(finished, timeout_s=300, what=f"{UPLOADS} upload jobs")
    assert isinstance(jobs, list)
    docs = [d for job in jobs for d in job["docs"]]
    assert len(docs) == UPLOADS
    assert {d["status"] for d in docs} == {"done"}, [(d["status"], d["error"]) for d in docs]
    assert {d["doc_id"] for d in docs} == {"doc://handbook"}
    outcomes = sorted(d["outcome"] for d in docs)
    assert outcomes.count("added") == 1 and set(outcomes) <= {"added", "unchanged"}, outcomes

    (entry,) = [e for e in stored.ledger.entries() if e.doc_id == "doc://handbook"]
    assert entry.status == "ok" and entry.chunk_count > 0
    assert len(stored.store.doc_uuids("doc://handbook")) == entry.chunk_count
    # The last upload to end deleted the shared file, and no hold is left on it.
    source = docs[0]["source"]
    assert not Path(source).exists()
    assert not redis_client(pipeline_settings).hexists(keys.UPLOAD_HOLDS, source)

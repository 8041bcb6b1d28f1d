"""The service as app builders meet it (real Redis, Weaviate, workers, MiniLM).

- A named upload (``document_id``) is one document across versions: v2 replaces v1
  incrementally, as a changed file in a watched folder does.
- Uploads need no shared disk when a bucket is configured.
- Job state expires with its TTL, and the listing forgets expired jobs.
- Every document says where its time went: seconds per stage, in the job state and
  as Prometheus histograms.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import docx
import pytest
import redis
from fastapi.testclient import TestClient

from chunkweave.parsers import parse_document
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.worker.api import create_app
from chunkweave.worker.jobs import JOBS_INDEX, DocState, JobStore
from chunkweave.worker.settings import S3Config, Settings
from chunkweave.worker.sources.s3 import s3_client
from tests.fixtures_services import S3Server, WorkerProcs, wait_for
from tests.standin_pipeline import FACTORY

pytestmark = pytest.mark.integration

SECTIONS = {
    "Scope": "This policy covers every laptop, phone and tablet issued to staff. " * 6,
    "Retention": "Backups are kept for ninety days and then destroyed securely. " * 6,
    "Contacts": "Questions go to the service desk on extension 4242 during office hours. " * 6,
    # Enough text that the task's time is mostly real work, as it is in production.
    **{
        f"Annex {i}": f"Annex {i} lists the approved models for region {i}. " * 40 for i in range(8)
    },
}


def _report(edited: str | None = None) -> bytes:
    """A small DOCX with three sections; ``edited`` replaces the Retention text."""
    document = docx.Document()
    document.add_heading("Device policy", level=0)
    for heading, text in SECTIONS.items():
        document.add_heading(heading, level=1)
        document.add_paragraph(edited if edited and heading == "Retention" else text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _upload(client: TestClient, body: bytes, name: str) -> dict:
    resp = client.post(
        "/jobs",
        files=[("file", ("report.docx", body, "application/octet-stream"))],
        data={"document_id": name},
    )
    assert resp.status_code == 202, resp.text
    job_id = resp.json()["job_id"]
    job = wait_for(
        lambda: (j := client.get(f"/jobs/{job_id}").json())["finished_at"] and j,
        timeout_s=180,
        what=f"job {job_id}",
    )
    assert isinstance(job, dict)
    return job


def test_a_named_upload_replaces_its_previous_version(
    pipeline_env, pipeline_settings: Settings, stored: Pipeline, workers: WorkerProcs, tmp_path
):
    workers.start(pipeline_env)
    v1 = _report()
    v2 = _report(edited="Backups are now kept for thirty days, then destroyed. " * 6)
    with TestClient(create_app(pipeline_settings)) as client:
        first = _upload(client, v1, "device-policy")
        second = _upload(client, v2, "device-policy")
        bad = client.post(
            "/jobs",
            files=[("file", ("x.docx", v1, "application/octet-stream"))],
            data={"document_id": "../../etc"},
        )
    assert bad.status_code == 422
    (d1,), (d2,) = first["docs"], second["docs"]
    assert d1["doc_id"] == d2["doc_id"] == "doc://device-policy"
    assert (d1["status"], d1["outcome"]) == ("done", "added"), d1
    assert (d2["status"], d2["outcome"]) == ("done", "updated"), d2
    # Only what changed was embedded again; the old Retention chunk is gone.
    assert d2["chunks_unchanged"] >= 1 and d2["chunks_added"] >= 1, d2
    assert d2["chunks_deleted"] == d2["chunks_added"], d2

    doc_id = d2["doc_id"]
    entries = [e for e in stored.ledger.entries() if e.doc_id == doc_id]
    assert len(entries) == 1  # one document, not two
    local = tmp_path / "v2.docx"
    local.write_bytes(v2)
    expected = stored.chunk(parse_document(local), source=entries[0].source, doc_id=doc_id)
    assert stored.store.doc_uuids(doc_id) == {chunk_uuid(c.id) for c in expected}
    # The uploads themselves are gone once stored (the default retention).
    assert not Path(entries[0].source).exists()

    # Stage timings: present, and they account for the task's time (within 10%, or
    # 20 ms: a task of a few tens of milliseconds on a busy machine loses a few to the
    # scheduler between stages).
    for state in (d1, d2):
        stages = state["timings"]
        assert {"fetch", "check", "parse", "chunk", "embed", "upsert", "prune"} <= set(stages)
        slack = max(0.1 * state["seconds"], 0.02)
        assert abs(sum(stages.values()) - state["seconds"]) <= slack, state
    with TestClient(create_app(pipeline_settings)) as client:
        metrics = client.get("/metrics").text
    embed_count = next(
        line for line in metrics.splitlines()
        if line.startswith('chunkweave_stage_duration_seconds_count{stage="embed"}')
    )  # fmt: skip
    assert float(embed_count.split()[-1]) >= 2


def test_uploads_go_to_the_bucket_when_one_is_configured(
    service_env, s3_server: S3Server, workers: WorkerProcs, tmp_path: Path
):
    """API and worker on different data directories share only the bucket."""
    prefix = f"uploads-{tmp_path.name}/"
    common = {
        **service_env,
        **s3_server.env(),
        "CHUNKWEAVE_UPLOADS_S3": f"s3://{s3_server.bucket}/{prefix}",
    }
    worker_env = dict(
        common,
        CHUNKWEAVE_DATA_DIR=str(tmp_path / "worker-host"),
        CHUNKWEAVE_PIPELINE_FACTORY=FACTORY,
        STANDIN_NS=tmp_path.name,
    )
    workers.start(worker_env)
    api_settings = Settings(
        redis_url=common["CHUNKWEAVE_REDIS_URL"],
        tasks={"queue": common["CHUNKWEAVE_QUEUE"]},
        data_dir=tmp_path / "api-host",
        s3=S3Config(
            endpoint_url=s3_server.endpoint_url, access_key_id="test", secret_access_key="test"
        ),
        api={"uploads_s3": f"s3://{s3_server.bucket}/{prefix}"},
    )
    client_s3 = s3_client(api_settings.s3)
    with TestClient(create_app(api_settings)) as client:
        resp = client.post(
            "/jobs", files=[("file", ("far.pdf", b"%PDF far away", "application/pdf"))]
        )
        assert resp.status_code == 202, resp.text
        job_id = resp.json()["job_id"]
        job = wait_for(
            lambda: (j := client.get(f"/jobs/{job_id}").json())["status"] == "done" and j,
            timeout_s=60,
            what="upload processed by the other host's worker",
        )
    (doc,) = job["docs"]  # type: ignore[index]
    assert doc["source"].startswith(f"s3://{s3_server.bucket}/{prefix}"), doc
    assert doc["outcome"] == "added"
    # Nothing on either host's disk; the object is gone once the document is stored.
    for host in ("api-host", "worker-host"):
        uploads = tmp_path / host / "uploads"
        assert not [p for p in uploads.rglob("*") if p.is_file()] if uploads.exists() else True
    listed = client_s3.list_objects_v2(Bucket=s3_server.bucket, Prefix=prefix)
    assert listed.get("KeyCount", 0) == 0, listed.get("Contents")


def test_job_state_expires_with_its_ttl(service_env: dict[str, str]):
    """Job state does not pile up in Redis; the listing forgets expired jobs."""
    client = redis.Redis.from_url(service_env["CHUNKWEAVE_REDIS_URL"])
    jobs = JobStore(client, ttl_s=1)
    job_id = jobs.create()
    jobs.add_docs(job_id, [DocState(doc_id="d1", source="/x/d1.pdf", status="queued")])
    jobs.set_doc(job_id, DocState(doc_id="d1", source="/x/d1.pdf", status="done"))
    jobs.seal(job_id)
    assert client.keys(f"cw:job:{job_id}*")
    time.sleep(2.5)
    assert client.keys(f"cw:job:{job_id}*") == []
    assert jobs.get(job_id) is None
    jobs.page(limit=1000)  # a listing that meets the expired id drops it from the index
    assert client.zscore(JOBS_INDEX, job_id) is None
    client.close()

"""HTTP API against a real Redis (in-process ASGI client; workers where stated)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from chunkweave.worker.api import create_app
from chunkweave.worker.metrics import record_document, record_failure
from chunkweave.worker.settings import SourcesConfig
from tests.fixtures_services import WorkerProcs, env_settings, wait_for
from tests.standin_pipeline import FACTORY

pytestmark = pytest.mark.integration
TOKEN = "s3cret-token"


@pytest.fixture
def client(service_env: dict[str, str], tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(
        env_settings(
            service_env,
            api={"token": TOKEN, "max_upload_bytes": 1000},
            sources=SourcesConfig(roots=(tmp_path,)),
        )
    )
    with TestClient(app, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        yield c


def _docs(root: Path, n: int) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        p = root / f"d{i}.pdf"
        p.write_bytes(b"%%PDF api %d" % i)
        out.append(p)
    return out


def test_auth_required_except_healthz(client: TestClient):
    assert client.get("/healthz").json() == {"status": "ok", "parts": {"redis": {"status": "ok"}}}
    assert client.get("/healthz", headers={"Authorization": ""}).status_code == 200
    for bad in ("", "Bearer wrong"):
        resp = client.get("/jobs", headers={"Authorization": bad})
        assert resp.status_code == 401, bad
    assert client.get("/metrics", headers={"Authorization": ""}).status_code == 401
    assert client.get("/jobs").status_code == 200
    # With a token the API documents itself to no one.
    for path in ("/openapi.json", "/docs", "/redoc"):
        assert client.get(path).status_code == 404, path


def test_submit_sources_and_read_status(client: TestClient, tmp_path: Path):
    folder = tmp_path / "in"
    _docs(folder, 3)
    resp = client.post("/jobs", json={"sources": [str(folder)]})
    assert resp.status_code == 202
    job_id = resp.json()["job_id"]
    job = client.get(f"/jobs/{job_id}").json()
    assert (job["status"], job["total"], job["queued"]) == ("queued", 3, 3)
    assert sorted(Path(d["source"]).name for d in job["docs"]) == ["d0.pdf", "d1.pdf", "d2.pdf"]
    assert "docs" not in client.get(f"/jobs/{job_id}?docs=false").json() or (
        client.get(f"/jobs/{job_id}?docs=false").json()["docs"] is None
    )
    listed = client.get("/jobs", params={"status": "queued"}).json()["jobs"]
    assert job_id in [j["id"] for j in listed]
    assert job_id not in [j["id"] for j in client.get("/jobs?status=done").json()["jobs"]]
    assert client.get("/jobs/nope").status_code == 404
    assert client.post("/jobs", json={"sources": [str(tmp_path / "missing")]}).status_code == 404
    assert client.post("/jobs", json={"sources": []}).status_code == 422


def test_upload_lands_in_shared_dir_with_size_limit(client: TestClient, service_env):
    body = b"%PDF small upload"
    resp = client.post("/jobs", files=[("file", ("../../evil name.pdf", body, "application/pdf"))])
    assert resp.status_code == 202
    job = client.get(f"/jobs/{resp.json()['job_id']}").json()
    (doc,) = job["docs"]
    stored = Path(doc["source"])
    upload_dir = Path(service_env["CHUNKWEAVE_DATA_DIR"]) / "uploads"
    assert stored.parent == upload_dir / hashlib.sha1(body).hexdigest()
    assert stored.name == "evil_name.pdf" and stored.read_bytes() == body
    big = client.post("/jobs", files=[("file", ("big.pdf", b"x" * 2000, "application/pdf"))])
    assert big.status_code == 413
    assert not [p for p in upload_dir.rglob("*") if p.name.startswith(".upload-")]


def test_delete_document_enqueues_delete(client: TestClient, tmp_path: Path):
    (doc,) = _docs(tmp_path, 1)
    doc_id = doc.resolve().as_uri()
    resp = client.delete(f"/documents/{doc_id}")
    assert resp.status_code == 202
    job = client.get(f"/jobs/{resp.json()['job_id']}").json()
    assert [(d["action"], d["doc_id"]) for d in job["docs"]] == [("delete", doc_id)]


def test_metrics_exposes_shared_counters_and_queue_depth(
    client: TestClient, tmp_path, redis_client
):
    def value(text: str, name: str) -> float:
        line = next((ln for ln in text.splitlines() if ln.startswith(name + " ")), None)
        return float(line.split()[-1]) if line else 0.0

    before = client.get("/metrics").text
    record_document(
        redis_client, outcome="added", pages=7, chunks_added=5, chunks_unchanged=0,
        chunks_deleted=0, seconds=1.5,
    )  # fmt: skip
    record_failure(redis_client, reason="timeout", seconds=3.0)
    client.post("/jobs", json={"sources": [str(p) for p in _docs(tmp_path, 2)]})
    after = client.get("/metrics").text
    name = 'chunkweave_documents_processed_total{outcome="added"}'
    assert value(after, name) == value(before, name) + 1
    assert value(after, "chunkweave_pages_processed_total") == (
        value(before, "chunkweave_pages_processed_total") + 7
    )
    fail = 'chunkweave_failures_total{reason="timeout"}'
    assert value(after, fail) == value(before, fail) + 1
    count = "chunkweave_task_duration_seconds_count"
    assert value(after, count) == value(before, count) + 2
    assert value(after, "chunkweave_queue_depth") == 2  # nobody consumes this test's queue


def test_upload_processed_by_worker(service_env, workers: WorkerProcs, tmp_path: Path):
    env = dict(service_env, CHUNKWEAVE_PIPELINE_FACTORY=FACTORY, STANDIN_NS=tmp_path.name)
    workers.start(env)
    app = create_app(env_settings(env))
    with TestClient(app) as c:
        resp = c.post("/jobs", files=[("file", ("up.pdf", b"%PDF uploaded", "application/pdf"))])
        job_id = resp.json()["job_id"]
        job = wait_for(
            lambda: (j := c.get(f"/jobs/{job_id}").json())["status"] == "done" and j,
            timeout_s=60,
            what="uploaded document processed",
        )
    assert job["done"] == 1 and job["docs"][0]["outcome"] == "added"  # type: ignore[index]

"""Former 500s are refusals with the reason, and nothing is left behind (issue 37 items 8, 12).

Real Redis, no workers. An upload is never a source another caller can name: not the
uploads folder, not an exact upload path (by a tenant or anyone), and a folder walk
under a root that holds the uploads skips them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from chunkweave.storage.config import WeaviateConfig
from chunkweave.worker.api import create_app
from chunkweave.worker.jobs import JobStore
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import S3Config, Settings, SourcesConfig

pytestmark = pytest.mark.integration
ADMIN, TOKEN_A, TOKEN_B = "ref-admin", "ref-token-a", "ref-token-b"
PDF = b"%PDF-1.4 refusals"


def _settings(env: dict[str, str], **extra: object) -> Settings:
    data = Path(env["CHUNKWEAVE_DATA_DIR"])
    fields: dict[str, object] = {
        "redis_url": env["CHUNKWEAVE_REDIS_URL"],
        "tasks": {"queue": env["CHUNKWEAVE_QUEUE"]},
        "data_dir": data,
        # The data directory (uploads inside) is itself under an allowed root.
        "sources": SourcesConfig(roots=(data.parent,)),
        "weaviate": WeaviateConfig(multi_tenancy=True),
        "api": {
            "token": ADMIN,
            "tenant_tokens": {"acme": TOKEN_A, "globex": TOKEN_B},
            "upload_retention": "keep",
            **extra.pop("api", {}),
        },
    }
    return Settings(**(fields | extra))  # type: ignore[arg-type]


@pytest.fixture
def settings(service_env: dict[str, str]) -> Settings:
    Path(service_env["CHUNKWEAVE_DATA_DIR"]).mkdir(parents=True, exist_ok=True)
    return _settings(service_env)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as c:
        yield c


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _uploaded(
    client: TestClient, settings: Settings, token: str, name: str, tenant: str | None = None
) -> str:
    data = {"tenant": tenant} if tenant else {}
    made = client.post("/jobs", files={"file": (name, PDF)}, data=data, headers=_as(token))
    assert made.status_code == 202, made.text
    job = JobStore(redis_client(settings), ttl_s=60).get(made.json()["job_id"], with_docs=True)
    assert job is not None and job.docs
    return job.docs[0].source


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_a_tenant_cannot_name_another_tenants_upload(client, settings):
    theirs = _uploaded(client, settings, TOKEN_B, "globex-plan.pdf")
    assert Path(theirs).is_file() and Path(theirs).is_relative_to(settings.upload_dir)
    for source in (theirs, str(settings.upload_dir), str(Path(theirs).parent)):
        resp = client.post("/jobs", json={"sources": [source]}, headers=_as(TOKEN_A))
        assert resp.status_code == 404, (source, resp.status_code, resp.text)
    # Nor the main token: uploads are no source anyone names; upload the file instead.
    exact = client.post("/jobs", json={"sources": [theirs], "tenant": "acme"}, headers=_as(ADMIN))
    assert exact.status_code == 404
    # A walk of a root that holds the uploads folder skips the uploads.
    mine = Path(settings.data_dir.parent) / "mine.pdf"
    mine.write_bytes(PDF)
    walked = client.post(
        "/jobs", json={"sources": [str(settings.data_dir.parent)]}, headers=_as(TOKEN_A)
    )
    assert walked.status_code == 202, walked.text
    job = JobStore(redis_client(settings), ttl_s=60).get(walked.json()["job_id"], with_docs=True)
    assert job is not None
    assert [d.source for d in job.docs or ()] == [str(mine.resolve())]


def test_an_upload_name_too_long_for_the_disk_is_shortened(client, settings):
    name = "quarterly-report-" * 20 + ".pdf"  # 344 bytes: over the file-name limit
    source = _uploaded(client, settings, ADMIN, name, tenant="acme")
    assert len(Path(source).name.encode()) <= 255 and source.endswith(".pdf")
    assert Path(source).name.startswith("quarterly-report-") and Path(source).is_file()


def test_a_refused_multi_file_upload_leaves_no_file(service_env):
    settings = _settings(service_env, api={"max_upload_bytes": 1000})
    with TestClient(create_app(settings)) as client:
        before = _files(settings.upload_dir)
        # The first file is stored before the second is found too large.
        files = [("file", ("a.pdf", PDF)), ("file", ("b.pdf", PDF + b"b" * 2000))]
        resp = client.post("/jobs", files=files, data={"tenant": "acme"}, headers=_as(ADMIN))
        assert resp.status_code == 413, resp.text
        assert _files(settings.upload_dir) == before


def test_a_source_path_longer_than_a_file_name_is_refused(client, settings):
    long = str(settings.data_dir.parent / ("x" * 300) / "report.pdf")  # under a root
    resp = client.post("/jobs", json={"sources": [long]}, headers=_as(TOKEN_A))
    assert resp.status_code == 422, resp.text
    assert "name too long" in resp.json()["detail"].lower()


def test_an_s3_source_without_s3_configured_is_refused(service_env):
    settings = _settings(
        service_env,
        sources=SourcesConfig(buckets=("reports",)),
        s3=S3Config(endpoint_url="http://127.0.0.1:9"),  # nothing listens there
    )
    with TestClient(create_app(settings)) as client:
        resp = client.post("/jobs", json={"sources": ["s3://reports/q3/"]}, headers=_as(TOKEN_A))
    assert resp.status_code == 503, resp.text
    assert "s3://reports/q3/" in resp.json()["detail"]
    assert "CHUNKWEAVE_S3__ENDPOINT_URL" in resp.json()["detail"]

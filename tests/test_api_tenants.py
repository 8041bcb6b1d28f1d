"""The HTTP API with tenant-scoped tokens and caller metadata (real Redis, no workers).

A token for tenant B can neither enqueue into, list, read the job state of, nor
delete documents of tenant A; each refusal is shown, with A's own token (and the
main token) allowed as the control. Metadata and tenants are checked before
anything is stored or queued; the OpenAPI schema documents both fields.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.metadata import MetadataConfig
from chunkweave.worker.api import create_app
from chunkweave.worker.jobs import JobStore
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import Settings, SourcesConfig

pytestmark = pytest.mark.integration
ADMIN, TOKEN_A, TOKEN_B = "admin-token", "token-of-a", "token-of-b"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "allowed"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(b"%PDF report")
    return folder


def _settings(env: dict[str, str], root: Path, **extra: object) -> Settings:
    fields: dict[str, object] = {
        "redis_url": env["CHUNKWEAVE_REDIS_URL"],
        "tasks": {"queue": env["CHUNKWEAVE_QUEUE"]},
        "data_dir": Path(env["CHUNKWEAVE_DATA_DIR"]),
        "sources": SourcesConfig(roots=(root,)),
        "weaviate": WeaviateConfig(
            multi_tenancy=True, metadata=MetadataConfig(fields={"version": "string"})
        ),
    }
    return Settings(**(fields | extra))  # type: ignore[arg-type]


@pytest.fixture
def settings(service_env: dict[str, str], root: Path) -> Settings:
    return _settings(
        service_env,
        root,
        api={"token": ADMIN, "tenant_tokens": {"a": TOKEN_A, "b": TOKEN_B}},
    )


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as c:
        yield c


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _queued(settings: Settings) -> int:
    return int(redis_client(settings).llen(settings.tasks.queue))


def test_tenant_b_cannot_see_or_touch_tenant_a(client: TestClient, settings: Settings, root):
    body = {"sources": [str(root / "report.pdf")], "metadata": {"version": "3", "acl": ["x"]}}
    made = client.post("/jobs", json=body, headers=_as(TOKEN_A))
    assert made.status_code == 202, made.text
    job_a = made.json()["job_id"]
    assert client.get(f"/jobs/{job_a}", headers=_as(TOKEN_A)).json()["tenant"] == "a"
    queued = _queued(settings)

    # enqueue into A
    refused = client.post("/jobs", json=dict(body, tenant="a"), headers=_as(TOKEN_B))
    assert refused.status_code == 403 and "'a'" in refused.json()["detail"]
    # read A's job state: exactly as a job that does not exist
    missing = client.get("/jobs/no-such-job", headers=_as(TOKEN_B))
    hidden = client.get(f"/jobs/{job_a}", headers=_as(TOKEN_B))
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["detail"] == f"job {job_a} not found"
    # list A's jobs
    listed = client.get("/jobs", headers=_as(TOKEN_B)).json()["jobs"]
    assert job_a not in {j["id"] for j in listed}
    assert job_a in {j["id"] for j in client.get("/jobs", headers=_as(TOKEN_A)).json()["jobs"]}
    # delete A's documents
    doc = f"file://{root / 'report.pdf'}"
    gone = client.delete(f"/documents/{doc}", params={"tenant": "a"}, headers=_as(TOKEN_B))
    assert gone.status_code == 403
    assert _queued(settings) == queued  # nothing was sent for any refusal

    # B's own work goes to B, and the main token sees both tenants' jobs
    own = client.post("/jobs", json=body, headers=_as(TOKEN_B)).json()["job_id"]
    deleted = client.delete(f"/documents/{doc}", headers=_as(TOKEN_B)).json()["job_id"]
    jobs = JobStore(redis_client(settings), ttl_s=60)
    assert [jobs.get(j).tenant for j in (own, deleted)] == ["b", "b"]  # type: ignore[union-attr]
    everyone = {j["id"] for j in client.get("/jobs", headers=_as(ADMIN)).json()["jobs"]}
    assert {job_a, own} <= everyone
    assert client.get("/jobs", headers=_as("wrong")).status_code == 401
    # the shared counters count every tenant's documents: main token only
    assert client.get("/metrics", headers=_as(TOKEN_B)).status_code == 403
    assert client.get("/metrics", headers=_as(ADMIN)).status_code == 200


def test_metadata_is_checked_before_anything_is_queued(
    client: TestClient, settings: Settings, root
):
    queued = _queued(settings)
    source = [str(root / "report.pdf")]
    cases = [
        (
            {"sources": source, "tenant": "a", "metadata": {"colour": "red"}},
            "'colour': not declared",
        ),
        ({"sources": source, "tenant": "a", "metadata": {"version": 3}}, "expected a string"),
        ({"sources": source, "tenant": "a", "metadata": {"acl": ["x"] * 65}}, "65 items, more"),
        ({"sources": source, "tenant": "no spaces"}, "tenant 'no spaces'"),
    ]
    for body, reason in cases:
        got = client.post("/jobs", json=body, headers=_as(ADMIN))
        assert got.status_code == 422 and reason in got.json()["detail"], got.text
    no_tenant = client.post("/jobs", json={"sources": source}, headers=_as(ADMIN))
    assert no_tenant.status_code == 422 and "name a tenant" in no_tenant.json()["detail"]
    files = [("file", ("a.pdf", b"%PDF a")), ("file", ("b.pdf", b"%PDF b"))]
    form = {"tenant": "a", "metadata": [json.dumps({"version": "1"})] * 3}
    three = client.post("/jobs", files=files, data=form, headers=_as(ADMIN))
    assert three.status_code == 422 and "3 metadata fields for 2 files" in three.text
    bad = {"tenant": "a", "metadata": json.dumps({"version": "1", "pages": 2})}
    refused = client.post("/jobs", files=files, data=bad, headers=_as(ADMIN))
    assert refused.status_code == 422 and "a.pdf: metadata key 'pages'" in refused.text
    assert _queued(settings) == queued
    stored = list(settings.upload_dir.rglob("*.pdf")) if settings.upload_dir.exists() else []
    assert stored == []  # refused before the uploads were written


def test_uploads_carry_their_own_metadata_and_the_docs_show_the_fields(
    service_env: dict[str, str], root: Path, settings: Settings
):
    files = [("file", ("a.pdf", b"%PDF a")), ("file", ("b.pdf", b"%PDF b"))]
    form = {"tenant": "a", "metadata": [json.dumps({"version": "1"}), json.dumps({"acl": ["t"]})]}
    with TestClient(create_app(settings)) as c:
        made = c.post("/jobs", files=files, data=form, headers=_as(TOKEN_A))
    assert made.status_code == 202, made.text
    r = redis_client(settings)
    bodies = [json.loads(m) for m in r.lrange(settings.tasks.queue, 0, -1)]
    kwargs = [json.loads(__import__("base64").b64decode(b["body"]))[1] for b in bodies]
    assert sorted(json.dumps(k.get("metadata"), sort_keys=True) for k in kwargs) == [
        '{"acl": ["t"]}',
        '{"version": "1"}',
    ]
    assert {k["tenant"] for k in kwargs} == {"a"}
    open_docs = _settings(service_env, root)  # no token: the schema is served
    with TestClient(create_app(open_docs)) as c:
        schema = c.get("/openapi.json").json()
    content = schema["paths"]["/jobs"]["post"]["requestBody"]["content"]
    for kind in ("application/json", "multipart/form-data"):
        props = content[kind]["schema"]["properties"]
        assert {"metadata", "tenant"} <= set(props), kind
    assert "acl" in content["application/json"]["schema"]["properties"]["metadata"]["description"]
    assert "tenant" in schema["components"]["schemas"]["JobState"]["properties"]

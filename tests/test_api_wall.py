"""Tenants as a wall on the API and the dashboard (issue 37, items 9, 10, 12, 16).

With tenant tokens configured and no main token, ``/ui`` answers nobody anonymous,
and a tenant's token sees only its own jobs there; store-wide routes need the main
token; a non-finite page cursor is a 422, not a 500; every response carries the
security headers and the HTML pages a CSP that allows no inline script but their own.
Real Redis, no workers.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from chunkweave.storage.config import WeaviateConfig
from chunkweave.worker.api import check_bind, create_app
from chunkweave.worker.jobs import JobStore
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import Settings, SourcesConfig

pytestmark = pytest.mark.integration
ADMIN, TOKEN_A, TOKEN_B = "wall-admin", "wall-token-a", "wall-token-b"


def _settings(env: dict[str, str], root: Path, **extra: object) -> Settings:
    fields: dict[str, object] = {
        "redis_url": env["CHUNKWEAVE_REDIS_URL"],
        "tasks": {"queue": env["CHUNKWEAVE_QUEUE"]},
        "data_dir": Path(env["CHUNKWEAVE_DATA_DIR"]),
        "sources": SourcesConfig(roots=(root,)),
        "weaviate": WeaviateConfig(multi_tenancy=True),
        "api": {"tenant_tokens": {"a": TOKEN_A, "b": TOKEN_B}, **extra.pop("api", {})},
    }
    return Settings(**(fields | extra))  # type: ignore[arg-type]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "allowed"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(b"%PDF report")
    return folder


@pytest.fixture
def tenants_only(service_env: dict[str, str], root: Path) -> Iterator[tuple[TestClient, Settings]]:
    settings = _settings(service_env, root)  # tenant tokens, no main token
    with TestClient(create_app(settings)) as c:
        yield c, settings


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _jobs(settings: Settings) -> tuple[str, str]:
    store = JobStore(redis_client(settings), ttl_s=settings.tasks.job_ttl_s)
    return store.create(tenant="a"), store.create(tenant="b")


def test_ui_with_tenant_tokens_answers_no_anonymous_request(tenants_only):
    client, settings = tenants_only
    job_a, job_b = _jobs(settings)
    for path in ("/ui", f"/ui/jobs/{job_a}", "/ui/inspect?doc_id=doc%3A%2F%2Fx&tenant=a"):
        bare = client.get(path)
        assert bare.status_code == 401, path
        assert job_a not in bare.text and job_b not in bare.text, path
        forged = client.get(path, headers={"Cookie": f"chunkweave_ui={TOKEN_A}"})
        assert forged.status_code == 401, path
    # The API itself, likewise: only /healthz is open.
    assert client.get("/jobs").status_code == 401
    assert client.get("/healthz").status_code == 200


def test_a_tenant_sees_only_its_own_jobs_on_the_ui(tenants_only):
    client, settings = tenants_only
    job_a, job_b = _jobs(settings)
    listed = client.get("/ui?limit=200", headers=_as(TOKEN_A))
    assert listed.status_code == 200
    assert job_a in listed.text and job_b not in listed.text
    assert client.get(f"/ui/jobs/{job_a}", headers=_as(TOKEN_A)).status_code == 200
    assert client.get(f"/ui/jobs/{job_b}", headers=_as(TOKEN_A)).status_code == 404
    # Signed in by cookie with B's token: B's view.
    login = client.post("/ui/login", data={"token": TOKEN_B}, follow_redirects=False)
    assert login.status_code == 303
    cookie = login.cookies.get("chunkweave_ui")
    assert cookie and TOKEN_B not in cookie
    by_cookie = client.get("/ui?limit=200", headers={"Cookie": f"chunkweave_ui={cookie}"})
    assert job_b in by_cookie.text and job_a not in by_cookie.text
    wrong = client.post("/ui/login", data={"token": "not-a-token"})
    assert wrong.status_code == 401 and "wrong token" in wrong.text


def test_inspect_names_the_tenant_it_reads(service_env, root):
    settings = _settings(service_env, root, api={"token": ADMIN})
    with TestClient(create_app(settings)) as client:
        # A's token may not read B's tenant; the main token must name one (multi-tenant).
        other = client.get("/ui/inspect?doc_id=doc%3A%2F%2Fx&tenant=b", headers=_as(TOKEN_A))
        assert other.status_code == 403 and "own tenant" in other.text
        unnamed = client.get("/ui/inspect?doc_id=doc%3A%2F%2Fx", headers=_as(ADMIN))
        assert unnamed.status_code == 422 and "name a tenant" in unnamed.text


def test_reindex_needs_the_main_token(service_env, root):
    settings = _settings(service_env, root, api={"token": ADMIN})
    with TestClient(create_app(settings)) as client:
        for token in (TOKEN_A, TOKEN_B):
            started = client.post("/reindex", json={"strategy": "fixed"}, headers=_as(token))
            assert started.status_code == 403 and "main token" in started.json()["detail"]
            assert client.get("/reindex", headers=_as(token)).status_code == 403
        assert client.post("/reindex", json={}).status_code == 401
        # The main token gets past the wall (what follows is the reindex's own answer).
        assert client.get("/reindex", headers=_as(ADMIN)).status_code not in (401, 403)


@pytest.mark.parametrize("cursor", ["nan", "inf", "-inf", "-1", "x"])
def test_a_bad_page_cursor_is_a_422(tenants_only, cursor: str):
    client, _ = tenants_only
    for path in ("/jobs", "/ui"):
        resp = client.get(f"{path}?cursor={cursor}", headers=_as(TOKEN_A))
        assert resp.status_code == 422, (path, resp.status_code, resp.text[:200])


def test_job_store_refuses_a_non_finite_cursor(tenants_only):
    _, settings = tenants_only
    store = JobStore(redis_client(settings), ttl_s=settings.tasks.job_ttl_s)
    with pytest.raises(ValueError, match="creation time"):
        store.page(cursor=float("nan"))


def _script_hashes(policy: str) -> set[str]:
    (script_src,) = [d for d in policy.split(";") if d.strip().startswith("script-src")]
    return set(re.findall(r"'sha256-[A-Za-z0-9+/=]+'", script_src))


def test_security_headers_and_a_csp_without_inline_script(tenants_only):
    client, settings = tenants_only
    _jobs(settings)
    for path in ("/healthz", "/jobs", "/ui"):
        resp = client.get(path, headers=_as(TOKEN_A))
        assert resp.headers["x-content-type-options"] == "nosniff", path
        assert resp.headers["referrer-policy"] == "no-referrer", path
    page = client.get("/ui", headers=_as(TOKEN_A))
    policy = page.headers["content-security-policy"]
    assert "unsafe-inline" not in next(d for d in policy.split(";") if "script-src" in d)
    assert "onchange=" not in page.text
    # Every script on the page is one the policy pins, and the policy pins no other.
    scripts = re.findall(r"<script>(.*?)</script>", page.text, re.S)
    hashes = {
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in scripts
    }
    assert scripts and hashes == _script_hashes(policy)


def test_inspector_report_pins_its_script():
    from chunkweave.worker.inspect.report import build_report
    from chunkweave.worker.inspect.write import render_report, report_csp

    html = render_report(build_report([], source="/x/a.docx", format="docx"))
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    (policy,) = re.findall(r"Content-Security-Policy' content=\"([^\"]+)\"", html)
    assert policy == report_csp() and "unsafe-inline" not in policy.split("script-src")[1]
    digest = hashlib.sha256(scripts[-1].encode()).digest()
    assert "'sha256-" + base64.b64encode(digest).decode() + "'" in _script_hashes(policy)


def test_tenant_tokens_alone_guard_a_public_bind(service_env, root):
    assert check_bind("0.0.0.0", _settings(service_env, root), insecure=False) is None

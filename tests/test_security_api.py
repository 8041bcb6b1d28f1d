"""The HTTP API as an attacker on the network meets it (real Redis, real S3).

Each test replays one attack and checks it fails with the intended status and leaves
nothing queued, written or changed.
"""

from __future__ import annotations

import json
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest
import redis
from fastapi.testclient import TestClient

from chunkweave.worker.api import create_app
from chunkweave.worker.api import routes as api_routes
from chunkweave.worker.jobs import JOBS_INDEX, JobStore
from chunkweave.worker.settings import Settings, SourcesConfig
from chunkweave.worker.webhook import WebhookRefusedError, deliver, redact, resolve
from tests.fixtures_services import ROOT, S3Server, WorkerProcs, wait_for
from tests.standin_pipeline import FACTORY

pytestmark = pytest.mark.integration
TOKEN = "t0ken-for-tests"


def _settings(env: dict[str, str], **extra: object) -> Settings:
    fields: dict[str, object] = {
        "redis_url": env["CHUNKWEAVE_REDIS_URL"],
        "queue": env["CHUNKWEAVE_QUEUE"],
        "data_dir": Path(env["CHUNKWEAVE_DATA_DIR"]),
        "api_token": TOKEN,
        "webhook_secret": "hook-key",
    }
    return Settings(**(fields | extra))  # type: ignore[arg-type]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "allowed"
    folder.mkdir()
    (folder / "inside.pdf").write_bytes(b"%PDF inside")
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "secret.pdf").write_bytes(b"%PDF secret")
    return folder


@pytest.fixture
def client(service_env: dict[str, str], root: Path) -> Iterator[TestClient]:
    settings = _settings(
        service_env,
        sources=SourcesConfig(roots=(root,), buckets=("allowed-bucket",), max_files_per_job=5),
        max_json_bytes=4096,
        max_upload_bytes=2048,
    )
    with TestClient(create_app(settings), headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        yield c


def _job_count(client: TestClient) -> int:
    enq = client.app.state.enqueuer  # type: ignore[attr-defined]
    return int(enq.redis.zcard(JOBS_INDEX))


# Sources confined to roots and buckets, one error for missing/forbidden.


def test_sources_outside_the_roots_read_as_missing(client: TestClient, root, outside, tmp_path):
    (root / "escape.pdf").symlink_to(outside / "secret.pdf")
    (root / "dir-escape").symlink_to(outside, target_is_directory=True)
    before = _job_count(client)
    probes = [
        "/usr",
        "/etc/shadow",  # exists
        "/root/.ssh/id_rsa_does_not_exist",  # does not
        str(outside / "secret.pdf"),
        str(root / "escape.pdf"),  # a link inside a root, to a file outside
        str(root / "dir-escape"),
        str(root / ".." / "elsewhere" / "secret.pdf"),
        str(root / "missing.pdf"),
        "s3://other-bucket/",
        "s3://other-bucket/key.pdf",
    ]
    answers = {}
    for source in probes:
        resp = client.post("/jobs", json={"sources": [source]})
        answers[source] = (resp.status_code, resp.json()["detail"].replace(source, "<src>"))
    # Existing and missing, allowed-but-missing and forbidden: one answer, no oracle.
    assert set(answers.values()) == {
        (404, "<src>: not found, or not under an allowed root or bucket")
    }, answers
    # Relative paths would resolve against the API's working folder; malformed URIs.
    for source in ("inside.pdf", "allowed/inside.pdf", "s3://", "s3:///key.pdf"):
        assert client.post("/jobs", json={"sources": [source]}).status_code == 422, source
    assert _job_count(client) == before  # nothing was queued
    # The folder itself works, and its walk does not follow the escaping links.
    resp = client.post("/jobs", json={"sources": [str(root)]})
    assert resp.status_code == 202
    job = client.get(f"/jobs/{resp.json()['job_id']}").json()
    assert [Path(d["source"]).name for d in job["docs"]] == ["inside.pdf"]


def test_only_allow_listed_buckets_are_listed(service_env, s3_server: S3Server, tmp_path: Path):
    settings = _settings(
        service_env,
        s3={"endpoint_url": s3_server.endpoint_url, "access_key_id": "t", "secret_access_key": "t"},
        sources=SourcesConfig(buckets=(s3_server.bucket,)),
    )
    with TestClient(create_app(settings), headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        ok = c.post("/jobs", json={"sources": [f"s3://{s3_server.bucket}/nothing-here/"]})
        assert ok.status_code == 202, ok.text
        gone = c.post("/jobs", json={"sources": ["s3://no-such-bucket-anywhere/"]})
        assert gone.status_code == 404


def test_a_job_holds_at_most_max_files(client: TestClient, root: Path):
    for i in range(6):
        (root / f"many{i}.pdf").write_bytes(b"%PDF many")
    before = _job_count(client)
    resp = client.post("/jobs", json={"sources": [str(root)]})
    assert resp.status_code == 413 and "more than 5 documents" in resp.json()["detail"]
    assert _job_count(client) == before


# No open API on the network.


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_api_refuses_a_public_bind_without_a_token(service_env: dict[str, str]):
    env = {k: v for k, v in service_env.items() if k != "CHUNKWEAVE_API_TOKEN"}
    cli = str(Path(sys.executable).parent / "chunkweave")
    port = _free_port()
    proc = subprocess.run(
        [cli, "api", "--host", "0.0.0.0", "--port", str(port)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "refusing to serve the API on 0.0.0.0 without a token" in proc.stderr
    serve = subprocess.run(
        [cli, "serve", "--host", "0.0.0.0", "--api-port", str(port)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert serve.returncode == 1 and "without a token" in serve.stderr
    # --insecure is an explicit, logged choice.
    with subprocess.Popen(
        [cli, "api", "--host", "0.0.0.0", "--port", str(port), "--insecure"],
        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True,
    ) as insecure:  # fmt: skip
        try:
            wait_for(lambda: _answers(f"http://127.0.0.1:{port}/healthz"), timeout_s=60, what="api")
        finally:
            insecure.terminate()
        _, err = insecure.communicate(timeout=30)
    assert "WARNING: the API on 0.0.0.0 has no token" in err


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_compose_requires_an_api_token():
    compose = (ROOT / "docker-compose.yml").read_text()
    assert "CHUNKWEAVE_API_TOKEN: ${CHUNKWEAVE_API_TOKEN:?" in compose


# Webhooks are no SSRF channel.


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/v1/schema",
        "http://localhost:6060/debug/pprof/heap",
        "http://[::1]:8080/",
        "http://10.0.0.7/hook",
        "http://192.168.1.1/hook",
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata (link-local)
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0:8080/",
    ],
)
def test_webhook_to_internal_addresses_is_refused_before_connecting(url: str):
    with pytest.raises(WebhookRefusedError, match="non-public address"):
        deliver(url, b"{}", secret="k", timeout_s=1)


def test_webhook_allow_list_and_schemes():
    assert str(resolve("http://127.0.0.1:9/", allow=("127.0.0.1",))) == "127.0.0.1"
    assert str(resolve("http://127.0.0.1:9/", allow=("127.0.0.0/8",))) == "127.0.0.1"
    for url in ("file:///etc/passwd", "gopher://example.org/", "ftp://example.org/x", "http:///x"):
        with pytest.raises(WebhookRefusedError, match="only http"):
            resolve(url)
    assert redact("https://user:pw@hooks.example.org:8443/t/SECRET?sig=1") == (
        "https://hooks.example.org:8443/…"
    )


def test_webhook_urls_are_checked_signed_and_redacted(client: TestClient, root: Path, service_env):
    bad = client.post("/jobs", json={"sources": [str(root)], "webhook_url": "file:///etc/passwd"})
    assert bad.status_code == 422 and "only http" in bad.json()["detail"]
    url = "https://hooks.example.org/path/with-token-123?key=abc"
    resp = client.post("/jobs", json={"sources": [str(root)], "webhook_url": url})
    assert resp.status_code == 202
    shown = json.dumps(client.get(f"/jobs/{resp.json()['job_id']}").json(), ensure_ascii=False)
    listed = json.dumps(client.get("/jobs").json(), ensure_ascii=False)
    for text in (shown, listed):
        assert "with-token-123" not in text and "key=abc" not in text
        assert "https://hooks.example.org/…" in text
    # Unsigned webhooks do not exist: with no secret, a job cannot ask for one.
    unsigned = _settings(service_env, sources=SourcesConfig(roots=(root,)), webhook_secret=None)
    with TestClient(create_app(unsigned), headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        refused = c.post("/jobs", json={"sources": [str(root)], "webhook_url": url})
    assert refused.status_code == 422 and "CHUNKWEAVE_WEBHOOK_SECRET" in refused.json()["detail"]


# Body limits on the bytes, not on Content-Length.


def _send_chunked(port: int, content_type: str, total: int, first: bytes = b"") -> int:
    """Stream ``total`` bytes as a chunked ``POST /jobs``; return the status the server gave.

    Stops sending as soon as the server answers (it may answer before the body ends).
    """
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = (
        f"POST /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    block = b"x" * 65536
    answer = b""
    try:
        sock.sendall(head.encode())
        if first:
            sock.sendall(b"%x\r\n%s\r\n" % (len(first), first))
        sent = 0
        while sent < total:
            sock.sendall(b"%x\r\n%s\r\n" % (len(block), block))
            sent += len(block)
            if select.select([sock], [], [], 0)[0]:
                break  # the server has answered
        else:
            sock.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        answer = sock.recv(4096)
    finally:
        sock.close()
    return int(answer.split(b" ", 2)[1])


@pytest.fixture
def api_server(service_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[int, Path, int]]:
    """A real ``chunkweave api`` (uvicorn) with small limits: (port, its temp dir, pid)."""
    spool = tmp_path / "spool"
    spool.mkdir()
    port = _free_port()
    env = dict(
        service_env,
        TMPDIR=str(spool),
        CHUNKWEAVE_API_TOKEN=TOKEN,
        CHUNKWEAVE_MAX_JSON_BYTES="4096",
        CHUNKWEAVE_MAX_UPLOAD_BYTES=str(1024 * 1024),
    )
    cli = str(Path(sys.executable).parent / "chunkweave")
    proc = subprocess.Popen(
        [cli, "api", "--port", str(port)], cwd=ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(lambda: _answers(f"http://127.0.0.1:{port}/healthz"), timeout_s=60, what="api")
        yield port, spool, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_chunked_bodies_are_cut_off_at_the_limit(api_server, service_env):
    port, spool, pid = api_server
    server = psutil.Process(pid)
    rss_before = server.memory_info().rss
    index = redis.Redis.from_url(service_env["CHUNKWEAVE_REDIS_URL"])
    queued_before = index.zcard(JOBS_INDEX)
    total = 256 * 1024 * 1024  # far past both limits, with no Content-Length to trust
    assert _send_chunked(port, "application/json", total) == 413
    part = (
        b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\n'
        b"Content-Type: application/pdf\r\n\r\n%PDF-"
    )
    assert _send_chunked(port, "multipart/form-data; boundary=xyz", total, part) == 413
    # Neither body was held in memory nor spooled to disk.
    assert server.memory_info().rss - rss_before < 64 * 1024 * 1024
    spooled = sum(f.stat().st_size for f in spool.rglob("*") if f.is_file())
    assert spooled < 2 * 1024 * 1024
    # A body that says it is huge is refused before it is read.
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(
            b"POST /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + TOKEN.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n{}"
        )
        assert sock.recv(4096).split(b" ", 2)[1] == b"413"
    assert index.zcard(JOBS_INDEX) == queued_before  # nothing was queued
    index.close()


# Blocking work off the event loop.


def test_a_slow_source_walk_does_not_stall_healthz(service_env, root: Path, monkeypatch):
    walking, release = threading.Event(), threading.Event()
    real = api_routes.expand_confined

    def slow(uri: str, settings: Settings) -> list[str]:
        walking.set()
        release.wait(30)
        return real(uri, settings)

    monkeypatch.setattr(api_routes, "expand_confined", slow)
    settings = _settings(service_env, sources=SourcesConfig(roots=(root,)))
    with TestClient(create_app(settings), headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        posted: list[int] = []
        poster = threading.Thread(
            target=lambda: posted.append(c.post("/jobs", json={"sources": [str(root)]}).status_code)
        )
        poster.start()
        assert walking.wait(10)
        started = time.monotonic()
        assert c.get("/healthz").status_code == 200  # answered while the walk is under way
        assert time.monotonic() - started < 2
        release.set()
        poster.join(30)
    assert posted == [202]


# Docs off with a token, /healthz without internals.


def test_healthz_says_nothing_about_internals(service_env: dict[str, str]):
    port = _free_port()  # nothing listens there
    dead = Settings(redis_url=f"redis://127.0.0.1:{port}/0", queue="q", api_token=TOKEN)
    with TestClient(create_app(dead)) as c:
        resp = c.get("/healthz")
    assert resp.status_code == 503
    assert resp.json() == {"status": "unavailable", "parts": {"redis": {"status": "down"}}}
    assert str(port) not in resp.text


# Uploads do not pile up.


@pytest.mark.parametrize("retention", ["delete", "keep"])
def test_uploads_are_deleted_once_stored(service_env, workers: WorkerProcs, tmp_path, retention):
    env = dict(
        service_env,
        CHUNKWEAVE_PIPELINE_FACTORY=FACTORY,
        STANDIN_NS=tmp_path.name,
        CHUNKWEAVE_UPLOAD_RETENTION=retention,
    )
    workers.start(env)
    settings = _settings(env, upload_retention=retention)
    upload_dir = settings.upload_dir
    with TestClient(create_app(settings), headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        job_id = c.post(
            "/jobs", files=[("file", ("up.pdf", b"%PDF up", "application/pdf"))]
        ).json()["job_id"]
        job = wait_for(
            lambda: (j := c.get(f"/jobs/{job_id}").json())["status"] == "done" and j,
            timeout_s=60,
            what="upload processed",
        )
        stored = Path(job["docs"][0]["source"])  # type: ignore[index]
        assert stored.is_relative_to(upload_dir)
        if retention == "keep":
            assert stored.exists()
            # Deleting the document deletes its upload, whatever the retention.
            doc_id = job["docs"][0]["doc_id"]  # type: ignore[index]
            delete_job = c.delete(f"/documents/{doc_id}").json()["job_id"]
            wait_for(
                lambda: c.get(f"/jobs/{delete_job}").json()["status"] == "done",
                timeout_s=60,
                what="delete processed",
            )
        assert not stored.exists() and not stored.parent.exists()


# Listing is paged and bounded.


def test_job_listing_is_paged_and_reads_a_bounded_slice(service_env: dict[str, str]):
    client = redis.Redis.from_url(service_env["CHUNKWEAVE_REDIS_URL"])
    jobs = JobStore(client, ttl_s=600)
    created = [jobs.create() for _ in range(7)]
    for job_id in created:
        jobs.seal(job_id)  # empty and sealed: "done"
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page, cursor = jobs.page(limit=3, cursor=cursor)
        seen += [j.id for j in page]
        pages += 1
        if cursor is None:
            break
    assert seen[: len(created)] == created[::-1]  # newest first, each once
    assert len(seen) == len(set(seen))
    # A filter nothing matches returns an empty page with a cursor: the request read a
    # bounded slice of the index, not the whole of it.
    page, cursor = jobs.page(status="failed", limit=1)
    assert page == [] and cursor is not None
    client.close()

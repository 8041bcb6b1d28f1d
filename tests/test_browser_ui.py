"""The ``/ui`` dashboard of a real ``chunkweave api`` (uvicorn) in headless Chromium.

Real Redis, Weaviate and Celery worker: a corpus PDF is submitted over HTTP and
ingested; the dashboard then refuses everything without the token, lists the
finished job after signing in, shows its document's stage timings as a bar, and
opens the document's inspector view built from the stored chunks.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from chunkweave.chunking import Chunk
from chunkweave.storage.identity import doc_id_for
from chunkweave.worker.cli import main
from tests.browser_helpers import browser, save_screenshot
from tests.fixtures_services import ROOT, WorkerProcs, wait_for

__all__ = ["browser"]
pytestmark = pytest.mark.integration

TOKEN = "ui-test-token-0123456789"
PDF = "2305.03393v1-pg9.pdf"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def docs_root(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    return root


@pytest.fixture
def api(pipeline_env: dict[str, str], docs_root: Path, tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    env = dict(
        pipeline_env,
        CHUNKWEAVE_API_TOKEN=TOKEN,
        CHUNKWEAVE_SOURCES__ROOTS=json.dumps([str(docs_root)]),
    )
    cli = str(Path(sys.executable).parent / "chunkweave")
    with open(tmp_path / "api.log", "wb") as log:
        proc = subprocess.Popen(
            [cli, "api", "--port", str(port)], cwd=ROOT, env=env, stdout=log, stderr=log
        )
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(f"{url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_for(up, timeout_s=60, what="chunkweave api")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _finished_job(api: str, source: Path, workers: WorkerProcs) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    resp = httpx.post(f"{api}/jobs", json={"sources": [str(source)]}, headers=auth, timeout=30)
    assert resp.status_code == 202, resp.text
    job_id = resp.json()["job_id"]

    def done() -> dict[str, Any] | None:
        job = httpx.get(f"{api}/jobs/{job_id}", headers=auth, timeout=10).json()
        return job if job.get("finished_at") else None

    try:
        job = wait_for(done, timeout_s=180, what=f"job {job_id}", interval_s=0.5)
    except pytest.fail.Exception:
        print(workers.logs()[-5000:])
        raise
    assert isinstance(job, dict)
    return job


def test_ui_refuses_without_the_token_then_shows_the_finished_job(
    api: str,
    browser: Any,
    corpus: Path,
    docs_root: Path,
    workers: WorkerProcs,
    pipeline_env: dict[str, str],
) -> None:
    source = Path(shutil.copy(corpus / PDF, docs_root / PDF))
    broken = docs_root / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\n" + b"\x00garbage" * 64)
    workers.start(pipeline_env)
    job = _finished_job(api, source, workers)
    assert job["status"] == "done", job
    bad = _finished_job(api, broken, workers)
    assert bad["status"] == "failed", bad
    (bad_doc,) = bad["docs"]
    assert bad_doc["error_code"], bad_doc
    (doc,) = job["docs"]
    assert doc["timings"], doc
    doc_id = doc_id_for(source)

    # Nothing under /ui answers without the token (no cookie, a forged one, a wrong one).
    for path in ("/ui", f"/ui/jobs/{job['id']}", "/ui/inspect?doc_id=" + doc_id):
        bare = httpx.get(api + path, timeout=10)
        assert bare.status_code == 401 and job["id"] not in bare.text, path
        forged = httpx.get(api + path, cookies={"chunkweave_ui": TOKEN}, timeout=10)
        assert forged.status_code == 401, path
    wrong = httpx.post(f"{api}/ui/login", data={"token": "not-it"}, timeout=10)
    assert wrong.status_code == 401 and "wrong token" in wrong.text

    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    first = page.goto(f"{api}/ui")
    assert first is not None and first.status == 401
    page.fill("#token", TOKEN)
    page.click("button[type=submit]")
    page.wait_for_url(f"{api}/ui")
    # A long page: jobs other tests add meanwhile (one Redis per session) do not push ours off.
    page.goto(f"{api}/ui?limit=200")
    row = page.locator(f"tr.job[data-job='{job['id']}']")
    assert row.count() == 1
    assert row.locator(".st").inner_text() == "done"
    assert page.locator(f"tr.job[data-job='{bad['id']}'] .st").inner_text() == "failed"
    # The status filter: a failed-only list holds the failed job, not the done one.
    page.select_option("select[name=status]", "failed")
    page.wait_for_url("**/ui?status=failed*")
    assert page.locator(f"tr.job[data-job='{job['id']}']").count() == 0
    page.locator(f"tr.job[data-job='{bad['id']}'] a").click()
    page.wait_for_url(f"**/ui/jobs/{bad['id']}")
    failed_row = page.locator("tr.doc")
    assert failed_row.locator(".st").inner_text() == "failed"
    assert failed_row.locator(".err code").inner_text() == bad_doc["error_code"]
    assert failed_row.locator("a.inspect").count() == 0
    page.goto(f"{api}/ui?limit=200")

    row.locator("a").click()
    page.wait_for_url(f"**/ui/jobs/{job['id']}")
    doc_row = page.locator("tr.doc")
    assert doc_row.count() == 1
    stages = doc_row.locator(".bar .stage")
    assert stages.count() == len(doc["timings"])
    names = [stages.nth(i).get_attribute("data-stage") for i in range(stages.count())]
    assert names == list(doc["timings"])
    text = doc_row.locator(".timings").inner_text()
    for stage, secs in doc["timings"].items():
        assert f"{stage} {secs:.2f} s" in text
    widths = page.evaluate(
        "[...document.querySelectorAll('tr.doc .bar .stage')]"
        ".map(s => s.getBoundingClientRect().width)"
    )
    bar = doc_row.locator(".bar").bounding_box()
    assert bar is not None and abs(sum(widths) - bar["width"]) < 2
    save_screenshot(page.locator("body").screenshot(), "dashboard.png")

    # The inspector view of the stored chunks: the page drawn from the source.
    doc_row.locator("a.inspect").click()
    page.wait_for_function(
        "() => { const i = document.querySelector('#page-1 img.page-img');"
        " return i && i.complete && i.naturalWidth > 0; }"
    )
    printed = CliRunner().invoke(main, ["chunk", str(source), "--format", "jsonl"])
    assert printed.exit_code == 0, printed.output
    chunks = [Chunk.model_validate_json(line) for line in printed.stdout.splitlines() if line]
    shown = page.evaluate("JSON.parse(document.getElementById('report-data').textContent).chunks")
    assert [c["id"] for c in shown] == [c.id for c in chunks]
    drawn = page.evaluate(
        "[...document.querySelectorAll('#page-1 .region')].map(r => Number(r.dataset.chunk))"
    )
    assert sorted(set(drawn)) == [i for i, c in enumerate(chunks) if c.regions]
    box = page.locator("#page-1 .region").first.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    assert page.locator("#detail .f-id").inner_text() in {c.id for c in chunks}
    assert "not stored" in page.locator("#detail").inner_text()
    context.close()


def test_inspector_view_draws_pages_only_from_an_unchanged_pdf_under_the_roots(
    tmp_path: Path, corpus: Path
) -> None:
    from chunkweave.parsers.document import file_sha1
    from chunkweave.worker.api.ui import readable_source
    from chunkweave.worker.settings import Settings, SourcesConfig

    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    inside = Path(shutil.copy(corpus / PDF, root / PDF))
    sha = file_sha1(inside)
    settings = Settings(sources=SourcesConfig(roots=(root,)), data_dir=tmp_path / "data")
    assert readable_source(str(inside), sha, settings) == (str(inside.resolve()), None)
    assert readable_source(inside.as_uri(), sha, settings)[0] == str(inside.resolve())
    away = Path(shutil.copy(inside, outside / PDF))
    assert readable_source(str(away), sha, settings) == (
        None,
        "the source is outside the allowed roots",
    )
    (root / "link.pdf").symlink_to(away)
    assert readable_source(str(root / "link.pdf"), sha, settings)[0] is None
    assert readable_source(str(inside), "0" * 40, settings)[1] == (
        "the source changed since it was ingested"
    )
    (root / "a.docx").write_bytes(b"PK\x03\x04")
    assert readable_source(str(root / "a.docx"), sha, settings)[1] == "the source is not a PDF"
    assert readable_source("s3://bucket/x.pdf", sha, settings)[0] is None
    assert readable_source(str(root / "gone.pdf"), sha, settings)[1] == (
        "the source is no longer readable"
    )

"""`chunkweave status --json` shows a webhook URL redacted, as the API does (issue 37 item 14)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from chunkweave.worker.cli import main
from chunkweave.worker.settings import get_settings

pytestmark = pytest.mark.integration

SECRET_PARTS = ("tok-8c1f", "key=abc123")
URL = "https://hooks.example.org/in/tok-8c1f?key=abc123"


@pytest.fixture
def cli_env(service_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key, value in service_env.items():
        if key.startswith("CHUNKWEAVE_"):
            monkeypatch.setenv(key, value)
    monkeypatch.setenv("CHUNKWEAVE_WEBHOOK_SECRET", "s3cret")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_status_json_never_prints_a_webhook_secret(cli_env, tmp_path: Path):
    doc = tmp_path / "a.pdf"
    doc.write_bytes(b"%PDF-1.4 status redaction")
    runner = CliRunner()
    out = runner.invoke(main, ["enqueue", "--json", "--webhook", URL, str(doc)])
    assert out.exit_code == 0, out.output
    job_id = json.loads(out.output)["job_id"]

    one = runner.invoke(main, ["status", job_id, "--json"])
    listing = runner.invoke(main, ["status", "--json", "--limit", "50"])
    assert one.exit_code == 0 and listing.exit_code == 0, (one.output, listing.output)
    assert json.loads(one.output)["webhook_url"] == "https://hooks.example.org/…"
    listed = [j for j in json.loads(listing.output) if j["id"] == job_id]
    assert listed and listed[0]["webhook_url"] == "https://hooks.example.org/…"
    for text in (one.output, listing.output):
        for part in SECRET_PARTS:
            assert part not in text

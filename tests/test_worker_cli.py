"""Service CLI commands against a real Redis: enqueue, backfill, status, worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from chunkweave.worker.cli import main
from chunkweave.worker.settings import get_settings
from tests.fixtures_services import ROOT, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture
def cli_env(service_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    for key, value in service_env.items():
        if key.startswith("CHUNKWEAVE_"):
            monkeypatch.setenv(key, value)
    get_settings.cache_clear()
    yield service_env
    get_settings.cache_clear()


def _docs(root: Path, n: int) -> Path:
    root.mkdir(parents=True)
    for i in range(n):
        (root / f"f{i}.pdf").write_bytes(b"%%PDF cli %d" % i)
    (root / ".hidden.pdf").write_bytes(b"%PDF hidden")
    return root


def test_enqueue_backfill_and_status(cli_env, tmp_path: Path):
    runner = CliRunner()
    folder = _docs(tmp_path / "in", 3)
    out = runner.invoke(main, ["enqueue", "--json", str(folder / "f0.pdf")])
    assert out.exit_code == 0, out.output
    job_id = json.loads(out.output)["job_id"]
    back = runner.invoke(main, ["backfill", "--no-wait", str(folder)])
    assert back.exit_code == 0, back.output
    assert "3 documents" in back.output and "3 queued" in back.output

    status = runner.invoke(main, ["status", job_id, "--json"])
    assert status.exit_code == 0, status.output
    job = json.loads(status.output)
    assert (job["status"], job["total"], job["queued"]) == ("queued", 1, 1)
    listing = runner.invoke(main, ["status", "--status", "queued"])
    assert job_id in listing.output
    human = runner.invoke(main, ["status", job_id])
    assert "queued" in human.output and "f0.pdf" in human.output

    missing = runner.invoke(main, ["status", "no-such-job"])
    assert missing.exit_code != 0 and "not found" in missing.output
    gone = runner.invoke(main, ["enqueue", str(tmp_path / "nope.pdf")])
    assert gone.exit_code == 1 and "nope.pdf" in gone.output


def test_commands_without_redis_say_what_to_set(monkeypatch, tmp_path: Path):
    monkeypatch.delenv("CHUNKWEAVE_REDIS_URL", raising=False)
    get_settings.cache_clear()
    try:
        out = CliRunner().invoke(main, ["status"])
    finally:
        get_settings.cache_clear()
    assert out.exit_code == 1 and "CHUNKWEAVE_REDIS_URL" in out.output


def test_worker_command_starts_and_stops_warmly(pipeline_env, tmp_path: Path):
    # With Redis and Weaviate configured (without Weaviate the worker refuses to start:
    # tests/test_discovery.py).
    log = tmp_path / "worker.log"
    cmd = [str(Path(sys.executable).parent / "chunkweave"), "worker", "--concurrency", "1"]
    with open(log, "wb") as fh:
        out = {"stdout": fh, "stderr": subprocess.STDOUT}
        proc = subprocess.Popen(cmd, cwd=ROOT, env=pipeline_env, **out)  # type: ignore[call-overload]
    try:
        wait_for(lambda: " ready." in log.read_text(), timeout_s=60, what="worker ready")
        assert pipeline_env["CHUNKWEAVE_QUEUE"] in log.read_text()
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()

"""A reindex after HTTP uploads names, before it starts, the documents it cannot rebuild.

Two documents uploaded over HTTP are stored by real workers; the uploads are deleted
once stored (the default retention). ``POST /reindex`` (dry run, start, rollback) and
``chunkweave reindex`` then say which documents cannot be rebuilt and why, instead of
running to an ``incomplete`` end.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from chunkweave.worker.api import create_app
from chunkweave.worker.settings import Settings
from tests.fixtures_services import ROOT, WorkerProcs, wait_for

pytestmark = pytest.mark.integration
CLI = str(Path(sys.executable).parent / "chunkweave")


def test_reindex_names_the_uploads_it_cannot_rebuild(
    corpus: Path, pipeline_env: dict[str, str], pipeline_settings: Settings, workers: WorkerProcs
):
    workers.start(pipeline_env, concurrency=1)
    with TestClient(create_app(pipeline_settings)) as client:
        files = [
            ("file", (name, (corpus / name).read_bytes(), "application/octet-stream"))
            for name in ("lorem_ipsum.docx", "handbook-1p.docx")
        ]
        job_id = client.post("/jobs", files=files).json()["job_id"]

        def finished() -> bool:
            return client.get(f"/jobs/{job_id}").json()["finished_at"] is not None

        wait_for(finished, timeout_s=240, what="uploads stored", interval_s=0.5)
        assert client.get(f"/jobs/{job_id}").json()["done"] == 2

        plan = client.post("/reindex", json={"dry_run": True, "strategy": "fixed"})
        assert plan.status_code == 200, plan.text
        gone = plan.json()["cannot_rebuild"]
        assert len(gone) == 2 and all("HTTP upload" in why for why in gone.values()), gone
        assert {Path(s).name for s in gone} == {"lorem_ipsum.docx", "handbook-1p.docx"}

        refused = client.post("/reindex", json={"strategy": "fixed"})
        assert refused.status_code == 409, refused.text
        detail = refused.json()["detail"]
        assert "2 stored document(s) cannot be rebuilt" in detail
        assert "CHUNKWEAVE_API__UPLOAD_RETENTION=delete" in detail
        assert client.get("/reindex").status_code == 404  # nothing was started

        back = client.post("/reindex", json={"rollback": True})
        assert back.status_code == 409 and "nothing to roll back to" in back.text, back.text
        both = client.post("/reindex", json={"rollback": True, "dry_run": True})
        assert both.status_code == 422

    env = {**pipeline_env, "PYTHONPATH": str(ROOT)}
    run = {"cwd": ROOT, "env": env, "capture_output": True, "text": True, "timeout": 300}
    dry = subprocess.run([CLI, "reindex", "--dry-run", "--strategy", "fixed"], **run)  # type: ignore[call-overload]
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.count("cannot rebuild: ") == 2, dry.stdout
    started = subprocess.run([CLI, "reindex", "--strategy", "fixed"], **run)  # type: ignore[call-overload]
    assert started.returncode == 1
    assert "cannot be rebuilt" in started.stderr and "upload it again" in started.stderr

"""A worker whose embedder is not the live collection's refuses, naming the reindex command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chunkweave.storage.weaviate.store import WeaviateStore
from tests.fixtures_services import ROOT
from tests.store_helpers import ID16

pytestmark = pytest.mark.integration

CHUNKWEAVE = Path(sys.executable).with_name("chunkweave")


def test_worker_with_another_embedder_refuses_with_the_reindex_command(pipeline_env, weaviate_cfg):
    WeaviateStore.open(weaviate_cfg, ID16).close()  # the live version: a 16-d test embedder
    run = subprocess.run(
        [str(CHUNKWEAVE), "worker", "-c", "1"], env=pipeline_env, cwd=ROOT,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    assert "chunkweave reindex" in run.stderr and "test-embedder (16-d)" in run.stderr
    assert "Traceback" not in run.stderr

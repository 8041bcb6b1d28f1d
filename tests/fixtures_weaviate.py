"""Pytest plugin: a real Weaviate server for the whole test session.

Started through ``chunkweave.storage.weaviate.server.local`` (the project's own starter) on free
loopback ports with a temporary data directory. Set
``CHUNKWEAVE_TEST_WEAVIATE_URL`` (and ``CHUNKWEAVE_TEST_WEAVIATE_GRPC_PORT``) to reuse
a running server instead. Tests get a fresh collection name each (see
``weaviate_cfg``), so they never see each other's objects.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.weaviate.server.local import LocalWeaviate

URL_ENV = "CHUNKWEAVE_TEST_WEAVIATE_URL"
GRPC_ENV = "CHUNKWEAVE_TEST_WEAVIATE_GRPC_PORT"


@pytest.fixture(scope="session")
def weaviate_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WeaviateConfig]:
    """Connection settings of a running real Weaviate (started here unless reused)."""
    url = os.environ.get(URL_ENV)
    if url:
        yield WeaviateConfig(url=url, grpc_port=int(os.environ.get(GRPC_ENV, "50051")))
        return
    data_dir: Path = tmp_path_factory.mktemp("weaviate")
    with LocalWeaviate(data_dir) as server:
        yield server.config(WeaviateConfig(retries=2))


@pytest.fixture
def weaviate_cfg(weaviate_server: WeaviateConfig) -> WeaviateConfig:
    """Settings for this test: the session server with unique collection names."""
    suffix = uuid.uuid4().hex[:10]
    return weaviate_server.model_copy(
        update={"collection": f"TestChunk_{suffix}", "ledger_collection": f"TestLedger_{suffix}"}
    )


@pytest.fixture
def own_weaviate(tmp_path: Path) -> Iterator[LocalWeaviate]:
    """A private server this test may stop and restart (not shared with others)."""
    server = LocalWeaviate(tmp_path / "weaviate")
    try:
        yield server.start()
    finally:
        server.stop()

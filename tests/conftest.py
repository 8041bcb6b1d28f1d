"""Shared test configuration.

Server fixtures live in their own plugin modules, one per real server, each
starting the server through the project's own starter code:
- ``tests/fixtures_weaviate.py``: a real Weaviate (built from its Go module).
- ``tests/fixtures_services.py``: a real Redis and a real S3 server (SeaweedFS ``weed mini``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"

pytest_plugins = [
    name
    for name in ("tests.fixtures_weaviate", "tests.fixtures_services")
    if importlib.util.find_spec(name) is not None
]


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared evaluation corpus (``../shared/corpus`` next to the clone).

    Resolved, as chunkweave records a file's source: with ``../shared`` a symlink,
    tests comparing a stored source with a corpus path still compare like with like.
    """
    if not CORPUS.is_dir():
        pytest.fail(f"shared corpus not found at {CORPUS}")
    return CORPUS.resolve()

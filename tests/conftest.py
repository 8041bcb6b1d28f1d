"""Shared test configuration.

Server fixtures live in their own plugin modules, one per real server, each
starting the server through the project's own starter code:
- ``tests/fixtures_weaviate.py``: a real Weaviate (built from its Go module).
- ``tests/fixtures_services.py``: a real Redis and a real S3 server (SeaweedFS ``weed mini``).

Those servers are session fixtures. Under pytest-xdist (``scripts/test.sh`` runs
``-n 2 --dist loadfile``) the session is one worker's, so each worker starts its own
set on its own free loopback ports, only once one of its tests asks for a server.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[1])
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


@pytest.fixture(scope="session")
def tree_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``pip wheel`` builds from the tree, once per session (or xdist worker)."""
    out = tmp_path_factory.mktemp("pip-wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), ROOT],
        check=True,
        timeout=900,
    )
    (wheel,) = out.glob("chunkweave-*.whl")
    return wheel


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker, order whole files by their number of ``slow`` tests, most first.

    ``--dist loadfile`` hands out files in collection order to whichever worker is free
    (``scripts/test.sh`` turns off xdist's own reordering by test count), so a long file
    handed out last would run alone at the end. Files stay whole and in their own order;
    a run without xdist keeps the plain collection order.
    """
    if not hasattr(config, "workerinput"):
        return
    slow = Counter(str(item.path) for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -slow[str(item.path)])

"""Transitional alias of :mod:`chunkweave.storage.embedded` (the embedded Weaviate).

Only ``tests/test_compose.py`` and ``tests/test_cli_store.py`` still import this path;
delete this module once they import ``chunkweave.storage.embedded.weaviate`` and
``chunkweave.storage.embedded.weaviate_build``.
"""

from chunkweave.storage.embedded.weaviate import LocalWeaviate
from chunkweave.storage.embedded.weaviate_build import PINNED_VERSION

__all__ = ["PINNED_VERSION", "LocalWeaviate"]

"""Opening the chunk store: the one place that names a store implementation.

Everything above it (the pipeline, the CLI) holds a
:class:`chunkweave.storage.protocols.ChunkStore`. Weaviate is the only store, so
there is no choice to make; another store would add its config to ``Settings`` and a
branch here.
"""

from __future__ import annotations

from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.protocols import ChunkStore
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.store import WeaviateStore


def open_store(cfg: WeaviateConfig, identity: EmbedderIdentity) -> ChunkStore:
    """Open the chunk store for vectors of ``identity`` and return it (the caller closes it).

    Connects, creates the chunk and ledger collections if missing and checks the
    embedder identity recorded on them (``EmbedderMismatchError``); closes what it
    opened if that fails.
    """
    return WeaviateStore.open(cfg, identity)

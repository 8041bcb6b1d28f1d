"""What a worker follows after a switch: the live version's recorded chunking."""

from __future__ import annotations

import logging
import urllib.request

from chunkweave.chunking.models import ChunkOptions
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.errors import StoreError
from chunkweave.storage.reindex.spec import ReindexSpec
from chunkweave.storage.weaviate.alias import CATALOG, IndexCatalog
from chunkweave.storage.weaviate.client import WeaviateSession, connect

log = logging.getLogger(__name__)


def reachable(cfg: WeaviateConfig) -> bool:
    """Whether the server answers its liveness endpoint now (one short HTTP probe)."""
    url = f"{(cfg.url or '').rstrip('/')}/v1/.well-known/live"
    try:
        with urllib.request.urlopen(url, timeout=min(3.0, cfg.timeout_s)) as resp:
            return bool(resp.status == 200)
    except (OSError, ValueError):
        return False


def live_chunking(cfg: WeaviateConfig, configured: ChunkOptions) -> ChunkOptions | None:
    """Return the chunk options the live version was built with by ``chunkweave reindex``.

    ``None`` when it was not built by a reindex (created by a first ingest, or an
    adopted plain collection): the configured options apply. When the recorded ones
    differ from ``configured`` they win (the collection holds one chunking), with a
    warning.
    """
    if not cfg.versioned or not cfg.url or not reachable(cfg):
        return None  # the pipeline's own open reports an unreachable server
    try:
        session = WeaviateSession(connect(cfg), cfg)
    except StoreError:
        return None  # the pipeline's own open reports it
    try:
        catalog = IndexCatalog(session)
        if not session.client.collections.exists(CATALOG):
            return None
        live = catalog.live()
    except StoreError:
        return None
    finally:
        session.close()
    if live is None or not live.spec:
        return None
    recorded = ReindexSpec.model_validate_json(live.spec).chunking
    if recorded.strategy != configured.strategy or recorded.min_tokens != configured.min_tokens:
        log.warning(
            "%s was reindexed to %s chunking: using it instead of the configured %s",
            live.collection,
            recorded.strategy,
            configured.strategy,
        )
    return recorded

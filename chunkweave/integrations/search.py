"""Searching the chunk store for a framework's retriever: the project's own search, once.

:class:`ChunkSearch` opens the store as every other reader does
(:func:`chunkweave.storage.stores.open_store`, on the servers
:func:`chunkweave.worker.discovery.discover` settles) with the configured embedder, on
first use, and turns each query into one
:class:`~chunkweave.storage.filters.SearchRequest` (hybrid by default, the
``chunkweave search`` command's), so a retriever sees exactly what the CLI, the HTTP
API and the MCP server see, access rules included.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chunkweave.storage.filters import Condition, SearchRequest, filterable

if TYPE_CHECKING:
    from chunkweave.storage.embedders.base import Embedder
    from chunkweave.storage.hits import Hit
    from chunkweave.storage.protocols import ChunkStore
    from chunkweave.worker.settings import Settings

#: A search's filters: property -> value (equal), or conditions with other operators.
Filters = Mapping[str, Any] | Sequence[Condition]


def conditions(filters: Filters | None, settings: Settings) -> tuple[Condition, ...]:
    """Return ``filters`` as search conditions, all ANDed.

    A mapping means ``property == value`` for each item; a section filter may be a
    citation (``"Section 7.3"``). Raises ``ValueError`` naming a property no search can
    filter on (the chunk's own filterable ones plus the declared metadata keys).
    """
    if not filters:
        return ()
    found = (
        tuple(Condition(k, "equal", v) for k, v in filters.items())
        if isinstance(filters, Mapping)
        else tuple(filters)
    )
    allowed = filterable(settings.weaviate.metadata)
    unknown = sorted({c.property for c in found} - set(allowed))
    if unknown:
        raise ValueError(
            f"cannot filter on {', '.join(map(repr, unknown))}: "
            f"filterable are {', '.join(sorted(allowed))}"
        )
    return found


class ChunkSearch:
    """The chunk store and the query embedder of one retriever, opened on first search.

    ``settings`` default to :func:`chunkweave.worker.settings.get_settings` (the
    ``CHUNKWEAVE_*`` environment). Thread-safe; :meth:`close` releases the connection.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        from chunkweave.worker.settings import get_settings

        self.settings = settings or get_settings()
        self._lock = threading.Lock()
        self._opened: tuple[ChunkStore, Embedder] | None = None

    def _open(self) -> tuple[ChunkStore, Embedder]:
        with self._lock:
            if self._opened is None:
                from chunkweave.storage.embedders import make_embedder
                from chunkweave.storage.stores import open_store
                from chunkweave.storage.values import EmbedderIdentity
                from chunkweave.worker.discovery import discover

                found = discover(self.settings)
                settings = found.settings
                if not settings.weaviate.url:
                    raise ValueError(found.missing("Weaviate"))
                embedder = make_embedder(settings.embedder)
                identity = EmbedderIdentity(embedder.name, embedder.dimension)
                self._opened = open_store(settings.weaviate, identity), embedder
            return self._opened

    def search(
        self,
        query: str,
        *,
        k: int = 5,
        filters: Filters | None = None,
        tenant: str | None = None,
        principals: Sequence[str] | None = None,
        hybrid: bool = True,
    ) -> list[Hit]:
        """Return the best ``k`` chunks for ``query`` that ``filters`` and the ACL let through.

        ``principals``: who is asking; only chunks whose ``acl`` names one of them (and,
        when the collection says so, documents without an ``acl``). ``None`` applies no
        access rule (a trusted caller). ``tenant``: the tenant searched (required on a
        multi-tenant store; default the settings' ``weaviate.tenant``).
        """
        where = conditions(filters, self.settings)
        store, embedder = self._open()
        vector = embedder.embed_query(query) if embedder.dimension else None
        request = SearchRequest(
            query,
            vector,
            k=k,
            where=where,
            hybrid=hybrid,
            principals=None if principals is None else tuple(principals),
            tenant=tenant or self.settings.weaviate.tenant,
        )
        return store.search(request)

    def close(self) -> None:
        """Close the store's connection (a later search opens it again)."""
        with self._lock:
            if self._opened is not None:
                self._opened[0].close()
                self._opened = None

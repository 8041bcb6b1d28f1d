"""A store's versions, for a reindex: the catalog of versioned collections and their stores.

The worker's reindex (coordinator, tasks, CLI) reaches versions only through this
module: :func:`open_catalog` yields a :class:`VersionCatalog`; :func:`open_version`
and :func:`open_target` open a version's :class:`~.protocols.ChunkStore`;
:func:`live_ledger` reads the live ledger while writing a target. The Weaviate
implementation (:mod:`chunkweave.storage.weaviate.alias`) is named here and in
:mod:`.stores` only. :class:`IndexVersion` is the catalog's record of one version (a
plain value).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.errors import StoreError
from chunkweave.storage.protocols import ChunkStore, DocumentLedger
from chunkweave.storage.values import EmbedderIdentity, LedgerEntry
from chunkweave.storage.weaviate.alias import IndexCatalog, IndexVersion
from chunkweave.storage.weaviate.client import WeaviateSession, connect
from chunkweave.storage.weaviate.collection import REINDEX_HINT, create_chunk_collection
from chunkweave.storage.weaviate.ledger import WeaviateLedger
from chunkweave.storage.weaviate.schema import parse_identity
from chunkweave.storage.weaviate.store import WeaviateStore

__all__ = [
    "REINDEX_HINT",
    "IndexVersion",
    "VersionCatalog",
    "live_ledger",
    "open_catalog",
    "open_live",
    "open_target",
    "open_version",
    "version_cfg",
]


class VersionCatalog(Protocol):
    """The versions of one store behind its alias, and the switch between them."""

    #: The name the store is served under (the chunk collection's alias).
    alias: str

    def versions(self) -> list[IndexVersion]:
        """Return every recorded version, oldest first."""
        ...

    def get(self, collection: str) -> IndexVersion | None:
        """Return the version whose chunk collection is ``collection``, if recorded."""
        ...

    def live(self) -> IndexVersion | None:
        """Return the version the alias serves (``None``: nothing stored yet)."""
        ...

    def put(self, version: IndexVersion) -> IndexVersion:
        """Record ``version`` (replacing its earlier record)."""
        ...

    def next_version(self, identity: EmbedderIdentity, *, chunker: str, spec: str) -> IndexVersion:
        """Create the (empty) collections of a new generation, in state ``building``."""
        ...

    def switch(self, target: IndexVersion) -> IndexVersion:
        """Point the aliases at ``target``; the live version is retired."""
        ...

    def rollback(self) -> IndexVersion:
        """Point the aliases back at the version before the live one."""
        ...

    def drop(self, version: IndexVersion) -> None:
        """Delete ``version``'s collections and record."""
        ...

    def prune(self, keep: int) -> list[IndexVersion]:
        """Drop retired versions but the newest ``keep``; return those dropped."""
        ...

    def ledger_entries(self, ledger: str) -> list[LedgerEntry]:
        """Return every entry of a version's ledger (its ``ledger`` collection)."""
        ...

    def has_ledger(self, ledger: str) -> bool:
        """Whether a version's ledger collection still exists."""
        ...


class _Catalog(IndexCatalog):
    """The Weaviate catalog, with what the reindex asks besides its records."""

    def next_version(  # type: ignore[override]
        self, identity: EmbedderIdentity, *, chunker: str, spec: str
    ) -> IndexVersion:
        session = self.session
        return super().next_version(
            identity,
            chunker=chunker,
            spec=spec,
            create=lambda name: create_chunk_collection(session, name, identity),
        )

    def ledger_entries(self, ledger: str) -> list[LedgerEntry]:
        cfg = self.session.cfg.model_copy(update={"ledger_collection": ledger})
        return list(WeaviateLedger(WeaviateSession(self.session.client, cfg)).entries())

    def has_ledger(self, ledger: str) -> bool:
        return bool(self.session.client.collections.exists(ledger))


@contextmanager
def open_catalog(cfg: WeaviateConfig) -> Iterator[VersionCatalog]:
    """Open a catalog on its own connection; a plain collection found there is adopted."""
    session = WeaviateSession(connect(cfg), cfg)
    try:
        catalog = _Catalog(session)
        catalog.ensure()
        if catalog.is_plain(catalog.alias) and catalog.get(catalog.alias) is None:
            config = session.client.collections.use(catalog.alias).config.get(simple=True)
            identity = parse_identity(config.description)
            if identity is None:
                raise StoreError(f"collection {catalog.alias!r} was not created by chunkweave")
            catalog.adopt(identity)
        yield catalog
    finally:
        session.close()


def version_cfg(cfg: WeaviateConfig, version: IndexVersion) -> WeaviateConfig:
    """``cfg`` addressing ``version``'s own collections (not through the aliases)."""
    return cfg.model_copy(
        update={
            "collection": version.collection,
            "ledger_collection": version.ledger,
            "versioned": False,
        }
    )


def open_version(cfg: WeaviateConfig, version: IndexVersion, *, ensure: bool = False) -> ChunkStore:
    """Open ``version``'s own chunk store (``ensure``: check its schema first)."""
    named = version_cfg(cfg, version)
    if ensure:
        return WeaviateStore.open(named, version.identity)
    return WeaviateStore(connect(cfg), named, version.identity)


def open_target(cfg: WeaviateConfig, version: IndexVersion) -> ChunkStore:
    """Open the store a reindex writes: ``version``'s collections, created if missing."""
    return open_version(cfg, version, ensure=True)


def open_live(
    cfg: WeaviateConfig, collection: str, ledger: str, identity: EmbedderIdentity
) -> ChunkStore:
    """Open the live version's chunk store by its collection names (to read its vectors)."""
    return WeaviateStore.open(_named(cfg, collection, ledger), identity)


def live_ledger(
    target: ChunkStore, cfg: WeaviateConfig, collection: str, ledger: str
) -> DocumentLedger:
    """Return the live version's ledger, read on the connection of the ``target`` store."""
    assert isinstance(target, WeaviateStore), "a reindex target is a store's version"
    return WeaviateLedger(WeaviateSession(target.client, _named(cfg, collection, ledger)))


def _named(cfg: WeaviateConfig, collection: str, ledger: str) -> WeaviateConfig:
    return cfg.model_copy(
        update={"collection": collection, "ledger_collection": ledger, "versioned": False}
    )

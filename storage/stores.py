"""Opening the chunk store: the one place outside its package that names a store implementation.

:func:`open_store` opens the chunk store; :func:`local_server` gives the store's own
server on loopback (when no URL is configured); :mod:`chunkweave.storage.versions`
opens what a reindex needs (versioned collections, the catalog).

Everything above it (the pipeline, the CLI) holds a
:class:`chunkweave.storage.protocols.ChunkStore`. Weaviate is the only store, so
there is no choice to make; another store would add its config to ``Settings`` and a
branch here. The ``files`` sink (:class:`FilesConfig`) is no store of its own: it
mirrors every write of the store into files (:class:`MirroredStore`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from chunkweave.storage.config import FilesConfig, WeaviateConfig
from chunkweave.storage.errors import StoreError
from chunkweave.storage.files import FileSink
from chunkweave.storage.metadata import check_tenant
from chunkweave.storage.protocols import ChunkStore
from chunkweave.storage.values import EmbedderIdentity, StoredPosition
from chunkweave.storage.weaviate.store import WeaviateStore

if TYPE_CHECKING:
    from chunkweave.chunking.models import Chunk
    from chunkweave.storage.filters import SearchRequest
    from chunkweave.storage.hits import Hit
    from chunkweave.storage.protocols import DocumentLedger
    from chunkweave.storage.weaviate.server.local import LocalWeaviate

T = TypeVar("T")

#: Folder of the files sink under which each tenant's files go (``_tenants/<tenant>/``).
TENANTS_DIR = "_tenants"


def open_store(
    cfg: WeaviateConfig, identity: EmbedderIdentity, files: FilesConfig | None = None
) -> ChunkStore:
    """Open the chunk store for vectors of ``identity`` and return it (the caller closes it).

    Connects, creates the chunk and ledger collections if missing and checks the
    embedder identity recorded on them (``EmbedderMismatchError``); closes what it
    opened if that fails. With a ``files`` folder the store's writes are mirrored
    there (:class:`MirroredStore`).
    """
    store: ChunkStore = WeaviateStore.open(cfg, identity)
    if files is not None and files.dir:
        store = MirroredStore(store, FileSink(files.dir))
    return store


def drop_store(store: ChunkStore) -> list[str]:
    """Delete the store's own chunk and ledger collections; return the names deleted.

    For throw-away stores (``chunkweave eval``'s scratch collections): only a plain
    (``versioned`` off) Weaviate store, whose names are its collections; a versioned
    one is retired by ``chunkweave reindex``, never dropped here (``StoreError``).
    """
    if not isinstance(store, WeaviateStore):
        raise StoreError(f"cannot drop a {type(store).__name__}")
    cfg = store.cfg
    if cfg.versioned:
        raise StoreError(f"{cfg.collection} is versioned (an alias): not dropped")
    collections = store.client.collections

    def _drop() -> list[str]:
        names = [n for n in (cfg.collection, cfg.ledger_collection) if collections.exists(n)]
        if names:
            collections.delete(names)
        return names

    return store.session.retry(f"dropping {cfg.collection}", _drop)


def local_server(data_dir: Path) -> LocalWeaviate:
    """Return the store's own server on loopback, with its data in ``data_dir``.

    A context manager: entering starts the server (or attaches to the one another
    process started on the same folder: ``attached``); leaving stops what it started.
    ``url`` names it and ``config(cfg)`` returns ``cfg`` pointed at it.
    """
    from chunkweave.storage.weaviate.server.local import LocalWeaviate

    return LocalWeaviate(data_dir)


def recorded_local_server(data_dir: Path) -> tuple[str, int, str] | None:
    """Return the ``(url, grpc_port, api_key)`` a local server on ``data_dir`` recorded.

    ``None`` when none is recorded; a record left by a process that died names a
    server that no longer answers (check with :func:`local_server_ready`).
    """
    from chunkweave.storage.weaviate.server.local import recorded_server

    recorded = recorded_server(data_dir)
    if recorded is None:
        return None
    ports, api_key = recorded
    return f"http://127.0.0.1:{ports.http}", ports.grpc, api_key


def local_server_ready(url: str) -> bool:
    """Tell whether the store's server at ``url`` answers that it is ready (2 s at most)."""
    from chunkweave.storage.weaviate.server.local import is_ready

    return is_ready(url)


class MirroredStore:
    """A :class:`ChunkStore` whose chunk writes and deletes also go to a :class:`FileSink`.

    Files are written before the store and removed before it, so a failure of
    either leaves the document's write uncommitted (the ledger is not updated) and
    the re-run repeats both. A stored chunk whose file is missing (the sink was
    switched on after it was stored, or the file was deleted) is reported at
    position -1: the writer then writes it again with its stored vector, so its
    file appears without re-embedding (``chunkweave ingest --force`` fills a new
    sink that way).
    """

    def __init__(self, store: ChunkStore, sink: FileSink) -> None:
        self.inner = store
        self.sink = sink
        self.identity = store.identity
        self.keyword_index = store.keyword_index

    def positions(self, uuids: Iterable[str]) -> dict[str, StoredPosition]:
        """Return the store's positions, with -1 for chunks without their file."""
        stored = self.inner.positions(uuids)
        with_file = self._sink(lambda: self.sink.known(stored))
        return {
            u: p if u in with_file else StoredPosition(-1, p.regions) for u, p in stored.items()
        }

    def vectors(self, uuids: Iterable[str]) -> dict[str, list[float]]:
        """As the store's."""
        return self.inner.vectors(uuids)

    def upsert(
        self,
        chunks: Sequence[Chunk],
        vectors: Sequence[Sequence[float]] | None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        """Write the chunks' files, then the chunks."""
        self._sink(lambda: self.sink.put_chunks(chunks, metadata=metadata))
        return self.inner.upsert(chunks, vectors, metadata=metadata)

    def retag(self, doc_id: str, metadata: Mapping[str, Any]) -> int:
        """Give the document's files, then its chunks, the new ``metadata``."""
        self._sink(lambda: self.sink.retag_document(doc_id, metadata))
        return self.inner.retag(doc_id, metadata)

    def for_tenant(self, tenant: str) -> ChunkStore:
        """Return the store scoped to ``tenant``, mirrored into the tenant's own folder."""
        return MirroredStore(self.inner.for_tenant(tenant), self._tenant_sink(tenant))

    def delete_tenant(self, tenant: str) -> bool:
        """Remove the tenant's folder of files, then the tenant."""
        folder = self._tenant_sink(tenant).root
        if folder.is_dir():
            shutil.rmtree(folder)
        return self.inner.delete_tenant(tenant)

    def _tenant_sink(self, tenant: str) -> FileSink:
        # Tenant names are checked before they reach a store (letters, digits, - and _),
        # so the name is a safe folder name; ``_tenants`` cannot be a document folder
        # (those end in a hash).
        return FileSink(self.sink.root / TENANTS_DIR / self._sink(lambda: check_tenant(tenant)))

    def doc_uuids(self, doc_id: str) -> set[str]:
        """As the store's."""
        return self.inner.doc_uuids(doc_id)

    def chunks(self, doc_id: str, *, limit: int) -> list[Chunk]:
        """As the store's."""
        return self.inner.chunks(doc_id, limit=limit)

    def delete_ids(self, uuids: Iterable[str]) -> int:
        """Remove the chunks' files, then the chunks."""
        ids = list(uuids)
        self._sink(lambda: self.sink.remove_uuids(ids))
        return self.inner.delete_ids(ids)

    def delete_doc(self, doc_id: str) -> int:
        """Remove the document's files, then its chunks."""
        self._sink(lambda: self.sink.remove_document(doc_id))
        return self.inner.delete_doc(doc_id)

    def search(self, request: SearchRequest) -> list[Hit]:
        """As the store's."""
        return self.inner.search(request)

    # Match units (small-to-big) are an index of the store's, not files: written and
    # read there only. Deletes by id or document reach them through the store's.
    @property
    def small_to_big(self) -> bool:
        """As the store's (``False`` for a store without match units)."""
        return bool(getattr(self.inner, "small_to_big", False))

    def unit_positions(self, uuids: Iterable[str]) -> dict[str, StoredPosition]:
        """As the store's (no file to look for)."""
        return self.inner.positions(uuids)

    def upsert_units(self, *args: Any, **kwargs: Any) -> int:
        """As the store's (units have no files)."""
        return int(self.inner.upsert_units(*args, **kwargs))  # type: ignore[attr-defined]

    def unit_parents(self, doc_id: str) -> dict[str, str]:
        """As the store's."""
        return dict(self.inner.unit_parents(doc_id))  # type: ignore[attr-defined]

    def open_ledger(self) -> DocumentLedger:
        """As the store's."""
        return self.inner.open_ledger()

    def stale(self) -> bool:
        """As the store's."""
        return self.inner.stale()

    def close(self) -> None:
        """Close the store."""
        self.inner.close()

    def _sink(self, call: Callable[[], T]) -> T:
        try:
            return call()
        except ValueError as err:  # a path the sink refuses: a failure of the write
            raise StoreError(f"files sink {self.sink.root}: {err}") from err


if TYPE_CHECKING:
    _conforms: type[ChunkStore] = MirroredStore

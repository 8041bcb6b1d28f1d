"""The chunk collection in Weaviate, as a ``ChunkStore``: batch upsert, reads, prune, search.

One :class:`WeaviateStore` per process (it owns a client). Every write is checked:
per-object failures raise :class:`StoreError` with the reasons; transient failures
(server down, timeouts) are retried with bounded exponential backoff
(``WeaviateConfig.retries``) and then raise :class:`StoreUnavailableError`. Nothing
is silently dropped. Creating and checking the collection is :mod:`.collection`'s,
searching it :mod:`.search`'s.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import weaviate
from weaviate.classes.query import Filter, QueryNested
from weaviate.collections.classes.filters import _Filters

from chunkweave.chunking.models import Chunk
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.errors import StoreError, StoreUnavailableError, TooManyChunksError
from chunkweave.storage.filters import SearchRequest
from chunkweave.storage.hits import Hit
from chunkweave.storage.metadata import HAS_ACL, META_SHA1
from chunkweave.storage.rerank import Rerankers
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import EmbedderIdentity, StoredPosition
from chunkweave.storage.weaviate.client import WeaviateSession, connect, is_transient, send_objects
from chunkweave.storage.weaviate.collection import ensure_collection, serving
from chunkweave.storage.weaviate.grpc_batch import Pending
from chunkweave.storage.weaviate.ledger import WeaviateLedger
from chunkweave.storage.weaviate.reads import by_ids, doc_objects, fetch
from chunkweave.storage.weaviate.schema import (
    REGIONS,
    SCHEMA_VERSION,
    chunk_from_properties,
    chunk_properties,
    doc_languages,
    meta_values,
    metadata_properties,
    read_regions,
)
from chunkweave.storage.weaviate.search import where_filter
from chunkweave.storage.weaviate.tenancy import (
    add_missing_properties,
    check_tenancy,
    check_tenant_name,
)
from chunkweave.storage.weaviate.unit_objects import MATCH_UNIT, unit_properties_schema, units_in
from chunkweave.storage.weaviate.unit_search import search_served
from chunkweave.storage.weaviate.unit_store import UnitStore

#: Objects per fetch/delete-by-id call: half of Weaviate's default QUERY_MAXIMUM_RESULTS.
_PAGE = 5_000


class WeaviateStore(UnitStore):
    """The chunk collection for one embedder identity, on an open client (and match units).

    ``ensure_schema`` must run once before writes (``open`` does it). The client is
    owned by the store when created through :meth:`open` (closed by :meth:`close`).
    """

    def __init__(
        self,
        client: weaviate.WeaviateClient,
        cfg: WeaviateConfig,
        identity: EmbedderIdentity,
        *,
        session: WeaviateSession | None = None,
    ) -> None:
        # Multi-tenant without a tenant: the collections can be created and tenants
        # opened (:meth:`for_tenant`), but every read or write raises StoreError.
        if cfg.tenant is not None:
            check_tenant_name(cfg.tenant)
        self.session = session or WeaviateSession(client, cfg)
        self.client = client
        self.cfg = cfg
        self.identity = identity
        #: Objects per fetch/delete-by-id call; must stay <= the server's QUERY_MAXIMUM_RESULTS.
        self.page_size = _PAGE
        #: Layout version of the chunk collection (read by :meth:`ensure_schema`).
        self.schema_version = SCHEMA_VERSION
        #: Whether the collection has the keyword (BM25) index (read by :meth:`ensure_schema`).
        self.keyword_index = cfg.keyword_index
        #: Whether the collection stores source regions (read by :meth:`ensure_schema`).
        self.regions = True
        self._tenants: dict[str, WeaviateStore] = {}
        self.rerankers = Rerankers()  # the rerank stage's clients (``cfg.ranking.rerank``)
        #: The collection the configured name served at :meth:`ensure_schema` (an
        #: alias's target), and when :meth:`stale` last looked.
        self.serves: str | None = None
        self._looked = 0.0

    @classmethod
    def open(cls, cfg: WeaviateConfig, identity: EmbedderIdentity) -> WeaviateStore:
        """Connect, create the collections if missing and check the embedder identity."""
        store = cls(connect(cfg), cfg, identity)
        try:
            store.ensure_schema()
        except BaseException:
            store.close()
            raise
        return store

    def close(self) -> None:
        """Close the client (the ledger opened on this store shares it) and rerankers."""
        self.rerankers.close()
        self.session.close()

    def open_ledger(self) -> WeaviateLedger:
        """Return the document ledger on this store's client (its own collection)."""
        return WeaviateLedger(self.session)

    def collection(self) -> Any:
        """Return a handle on the chunk collection (tenant-scoped when a tenant is set)."""
        return self.session.handle(self.cfg.collection)

    def ensure_schema(self) -> None:
        """Create the chunk collection if missing; refuse one it cannot safely use.

        Reads what the collection has into :attr:`schema_version`,
        :attr:`keyword_index` and :attr:`regions`; see
        :func:`chunkweave.storage.weaviate.collection.ensure_collection`. Refuses
        multi-tenancy on an existing single-tenant collection (and the reverse), with
        the migration; adds the metadata properties the collection lacks
        (:func:`~.schema.metadata_properties`: only ever added).
        """
        check_tenancy(self.session)
        self.schema_version, self.keyword_index, self.regions = ensure_collection(
            self.session, self.identity
        )
        self.serves = serving(self.session)
        added = [*metadata_properties(self.cfg.metadata), *unit_properties_schema()]
        add_missing_properties(self.session, added, collection=self.serves)
        self._looked = time.monotonic()

    def stale(self, every_s: float = 0.5) -> bool:
        """Whether the alias now serves another collection than at :meth:`ensure_schema`.

        Looks at most every ``every_s`` seconds (one alias read); a worker rebuilds its
        pipeline when this turns true (``chunkweave reindex`` switched the alias).
        """
        if self.serves is None or time.monotonic() - self._looked < every_s:
            return False
        self._looked = time.monotonic()
        try:
            return serving(self.session) != self.serves
        except StoreError:
            return False  # unreachable now: the next write reports it

    def for_tenant(self, tenant: str) -> WeaviateStore:
        """Return this store scoped to ``tenant`` (created on first use), same client.

        Raises :class:`StoreError` when multi-tenancy is off or the name is not one
        Weaviate accepts. Closing the view leaves the client open.
        """
        view = self._tenants.get(tenant)
        if view is not None:
            return view
        check_tenant_name(tenant)
        session = self.session.for_tenant(tenant)
        view = WeaviateStore(self.client, session.cfg, self.identity, session=session)
        view.schema_version, view.keyword_index = self.schema_version, self.keyword_index
        view.regions = self.regions
        view.page_size = self.page_size
        for name in (self.cfg.collection, self.cfg.ledger_collection):
            if self.client.collections.exists(name):
                session.ensure_tenant(name)
        self._tenants[tenant] = view
        return view

    def tenants(self) -> list[str]:
        """Return the tenants of the chunk collection (none when multi-tenancy is off)."""
        if not self.cfg.multi_tenancy:
            return []
        coll = self.client.collections.use(self.session.resolve(self.cfg.collection))
        return sorted(self.session.retry("listing tenants", lambda: coll.tenants.get()))

    def delete_tenant(self, tenant: str) -> bool:
        """Remove ``tenant`` with all its chunks and ledger entries; True if it existed."""
        check_tenant_name(tenant)
        if not self.cfg.multi_tenancy:
            raise StoreError("multi-tenancy is off: there are no tenants to delete")
        existed = False
        for name in (self.cfg.collection, self.cfg.ledger_collection):
            tenants = self.client.collections.use(self.session.resolve(name)).tenants

            def _remove(tenants: Any = tenants) -> bool:
                if not tenants.exists(tenant):
                    return False
                tenants.remove([tenant])
                return True

            existed = self.session.retry(f"deleting tenant {tenant}", _remove) or existed
        self._tenants.pop(tenant, None)
        return existed

    def upsert(
        self,
        chunks: Sequence[Chunk],
        vectors: Sequence[Sequence[float]] | None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        """Write ``chunks`` (with ``vectors`` in the same order, or none) and return the count.

        Objects are keyed by :func:`chunkweave.storage.uuids.chunk_uuid`, so a retry or a re-run
        overwrites rather than duplicates. Only objects that failed transiently are
        re-sent; any other per-object failure raises with its reasons. ``metadata``
        (validated, JSON values) is written on every chunk; a write replaces the
        whole object, so keys it lacks read back as null.
        """
        if vectors is not None and len(vectors) != len(chunks):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        now, meta = datetime.now(UTC), meta_values(metadata or {}, self.cfg.metadata)
        langs = doc_languages(chunks)  # per document, from the chunks written together
        pending: dict[str, Pending] = {
            chunk_uuid(c.id): (
                chunk_properties(c, now, regions=self.regions, meta=meta, language=langs[c.doc_id]),
                vectors[i] if vectors else None,
            )
            for i, c in enumerate(chunks)
        }
        return self._send(pending)

    def _send(self, pending: dict[str, Pending]) -> int:
        """Write ``pending`` (retrying transient failures); return how many were written."""
        total = len(pending)
        delay = 0.5
        for attempt in range(self.cfg.retries + 1):
            # Probe first: on a dead server the client's own gRPC retries take ~15 s.
            live = self.session.live()
            errors = (
                send_objects(
                    self.collection(),
                    pending,
                    batch_size=self.cfg.batch_size,
                    concurrent_requests=self.cfg.concurrent_requests,
                    client_encoder=self.cfg.encoder == "client",
                )
                if live
                else dict.fromkeys(pending, "server unavailable")
            )
            if not errors:
                return total
            permanent = {u: msg for u, msg in errors.items() if not is_transient(msg)}
            if permanent:
                reasons = sorted(set(permanent.values()))[:5]
                raise StoreError(
                    f"Weaviate rejected {len(permanent)} of {total} objects: " + "; ".join(reasons)
                )
            if attempt == self.cfg.retries:
                sample = next(iter(errors.values()))
                raise StoreUnavailableError(
                    f"upsert of {len(errors)} objects failed after {self.cfg.retries} retries "
                    f"(Weaviate at {self.cfg.url}): {sample}"
                )
            pending = {u: pending[u] for u in errors}
            time.sleep(delay)
            delay = min(delay * 2, 8.0)
        raise AssertionError("unreachable")

    def delete_where(self, where: _Filters) -> int:
        """Delete every object matching ``where`` (looping past the per-call cap)."""
        total = 0
        coll = self.collection()
        while True:
            result = self.session.retry("delete", lambda: coll.data.delete_many(where=where))
            if result.failed:
                raise StoreError(f"delete: {result.failed} objects could not be deleted")
            total += result.successful
            if result.matches == 0 or result.successful == 0:
                return total

    def delete_ids(self, uuids: Iterable[str]) -> int:
        """Delete the objects with these UUIDs."""
        ids = sorted(set(uuids))
        total = 0
        for start in range(0, len(ids), self.page_size):
            page = ids[start : start + self.page_size]
            total += self.delete_where(Filter.by_id().contains_any(page))
        return total

    def delete_doc(self, doc_id: str) -> int:
        """Delete every chunk of ``doc_id``; returns how many were deleted."""
        return self.delete_where(Filter.by_property("doc_id").equal(doc_id))

    def retag(self, doc_id: str, metadata: Mapping[str, Any]) -> int:
        """Write every stored chunk of ``doc_id`` again with ``metadata``; return the count.

        Each chunk keeps its vector and every other property (read back and sent
        unchanged): only the metadata properties are replaced, and a declared key the
        new metadata lacks reads back as null. Nothing is parsed or embedded.
        """
        meta = meta_values(metadata, self.cfg.metadata)
        old = {*self.cfg.metadata.declared(), HAS_ACL, META_SHA1}
        ids = sorted(self.doc_uuids(doc_id))
        written = 0
        for start in range(0, len(ids), self.page_size):
            page = ids[start : start + self.page_size]
            where = Filter.by_id().contains_any(page)
            pending: dict[str, Pending] = {}
            for o in self._fetch(where, len(page), None, vector=True):
                props = {k: v for k, v in o.properties.items() if k not in old and v is not None}
                vector = o.vector
                if isinstance(vector, dict):  # named vectors: this collection has one
                    vector = next(iter(vector.values()), None)
                pending[str(o.uuid)] = ({**props, **meta}, list(vector) if vector else None)
            written += self._send(pending) - units_in(pending)  # counts chunks only
        return written

    def positions(self, uuids: Iterable[str]) -> dict[str, StoredPosition]:
        """Return the stored ``chunk_index`` and regions of those of ``uuids`` stored."""
        props: list[Any] = ["chunk_index", META_SHA1]
        if self.regions:
            props.append(QueryNested(name=REGIONS, properties=["page", "bbox"]))
        found: dict[str, StoredPosition] = {}
        for o in self._by_ids(uuids, props):
            regions = read_regions(o.properties.get(REGIONS)) if self.regions else None
            meta = str(o.properties.get(META_SHA1) or "")
            found[str(o.uuid)] = StoredPosition(int(o.properties["chunk_index"]), regions, meta)
        return found

    def vectors(self, uuids: Iterable[str]) -> dict[str, list[float]]:
        """Return the stored vectors of ``uuids`` (objects without one are left out)."""
        found: dict[str, list[float]] = {}
        for o in self._by_ids(uuids, [], vector=True):
            vector = o.vector
            if isinstance(vector, dict):  # named vectors: this collection has one
                vector = next(iter(vector.values()), None)
            if vector:
                found[str(o.uuid)] = list(vector)
        return found

    def _by_ids(
        self, uuids: Iterable[str], props: list[Any], vector: bool = False
    ) -> Iterator[Any]:
        return by_ids(self._fetch, uuids, props, self.page_size, vector=vector)

    def doc_uuids(self, doc_id: str) -> set[str]:
        """UUIDs of every stored chunk of ``doc_id``."""
        return {str(o.uuid) for o in self._doc_objects(doc_id, ["chunk_index"])}

    def chunks(self, doc_id: str, *, limit: int) -> list[Chunk]:
        """Return the stored chunks of ``doc_id`` in ``chunk_index`` order (empty: none).

        Every property is read (the nested ``regions`` too), ``embed_text`` is empty.
        Raises :class:`TooManyChunksError` when there are more than ``limit``.
        """
        found: list[Chunk] = []
        for obj in self._doc_objects(doc_id, None):
            if not obj.properties.get(MATCH_UNIT):  # match units are not chunks
                found.append(chunk_from_properties(obj.properties))
            if len(found) > limit:
                raise TooManyChunksError(f"{doc_id}: more than {limit} stored chunks")
        return sorted(found, key=lambda c: c.chunk_index)

    def _doc_objects(self, doc_id: str, props: list[Any] | None) -> Iterator[Any]:
        return doc_objects(self._fetch, doc_id, props, self.page_size)

    def _fetch(
        self,
        where: _Filters,
        limit: int,
        props: list[Any] | None,
        sort: bool = False,
        vector: bool = False,
    ) -> Any:
        return fetch(self.session, self.collection, where, limit, props, sort=sort, vector=vector)

    def search(self, request: SearchRequest) -> list[Hit]:
        """Top ``k`` chunks meeting all of ``where``: hybrid (BM25 + vector), vector-only, or BM25.

        Without a ``vector`` BM25 only; without the keyword index vector-only (no vector
        either: :class:`StoreError`). Small-to-big fuses in match units (:mod:`.unit_search`).
        """
        if request.tenant is not None and request.tenant != self.cfg.tenant:
            return self.for_tenant(request.tenant).search(request)
        return search_served(
            self.session,
            self.cfg.collection,
            request,
            where_filter(request.where),
            small_to_big=self.small_to_big,  # unless the request says
            keyword_index=self.keyword_index,
            public_without_acl=self.cfg.metadata.public_without_acl,
            meta_keys=tuple(self.cfg.metadata.declared()),
            ranking=request.ranking or self.cfg.ranking,
            rerankers=self.rerankers,
        )

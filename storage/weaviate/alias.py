"""Versioned chunk collections behind a Weaviate alias, and the catalog that records them.

The name apps and ``chunkweave search`` use (``WeaviateConfig.collection``, ``Chunk`` by
default) is a Weaviate collection alias pointing at a versioned collection
(``Chunk_v<N>``); the ledger name (``ChunkweaveDocument``) is an alias to its version's
ledger (``ChunkweaveDocument_v<N>``) likewise. Weaviate resolves an alias in every
object, batch, query and schema read, so workers and apps that write and search the
alias follow a switch without being told.

What each version is (embedder identity, chunker fingerprint, the reindex spec it was
built from, its state and the version live before it) is one object per version in
the ``ChunkweaveIndex`` collection (:class:`IndexCatalog`).

A plain collection made by an older chunkweave is *adopted* as generation 0: recorded
as it is, no copy. Weaviate refuses an alias with the name of a collection and cannot
rename one, so the first switch away from an adopted collection deletes it (and its
plain ledger) and creates the aliases in the next call: a one-off gap of one schema
call, after which every switch is an atomic alias update and can be rolled back.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from weaviate.classes.config import Configure, DataType, Property, Tokenization
from weaviate.classes.query import Filter

from chunkweave.storage.errors import StoreError
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.client import WeaviateSession
from chunkweave.storage.weaviate.ledger import LEDGER_PROPERTIES

#: The catalog collection: one object per version of every aliased chunk collection.
CATALOG = "ChunkweaveIndex"

VersionState = Literal["building", "ready", "live", "retired", "adopted"]

_NS = uuid.UUID("6b1f4e0e-2d5c-4c35-9a55-0c3a3c1d9e24")


def _text(name: str) -> Property:
    return Property(
        name=name, data_type=DataType.TEXT, tokenization=Tokenization.FIELD, index_searchable=False
    )


_CATALOG_PROPERTIES = (
    _text("alias"),
    _text("collection"),
    _text("ledger"),
    Property(name="generation", data_type=DataType.INT),
    _text("embedder"),
    Property(name="dimension", data_type=DataType.INT),
    _text("chunker"),
    Property(name="spec", data_type=DataType.TEXT, index_filterable=False, index_searchable=False),
    _text("state"),
    _text("previous"),
    Property(name="created_at", data_type=DataType.DATE),
    Property(name="switched_at", data_type=DataType.DATE),
)


class IndexVersion(BaseModel):
    """One versioned chunk collection (and its ledger) of an alias."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    alias: str
    collection: str
    ledger: str
    generation: int
    #: Embedder identity name and dimension the vectors were made with.
    embedder: str
    dimension: int
    #: Chunker fingerprint of the chunks (empty: not recorded, e.g. an adopted collection).
    chunker: str = ""
    #: The reindex spec the version was built from (JSON; empty when not built by reindex).
    spec: str = ""
    state: VersionState
    #: The collection that was live before this one went live (rollback goes there).
    previous: str = ""
    created_at: datetime | None = None
    switched_at: datetime | None = None

    @property
    def identity(self) -> EmbedderIdentity:
        """The embedder identity of the stored vectors."""
        return EmbedderIdentity(self.embedder, self.dimension)

    def spec_dict(self) -> dict[str, Any]:
        """Return the reindex spec as a dict (empty when none)."""
        return dict(json.loads(self.spec)) if self.spec else {}


def version_name(base: str, generation: int) -> str:
    """Name of generation ``generation`` of the collection or ledger ``base``."""
    return f"{base}_v{generation}"


class IndexCatalog:
    """The versions of one alias pair (chunks + ledger) and the aliases themselves.

    Every call goes through the session's retries; failures raise ``StoreError``.
    """

    def __init__(self, session: WeaviateSession) -> None:
        self.session = session
        self.alias = session.cfg.collection
        self.ledger_alias = session.cfg.ledger_collection

    # -- the catalog collection -------------------------------------------------
    def ensure(self) -> None:
        """Create the catalog collection if missing (no vectors, no tenants)."""
        collections = self.session.client.collections

        def _ensure() -> None:
            if collections.exists(CATALOG):
                return
            try:
                collections.create(
                    CATALOG,
                    description="chunkweave index versions",
                    properties=list(_CATALOG_PROPERTIES),
                    vector_config=Configure.Vectors.self_provided(),
                )
            except Exception:
                if not collections.exists(CATALOG):  # another process may have won the race
                    raise

        self.session.retry("creating the index catalog", _ensure)

    def _uuid(self, collection: str) -> str:
        return str(uuid.uuid5(_NS, f"{self.alias}\x00{collection}"))

    def put(self, version: IndexVersion) -> IndexVersion:
        """Write (replace) the record of ``version``."""
        props = {k: v for k, v in version.model_dump().items() if v is not None}
        coll = self.session.client.collections.use(CATALOG)
        what = f"index catalog write for {version.collection}"
        self.session.put_object(coll, self._uuid(version.collection), props, what)
        return version

    def delete_record(self, collection: str) -> None:
        """Forget the record of ``collection``."""
        coll = self.session.client.collections.use(CATALOG)
        self.session.retry(
            "index catalog delete", lambda: coll.data.delete_by_id(self._uuid(collection))
        )

    def versions(self) -> list[IndexVersion]:
        """Every recorded version of this alias, oldest generation first."""
        coll = self.session.client.collections.use(CATALOG)
        where = Filter.by_property("alias").equal(self.alias)
        objs = self.session.retry(
            "index catalog read",
            lambda: coll.query.fetch_objects(filters=where, limit=1000).objects,
        )
        known = set(IndexVersion.model_fields)
        found = [
            IndexVersion(**{k: v for k, v in o.properties.items() if k in known and v is not None})
            for o in objs
        ]
        return sorted(found, key=lambda v: v.generation)

    def get(self, collection: str) -> IndexVersion | None:
        """Return the record of ``collection``, or ``None``."""
        return next((v for v in self.versions() if v.collection == collection), None)

    # -- aliases -----------------------------------------------------------------
    def alias_target(self, name: str) -> str | None:
        """Return the collection alias ``name`` points at, or ``None`` when it is no alias."""
        return self.session.alias_target(name)

    def is_plain(self, name: str) -> bool:
        """Whether ``name`` is a collection (not an alias)."""
        if self.alias_target(name) is not None:
            return False
        return bool(
            self.session.retry(
                f"reading {name}", lambda: self.session.client.collections.exists(name)
            )
        )

    def live(self) -> IndexVersion | None:
        """Return the version the alias serves (an adopted plain collection too), or ``None``."""
        target = self.alias_target(self.alias)
        if target is None:
            return self.get(self.alias) if self.is_plain(self.alias) else None
        return self.get(target)

    # -- versions ----------------------------------------------------------------
    def create_first(self, identity: EmbedderIdentity, create: Any) -> IndexVersion:
        """Create generation 1 and both aliases for a store that has nothing yet.

        ``create(collection_name)`` creates the chunk collection (the caller owns its
        layout). Safe against another process doing the same at once.
        """
        version = IndexVersion(
            alias=self.alias,
            collection=version_name(self.alias, 1),
            ledger=version_name(self.ledger_alias, 1),
            generation=1,
            embedder=identity.name,
            dimension=identity.dimension,
            state="live",
            created_at=datetime.now(UTC),
            switched_at=datetime.now(UTC),
        )
        self.ensure()
        self.create_collections(version, create)
        self.put(version)
        for alias, target in (
            (self.alias, version.collection),
            (self.ledger_alias, version.ledger),
        ):
            self._create_alias(alias, target)
        return version

    def create_collections(self, version: IndexVersion, create: Any) -> None:
        """Create the chunk collection (through ``create``) and the ledger of ``version``."""
        collections = self.session.client.collections

        def _chunks() -> None:
            if not collections.exists(version.collection):
                try:
                    create(version.collection)
                except Exception:
                    if not collections.exists(version.collection):
                        raise

        def _ledger() -> None:
            if not collections.exists(version.ledger):
                try:
                    collections.create(
                        version.ledger,
                        description="chunkweave document ledger",
                        properties=list(LEDGER_PROPERTIES),
                        vector_config=Configure.Vectors.self_provided(),
                        multi_tenancy_config=self.session.multi_tenancy(),
                    )
                except Exception:
                    if not collections.exists(version.ledger):
                        raise

        self.session.retry(f"creating collection {version.collection}", _chunks)
        self.session.retry(f"creating collection {version.ledger}", _ledger)

    def _create_alias(self, alias: str, target: str) -> None:
        client = self.session.client

        def _create() -> None:
            current = client.alias.get(alias_name=alias)
            if current is not None:
                return  # another process created it first
            try:
                client.alias.create(alias_name=alias, target_collection=target)
            except Exception:
                if client.alias.get(alias_name=alias) is None:
                    raise

        self.session.retry(f"creating alias {alias} -> {target}", _create)

    def adopt(self, identity: EmbedderIdentity) -> IndexVersion:
        """Record the plain collection named as the alias as generation 0 (no copy)."""
        found = self.get(self.alias)
        if found is not None:
            return found
        return self.put(
            IndexVersion(
                alias=self.alias,
                collection=self.alias,
                ledger=self.ledger_alias,
                generation=0,
                embedder=identity.name,
                dimension=identity.dimension,
                state="adopted",
                created_at=datetime.now(UTC),
            )
        )

    def next_version(
        self, identity: EmbedderIdentity, *, chunker: str, spec: str, create: Any
    ) -> IndexVersion:
        """Create the collections of a new generation in state ``building``."""
        generation = max((v.generation for v in self.versions()), default=0) + 1
        version = IndexVersion(
            alias=self.alias,
            collection=version_name(self.alias, generation),
            ledger=version_name(self.ledger_alias, generation),
            generation=generation,
            embedder=identity.name,
            dimension=identity.dimension,
            chunker=chunker,
            spec=spec,
            state="building",
            created_at=datetime.now(UTC),
        )
        self.put(version)  # first: a crash leaves a record to resume or abandon
        self.create_collections(version, create)
        return version

    def switch(self, target: IndexVersion) -> IndexVersion:
        """Point both aliases at ``target``; the live version becomes ``retired``.

        From a version behind the alias this is one atomic alias update per alias.
        From an adopted plain collection the plain collections are deleted and the
        aliases created (see the module docstring): that version cannot be rolled back to.
        """
        live = self.live()
        client = self.session.client
        if live is not None and live.state == "adopted":
            self.session.retry(
                "dropping the adopted collections",
                lambda: client.collections.delete([live.collection, live.ledger]),
            )
            self._create_alias(self.alias, target.collection)
            self._create_alias(self.ledger_alias, target.ledger)
            self.delete_record(live.collection)
            previous = ""
        else:
            for alias, name in (
                (self.alias, target.collection),
                (self.ledger_alias, target.ledger),
            ):
                self.session.retry(
                    f"switching alias {alias} -> {name}",
                    lambda a=alias, n=name: client.alias.update(  # type: ignore[misc]
                        alias_name=a, new_target_collection=n
                    ),
                )
            previous = live.collection if live is not None else ""
            if live is not None:
                self.put(live.model_copy(update={"state": "retired"}))
        now = datetime.now(UTC)
        return self.put(
            target.model_copy(update={"state": "live", "switched_at": now, "previous": previous})
        )

    def rollback(self) -> IndexVersion:
        """Point the aliases back at the version live before the current one."""
        live = self.live()
        if live is None or not live.previous:
            raise StoreError(f"{self.alias}: nothing to roll back to (no earlier version is kept)")
        previous = self.get(live.previous)
        if previous is None or not self.session.client.collections.exists(previous.collection):
            raise StoreError(f"{self.alias}: the previous version {live.previous} was pruned")
        # The version left becomes the rollback target: a second rollback undoes the first.
        return self.switch(previous)

    def drop(self, version: IndexVersion) -> None:
        """Delete a version's collections and its record (never the live one)."""
        live = self.live()
        if live is not None and live.collection == version.collection:
            raise StoreError(f"{version.collection} is live; it cannot be dropped")
        self.session.retry(
            f"dropping {version.collection}",
            lambda: self.session.client.collections.delete([version.collection, version.ledger]),
        )
        self.delete_record(version.collection)

    def prune(self, keep: int) -> list[IndexVersion]:
        """Drop versions that are not live: all but the ``keep`` most recently retired.

        The rollback target (the version live before the live one) is the first one
        kept; targets a gate refused (``ready``) are always dropped.
        """
        live = self.live()
        previous = live.previous if live is not None else ""
        epoch = datetime.min.replace(tzinfo=UTC)
        retired = sorted(
            (v for v in self.versions() if v.state == "retired"),
            key=lambda v: (v.collection == previous, v.switched_at or v.created_at or epoch),
            reverse=True,
        )
        dropped = retired[keep:] + [v for v in self.versions() if v.state == "ready"]
        for version in dropped:
            self.drop(version)
        if live is not None and any(v.collection == previous for v in dropped):
            self.put(live.model_copy(update={"previous": ""}))
        return dropped

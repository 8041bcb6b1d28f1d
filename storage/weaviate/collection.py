"""Creating the chunk collection, or checking that an existing one can be used as it is.

:func:`ensure_collection` is what ``WeaviateStore.ensure_schema`` runs: it creates a
missing collection with this chunkweave's layout, and reads what an existing one has
(:class:`Layout`), refusing one made for another embedder or by a newer chunkweave.
With ``WeaviateConfig.versioned`` (the default) a new store is generation 1 behind an
alias (:mod:`.alias`), and a plain collection of an older chunkweave is adopted as
generation 0.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from weaviate.classes.config import Configure, Property
from weaviate.exceptions import WeaviateBaseError

from chunkweave.storage.errors import EmbedderMismatchError, StoreError
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.alias import IndexCatalog
from chunkweave.storage.weaviate.client import WeaviateSession
from chunkweave.storage.weaviate.schema import (
    KEYWORD_PROPERTIES,
    LANGUAGE,
    REGIONS,
    SCHEMA_VERSION,
    TEXT_CJK,
    collection_properties,
    identity_description,
    parse_identity,
    parse_schema_version,
)
from chunkweave.storage.weaviate.tenancy import add_missing_properties

log = logging.getLogger(__name__)

#: Properties an existing collection gets in place when it lacks them (writes of an
#: unknown property fail: auto-schema is off). Its older chunks have none until
#: they are written again (re-ingested into a new collection, or changed).
ADDED_IN_PLACE = ("section_number", "section_numbers", "section_prefix", LANGUAGE, TEXT_CJK)


class Layout(NamedTuple):
    """What the chunk collection has: its schema version and its optional parts."""

    #: Layout version of the collection (:data:`SCHEMA_VERSION` for a new one).
    schema_version: int
    #: Whether it has the keyword (BM25) index.
    keyword_index: bool
    #: Whether it stores source regions.
    regions: bool


#: What a worker or app with the wrong embedder is told to run.
REINDEX_HINT = (
    "to move the store to this embedder without downtime run `chunkweave reindex` "
    "(with this embedder configured), or configure the embedder the collection was built with"
)


def create_chunk_collection(
    session: WeaviateSession, name: str, identity: EmbedderIdentity
) -> None:
    """Create chunk collection ``name`` with this chunkweave's layout for ``identity``."""
    cfg = session.cfg
    session.client.collections.create(
        name,
        description=identity_description(identity),
        properties=collection_properties(cfg.keyword_index),
        vector_config=Configure.Vectors.self_provided(
            vector_index_config=Configure.VectorIndex.hnsw(
                ef_construction=cfg.hnsw_ef_construction,
                max_connections=cfg.hnsw_max_connections,
                ef=cfg.hnsw_ef,
                dynamic_ef_min=cfg.hnsw_dynamic_ef_min,
            )
        ),
        multi_tenancy_config=session.multi_tenancy(),
    )


def serving(session: WeaviateSession) -> str | None:
    """Return the collection the configured name serves now (``None`` when not versioned)."""
    if not session.cfg.versioned:
        return None
    return session.resolve(session.cfg.collection)


def ensure_versioned(session: WeaviateSession, identity: EmbedderIdentity) -> str | None:
    """Make sure the configured name serves a collection; return the collection it serves.

    Nothing there: generation 1 is created behind the alias (and the ledger's alias).
    A plain collection (an older chunkweave's): recorded as adopted generation 0.
    ``None`` when ``versioned`` is off (the name is used as a plain collection).
    """
    if not session.cfg.versioned:
        return None
    catalog = IndexCatalog(session)
    target = catalog.alias_target(catalog.alias)
    if target is not None:
        return target
    if catalog.is_plain(catalog.alias):
        catalog.ensure()
        recorded = parse_identity(
            session.client.collections.use(catalog.alias).config.get(simple=True).description
        )
        if recorded is not None:
            catalog.adopt(recorded)
        return catalog.alias
    version = catalog.create_first(
        identity, lambda name: create_chunk_collection(session, name, identity)
    )
    return version.collection


def ensure_collection(session: WeaviateSession, identity: EmbedderIdentity) -> Layout:
    """Create the chunk collection if missing; refuse one it cannot safely use.

    A new collection records the embedder identity and :data:`SCHEMA_VERSION` in
    its description and gets the HNSW build parameters and the keyword index
    choice of the config; an existing one keeps its own (the returned
    :attr:`Layout.keyword_index` says which it has). An existing one must hold this
    embedder's vectors (:class:`EmbedderMismatchError` otherwise) and a schema version
    this code knows: a newer version is an error; an older one is used as is, with a
    warning saying what it lacks. Version 1 (every identifier indexed, Weaviate's
    HNSW defaults) has every index later versions read, so only writes are
    slower; versions 1 and 2 have no ``regions`` property, so chunks are written
    and searched there without their source regions (:attr:`Layout.regions` is off;
    the schema is never changed in place, and adding the property would give regions
    only to chunks written from then on). Migration: ``chunkweave reindex`` builds the next version
    alongside and switches the alias to it (:mod:`chunkweave.storage.reindex`).
    """
    cfg = session.cfg
    collections = session.client.collections
    name = cfg.collection

    def _ensure() -> tuple[int | None, bool, bool]:
        if not collections.exists(name):
            create_chunk_collection(session, name, identity)
            return SCHEMA_VERSION, cfg.keyword_index, True
        config = collections.use(name).config.get(simple=True)
        recorded = parse_identity(config.description)
        if recorded is None:
            raise EmbedderMismatchError(
                f"collection {name!r} was not created by chunkweave (no embedder recorded); "
                "configure another collection name"
            )
        if recorded != identity:
            raise EmbedderMismatchError(
                f"collection {name!r} holds vectors from {recorded}, but the configured "
                f"embedder is {identity}; {REINDEX_HINT}"
            )
        keyword = any(
            p.index_searchable and p.name in KEYWORD_PROPERTIES for p in config.properties
        )
        regions = any(p.name == REGIONS for p in config.properties)
        have = {p.name for p in config.properties}
        lacking[:] = [  # searchable ones only with the keyword index
            p
            for p in collection_properties(keyword)
            if p.name in ADDED_IN_PLACE and p.name not in have
        ]
        return parse_schema_version(config.description), keyword, regions

    lacking: list[Property] = []
    try:
        served = ensure_versioned(session, identity)
        version, keyword_index, regions = session.retry(f"creating collection {name}", _ensure)
        if lacking:  # to the collection an alias serves; another worker may add them too
            add_missing_properties(session, lacking, collection=served)
        session.ensure_tenant(name)
    except WeaviateBaseError as err:
        raise StoreError(f"creating collection {name}: {err}") from err
    layout = Layout(version or SCHEMA_VERSION, keyword_index, regions)
    if layout.schema_version > SCHEMA_VERSION:
        raise StoreError(
            f"collection {name!r} has chunk schema version {layout.schema_version}, newer "
            f"than this chunkweave's ({SCHEMA_VERSION}); upgrade chunkweave"
        )
    if layout.schema_version < SCHEMA_VERSION:
        lacks = [] if regions else ["no source regions on chunks or hits"]
        if layout.schema_version < 2:
            lacks.append("slower writes (extra indexes, HNSW defaults)")
        log.warning(
            "collection %r has chunk schema version %d (this chunkweave writes %d): it "
            "works, with %s; to migrate, run `chunkweave reindex` (it builds a new collection "
            "alongside and switches the alias to it)",
            name,
            layout.schema_version,
            SCHEMA_VERSION,
            " and ".join(lacks) or "what that version has",
        )
    return layout

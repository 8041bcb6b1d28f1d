"""The chunk collection's layout: schema version, indexes, HNSW settings, write path.

Integration tests run against the session's real Weaviate (``weaviate_cfg``).
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest
from weaviate.classes.config import Configure, DataType
from weaviate.classes.query import Filter

from chunkweave.chunking.models import Region
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.errors import StoreError, TooManyChunksError
from chunkweave.storage.filters import FILTERABLE, Condition, SearchRequest
from chunkweave.storage.metadata import MetadataConfig
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.client import connect
from chunkweave.storage.weaviate.schema import (
    CHUNK_PROPERTIES,
    FILTERABLE_PROPERTIES,
    KEYWORD_PROPERTIES,
    REGIONS,
    SCHEMA_VERSION,
    chunk_properties,
    doc_languages,
    identity_description,
    metadata_properties,
    parse_identity,
    parse_schema_version,
)
from chunkweave.storage.weaviate.store import WeaviateStore
from chunkweave.storage.weaviate.unit_objects import unit_properties_schema
from tests.store_helpers import ID16, det_vector, make_chunk, vectors


@pytest.fixture
def chunk_store(weaviate_cfg: WeaviateConfig):
    """A fresh store; only its chunk collection is dropped after the test (no ledger here)."""
    st = WeaviateStore.open(weaviate_cfg, ID16)
    yield st
    st.client.collections.delete(weaviate_cfg.collection)
    st.close()


def test_description_records_identity_and_schema_version():
    text = identity_description(ID16)
    assert parse_identity(text) == ID16
    assert parse_schema_version(text) == SCHEMA_VERSION
    legacy = 'chunkweave:{"dimension": 16, "embedder": "test-embedder"}'
    assert (parse_identity(legacy), parse_schema_version(legacy)) == (ID16, 1)
    assert parse_schema_version("someone else's collection") is None


def test_only_read_properties_are_indexed():
    by_name = {p.name: p for p in CHUNK_PROPERTIES}
    searchable = {n for n, p in by_name.items() if p.indexSearchable}
    assert searchable == {"text", "heading_path", "caption", "text_cjk"}
    assert {"doc_id", "chunk_index", "source", "type", "pages"} <= FILTERABLE_PROPERTIES
    assert searchable == KEYWORD_PROPERTIES
    unread = {"chunk_id", "content_sha1", "doc_sha1", "chunker", "token_count", "ingested_at"}
    assert not (unread | {REGIONS}) & FILTERABLE_PROPERTIES
    assert not any(p.indexRangeFilters for p in CHUNK_PROPERTIES)
    nested = by_name[REGIONS].nestedProperties or []
    assert {p.name for p in nested} == {"page", "bbox"}
    assert not any(p.indexFilterable or p.indexSearchable or p.indexRangeFilters for p in nested)


def test_filter_indexes_are_the_store_neutral_filterable_properties():
    assert set(FILTERABLE) == FILTERABLE_PROPERTIES
    kinds = {p.name: p.dataType for p in CHUNK_PROPERTIES}
    ints = {n for n, t in FILTERABLE.items() if t is int}
    assert {kinds[n] for n in ints} <= {DataType.INT, DataType.INT_ARRAY}
    assert {kinds[n] for n in set(FILTERABLE) - ints} == {DataType.TEXT, DataType.TEXT_ARRAY}


def test_regions_are_stored_as_page_and_box_objects():
    chunk = make_chunk("doc-a", 1).model_copy(
        update={"regions": (Region(page=1, bbox=(72, 90.5, 300, 200)),)}
    )
    props = chunk_properties(chunk, ingested_at=None)  # type: ignore[arg-type]
    assert props[REGIONS] == [{"page": 1, "bbox": [72.0, 90.5, 300.0, 200.0]}]
    assert REGIONS not in chunk_properties(chunk, None, regions=False)  # type: ignore[arg-type]
    assert chunk_properties(make_chunk("doc-a", 2), None)[REGIONS] == []  # type: ignore[arg-type]


#: What a new collection filters on: the chunk's own properties, then the metadata's
#: (``acl`` and ``has_acl`` with no keys declared).
_FILTERED = (
    FILTERABLE_PROPERTIES
    | {p.name for p in metadata_properties(MetadataConfig()) if p.indexFilterable}
    # Every collection can hold match units (small-to-big), whether or not it is on.
    | {p.name for p in unit_properties_schema() if p.indexFilterable}
)


@pytest.mark.integration
def test_new_collection_gets_the_configured_hnsw_and_indexes(weaviate_cfg):
    cfg = weaviate_cfg.model_copy(
        update={
            "hnsw_ef_construction": 48,
            "hnsw_max_connections": 20,
            "hnsw_ef": 90,
            "hnsw_dynamic_ef_min": 70,
        }
    )
    st = WeaviateStore.open(cfg, ID16)
    try:
        config = st.client.collections.use(cfg.collection).config.get()
        index = config.vector_config["default"].vector_index_config
        assert (index.ef_construction, index.max_connections, index.ef) == (48, 20, 90)
        assert index.dynamic_ef_min == 70
        assert parse_schema_version(config.description) == st.schema_version == SCHEMA_VERSION
        assert st.keyword_index is True and st.regions is True
        stored = {p.name: p for p in config.properties}
        assert {n for n, p in stored.items() if p.index_filterable} == _FILTERED
        assert {n for n, p in stored.items() if p.index_searchable} == {
            "text",
            "heading_path",
            "caption",
            "text_cjk",
        }
    finally:
        st.client.collections.delete(cfg.collection)
        st.close()


@pytest.mark.integration
def test_keyword_index_off_writes_no_bm25_index_and_searches_by_vector(weaviate_cfg):
    cfg = weaviate_cfg.model_copy(update={"keyword_index": False})
    st = WeaviateStore.open(cfg, ID16)
    try:
        stored = {
            p.name: p for p in st.client.collections.use(cfg.collection).config.get().properties
        }
        assert not any(p.index_searchable for p in stored.values())
        assert {n for n, p in stored.items() if p.index_filterable} == _FILTERED
        chunks = [make_chunk("doc-a", i, text=f"topic {w} details") for i, w in enumerate("xyz")]
        st.upsert(chunks, vectors(chunks))
        target = chunks[1]
        # Hybrid is asked for; the collection can only answer by vector.
        hits = st.search(SearchRequest("topic y details", det_vector(target.embed_text, 16), k=1))
        assert [h.uuid for h in hits] == [chunk_uuid(target.id)]
        with pytest.raises(StoreError, match="no keyword index"):
            st.search(SearchRequest("topic y", None, k=1))
        # Reopened with the default config, the collection keeps what it was created with.
        again = WeaviateStore(st.client, weaviate_cfg, ID16)
        again.ensure_schema()
        assert again.keyword_index is False
    finally:
        st.client.collections.delete(cfg.collection)
        st.close()


@pytest.mark.integration
def test_every_filterable_property_filters(chunk_store):
    target = make_chunk("doc-a", 7).model_copy(
        update={"table_id": "t-7", "parent_id": "f" * 40, "type": "table", "section_number": "7.3"}
    )
    others = [make_chunk("doc-a", i) for i in range(3)] + [make_chunk("doc-b", 7)]
    chunk_store.upsert([target, *others], vectors([target, *others]))
    language = doc_languages([target, *others])["doc-a"]  # as the store detects it
    props = chunk_properties(target, ingested_at=None, language=language)  # type: ignore[arg-type]
    coll = chunk_store.collection()
    for name in sorted(FILTERABLE_PROPERTIES):
        value = props[name][0] if isinstance(props[name], list) else props[name]
        hits = coll.query.fetch_objects(filters=Filter.by_property(name).equal(value), limit=10)
        assert chunk_uuid(target.id) in {str(o.uuid) for o in hits.objects}, name
    unindexed = (Condition("chunker", "equal", target.chunker),)
    with pytest.raises(StoreError, match="chunker"):
        chunk_store.search(SearchRequest("paragraph", None, k=3, where=unindexed))


@pytest.mark.integration
def test_a_documents_chunks_read_back_as_written_but_for_embed_text(chunk_store):
    table = make_chunk("doc-r", 1).model_copy(
        update={
            "type": "table",
            "table_id": "t-1",
            "table_row_start": 0,
            "table_row_end": 4,
            "table_markdown": "| a | b |",
            "caption": "Table 1. Costs",
            "section_number": "7.3",
            "section_numbers": ("7.3",),  # as the chunker makes them: its own number first
            "regions": (Region(page=1, bbox=(10.0, 20.0, 300.0, 400.0)),),
        }
    )
    written = [make_chunk("doc-r", 0), table, make_chunk("doc-r", 2), make_chunk("doc-s", 0)]
    chunk_store.upsert(written, vectors(written))
    read = chunk_store.chunks("doc-r", limit=10)
    assert [c.model_dump() for c in read] == [
        c.model_copy(update={"embed_text": ""}).model_dump() for c in written[:3]
    ]
    assert chunk_store.chunks("doc-none", limit=10) == []
    with pytest.raises(TooManyChunksError, match="doc-r: more than 2"):
        chunk_store.chunks("doc-r", limit=2)


@pytest.mark.integration
def test_version_1_collection_is_used_with_a_warning(weaviate_cfg, caplog):
    # A collection as chunkweave created it before versions were recorded.
    legacy = 'chunkweave:{"dimension": 16, "embedder": "test-embedder"}'
    with connect(weaviate_cfg) as client:
        client.collections.create(
            weaviate_cfg.collection,
            description=legacy,
            properties=[p for p in CHUNK_PROPERTIES if p.name != REGIONS],
            vector_config=Configure.Vectors.self_provided(),
        )
    with caplog.at_level(logging.WARNING, logger="chunkweave.storage.weaviate.collection"):
        old = WeaviateStore.open(weaviate_cfg, ID16)
    try:
        assert (old.schema_version, old.regions) == (1, False)
        assert "schema version 1" in caplog.text and "new collection" in caplog.text
        assert "slower writes" in caplog.text and "no source regions" in caplog.text
        chunks = [make_chunk("doc-a", i) for i in range(5)]
        old.upsert(chunks, vectors(chunks))
        assert old.doc_uuids("doc-a") == {chunk_uuid(c.id) for c in chunks}
    finally:
        old.client.collections.delete(weaviate_cfg.collection)
        old.close()


@pytest.mark.integration
def test_version_2_collection_is_used_without_regions(weaviate_cfg, caplog):
    # A collection as chunkweave created it before chunks had source regions.
    with connect(weaviate_cfg) as client:
        client.collections.create(
            weaviate_cfg.collection,
            description=identity_description(ID16, schema=2),
            properties=[p for p in CHUNK_PROPERTIES if p.name != REGIONS],
            vector_config=Configure.Vectors.self_provided(),
        )
    with caplog.at_level(logging.WARNING, logger="chunkweave.storage.weaviate.collection"):
        old = WeaviateStore.open(weaviate_cfg, ID16)
    try:
        assert (old.schema_version, old.regions) == (2, False)
        assert "schema version 2" in caplog.text and "no source regions" in caplog.text
        assert "slower writes" not in caplog.text
        boxed = Region(page=1, bbox=(72.0, 90.0, 300.0, 200.0))
        chunks = [make_chunk("doc-a", i).model_copy(update={"regions": (boxed,)}) for i in range(3)]
        old.upsert(chunks, vectors(chunks))  # written, without their regions
        [hit] = old.search(SearchRequest(chunks[1].text, None, k=1))
        assert hit.uuid == chunk_uuid(chunks[1].id) and hit.regions == ()
        # The schema is left as it was (no property added by the write).
        config = old.client.collections.use(weaviate_cfg.collection).config.get()
        assert REGIONS not in {p.name for p in config.properties}
    finally:
        old.client.collections.delete(weaviate_cfg.collection)
        old.close()


@pytest.mark.integration
def test_newer_schema_version_is_a_clear_error(weaviate_cfg):
    with connect(weaviate_cfg) as client:
        client.collections.create(
            weaviate_cfg.collection,
            description=identity_description(ID16, schema=SCHEMA_VERSION + 1),
            vector_config=Configure.Vectors.self_provided(),
        )
        try:
            with pytest.raises(StoreError, match=f"version {SCHEMA_VERSION + 1}.*upgrade"):
                WeaviateStore.open(weaviate_cfg, ID16)
        finally:
            client.collections.delete(weaviate_cfg.collection)


@pytest.mark.integration
def test_slices_and_concurrent_requests_write_everything_once(weaviate_cfg):
    cfg = weaviate_cfg.model_copy(update={"batch_size": 40, "concurrent_requests": 3})
    st = WeaviateStore.open(cfg, ID16)
    try:
        chunks = [make_chunk("doc-a", i) for i in range(250)]
        arrays = [np.array(v, dtype=np.float32) for v in vectors(chunks)]  # numpy rows too
        assert st.upsert(chunks, arrays) == 250
        assert st.doc_uuids("doc-a") == {chunk_uuid(c.id) for c in chunks}
        assert st.count() == 250
    finally:
        st.client.collections.delete(cfg.collection)
        st.close()


@pytest.mark.integration
def test_partly_rejected_slice_raises_with_the_reason(chunk_store):
    chunks = [make_chunk("doc-a", i) for i in range(4)]
    chunk_store.upsert(chunks[:1], vectors(chunks[:1]))  # fixes the index's dimension
    mixed = [*vectors(chunks[1:3]), det_vector("x", 5)]
    with pytest.raises(StoreError, match="rejected 1 of 3.*(dimension|length)"):
        chunk_store.upsert(chunks[1:], mixed)
    assert set(chunk_store.positions(chunk_uuid(c.id) for c in chunks)) == {
        chunk_uuid(c.id) for c in chunks[:3]
    }


@pytest.mark.integration
def test_small_upserts_do_not_wait_for_a_full_batch(chunk_store):
    # The client's fixed-size batcher waited ~1 s for a batch to fill before sending
    # a partial one; per-document upserts are mostly partial batches.
    started = time.monotonic()
    for i in range(5):
        part = [make_chunk(f"doc-{i}", j) for j in range(10)]
        chunk_store.upsert(part, vectors(part))
    assert time.monotonic() - started < 4.0
    assert chunk_store.count() == 50


@pytest.mark.integration
@pytest.mark.slow
def test_configured_hnsw_recall_matches_weaviate_defaults(weaviate_cfg):
    # Random Gaussian 384-d vectors are the hard case for HNSW: any loss shows here first.
    rng = np.random.default_rng(3)
    base = rng.standard_normal((2500, 384), dtype=np.float32)
    queries = rng.standard_normal((100, 384), dtype=np.float32)
    unit = base / np.linalg.norm(base, axis=1, keepdims=True)
    exact = np.argsort(-(queries @ unit.T), axis=1)[:, :10]
    chunks = [make_chunk("doc-r", i) for i in range(len(base))]
    ids = [chunk_uuid(c.id) for c in chunks]
    identity = EmbedderIdentity("random", 384)
    recall = {}
    weaviate = {"hnsw_ef_construction": 128, "hnsw_max_connections": 32, "hnsw_dynamic_ef_min": 100}
    for label, update in (("configured", {}), ("weaviate", weaviate)):
        cfg = weaviate_cfg.model_copy(update={"collection": f"{weaviate_cfg.collection}{label}"})
        st = WeaviateStore.open(cfg.model_copy(update=update), identity)
        try:
            st.upsert(chunks, list(base))
            coll = st.collection()
            found = 0
            for q, top in zip(queries, exact, strict=True):
                res = coll.query.near_vector(near_vector=q.tolist(), limit=10)
                found += len({str(o.uuid) for o in res.objects} & {ids[i] for i in top})
            recall[label] = found / (10 * len(queries))
        finally:
            st.client.collections.delete(cfg.collection)
            st.close()
    # The configured build is cheaper; its query-time ef floor must buy the recall back
    # (here ~0.98 vs ~0.97; 0.01 is the run-to-run spread of concurrent graph builds).
    assert recall["configured"] >= recall["weaviate"] - 0.01, recall
    assert recall["configured"] >= 0.9, recall


@pytest.mark.integration
def test_a_collection_without_section_numbers_gets_the_property_in_place(weaviate_cfg):
    # A version 3 collection made before chunks had section numbers: writes of the
    # property would fail (auto-schema is off), so opening it adds the property.
    with connect(weaviate_cfg) as client:
        client.collections.create(
            weaviate_cfg.collection,
            description=identity_description(ID16, schema=3),
            properties=[p for p in CHUNK_PROPERTIES if not p.name.startswith("section_")],
            vector_config=Configure.Vectors.self_provided(),
        )
    old = WeaviateStore.open(weaviate_cfg, ID16)
    try:
        chunk = make_chunk("doc-a", 0).model_copy(update={"section_number": "7.3.1"})
        other = make_chunk("doc-a", 1).model_copy(update={"section_number": "7.30"})
        old.upsert([chunk, other], vectors([chunk, other]))
        cited = (("section_number", "Section 7.3.1"), ("section_prefix", "§ 7.3"))
        for where in (("section_number", "7.3.1"), ("section_prefix", "7.3"), *cited):
            request = SearchRequest(
                "paragraph", None, k=3, where=(Condition(*where[:1], "equal", where[1]),)
            )
            assert [h.uuid for h in old.search(request)] == [chunk_uuid(chunk.id)], where
        request = SearchRequest(
            "paragraph", None, k=3, where=(Condition("section_prefix", "equal", "7"),)
        )
        assert len(old.search(request)) == 2
    finally:
        old.client.collections.delete(weaviate_cfg.collection)
        old.close()

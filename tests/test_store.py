"""The chunk store and ledger against a real Weaviate (hand-built chunks)."""

from __future__ import annotations

import time
import uuid
from typing import get_args

import pytest
from weaviate.classes.query import Filter

from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.errors import EmbedderMismatchError, StoreError, StoreUnavailableError
from chunkweave.storage.filters import Condition, Operator, SearchRequest
from chunkweave.storage.hits import relevance
from chunkweave.storage.uuids import chunk_uuid, ledger_uuid
from chunkweave.storage.values import EmbedderIdentity, LedgerEntry
from chunkweave.storage.weaviate.schema import (
    identity_description,
    parse_identity,
)
from chunkweave.storage.weaviate.search import where_filter
from chunkweave.storage.weaviate.server.local import LocalWeaviate
from chunkweave.storage.weaviate.store import WeaviateStore
from tests.store_helpers import ID16, det_vector, make_chunk, vectors


@pytest.fixture
def store_and_ledger(weaviate_cfg: WeaviateConfig):
    """A fresh store; its chunk and ledger collections are dropped after the test."""
    st = WeaviateStore.open(weaviate_cfg, ID16)
    yield st
    st.client.collections.delete([weaviate_cfg.collection, weaviate_cfg.ledger_collection])
    st.close()


def test_chunk_uuid_is_deterministic_distinct_and_valid():
    a, b = "a" * 40, "b" * 40
    assert chunk_uuid(a) == chunk_uuid(a)
    assert chunk_uuid(a) != chunk_uuid(b)
    assert uuid.UUID(chunk_uuid(a)).version == 5
    assert ledger_uuid("file:///x") != ledger_uuid("file:///y")


@pytest.mark.parametrize("bad", ["", "A" * 40, "g" * 40, "a" * 39, "a" * 41])
def test_chunk_uuid_rejects_malformed_ids(bad):
    with pytest.raises(ValueError, match="SHA1"):
        chunk_uuid(bad)


@pytest.mark.parametrize(
    ("score", "distance", "by_distance", "expected"),
    [
        (None, 0.0, True, 1.0),  # same direction: best
        (None, 0.25, True, 0.75),
        (None, 2.0, True, -1.0),  # opposite: worst
        (0.0, 0.25, True, 0.75),  # vector-only ranks by distance whatever score says
        (0.8, None, False, 0.8),  # hybrid / BM25 scores are kept
        (None, None, True, None),
    ],
)
def test_relevance_is_higher_for_better_hits(score, distance, by_distance, expected):
    assert relevance(score, distance, by_distance=by_distance) == expected


def test_store_errors_carry_codes_and_say_which_are_transient():
    assert (StoreError.code, StoreError("x").transient) == (ErrorCode.STORE_ERROR, False)
    down = StoreUnavailableError("down")
    assert (down.code, down.transient) == (ErrorCode.STORE_UNAVAILABLE, True)
    assert EmbedderMismatchError("x").code == ErrorCode.EMBEDDER_MISMATCH
    assert not EmbedderMismatchError("x").transient


def test_conditions_translate_to_one_weaviate_filter_anded_in_order():
    assert where_filter([]) is None
    one = where_filter([Condition("doc_id", "equal", "doc-a")])
    assert one == Filter.by_property("doc_id").equal("doc-a")
    ops = ["equal", "not_equal", "less_than", "less_or_equal", "greater_than", "greater_or_equal"]
    assert set(ops) == set(get_args(Operator))
    both = where_filter([Condition("pages", "equal", 3), Condition("type", "not_equal", "table")])
    expected = Filter.by_property("pages").equal(3) & Filter.by_property("type").not_equal("table")
    assert type(both) is type(expected) and vars(both) == vars(expected)
    prop = Filter.by_property("page_start")
    for op in ops:
        assert where_filter([Condition("page_start", op, 2)]) == getattr(prop, op)(2), op


def test_identity_round_trips_through_the_description():
    assert parse_identity(identity_description(ID16)) == ID16
    assert parse_identity("someone else's collection") is None


@pytest.mark.integration
def test_upsert_is_idempotent_and_keyed_by_chunk_uuid(store_and_ledger):
    chunks = [make_chunk("doc-a", i) for i in range(120)]
    assert store_and_ledger.upsert(chunks, vectors(chunks)) == 120
    first = store_and_ledger.doc_uuids("doc-a")
    assert first == {chunk_uuid(c.id) for c in chunks}
    store_and_ledger.upsert(chunks, vectors(chunks))
    assert store_and_ledger.count() == 120
    assert store_and_ledger.doc_uuids("doc-a") == first


@pytest.mark.integration
def test_positions_report_only_stored_uuids(store_and_ledger):
    chunks = [make_chunk("doc-a", i) for i in range(5)]
    store_and_ledger.upsert(chunks[:3], vectors(chunks[:3]))
    wanted = [chunk_uuid(c.id) for c in chunks]
    found = store_and_ledger.positions(wanted)
    assert {u: p.chunk_index for u, p in found.items()} == {wanted[i]: i for i in range(3)}


@pytest.mark.integration
def test_rejected_objects_raise_with_the_reason(store_and_ledger):
    chunks = [make_chunk("doc-a", i) for i in range(3)]
    store_and_ledger.upsert(chunks[:1], vectors(chunks[:1]))
    with pytest.raises(StoreError, match="dimension|length"):
        store_and_ledger.upsert(chunks[1:], vectors(chunks[1:], dim=5))
    assert store_and_ledger.count() == 1


@pytest.mark.integration
def test_reopening_with_another_embedder_is_a_clear_error(store_and_ledger, weaviate_cfg):
    with pytest.raises(EmbedderMismatchError, match="test-embedder \\(16-d\\).*other \\(384-d\\)"):
        WeaviateStore.open(weaviate_cfg, EmbedderIdentity("other", 384))


@pytest.mark.integration
def test_delete_doc_and_ids_touch_only_their_targets(store_and_ledger):
    a = [make_chunk("doc-a", i) for i in range(30)]
    b = [make_chunk("doc-b", i) for i in range(10)]
    store_and_ledger.upsert(a + b, vectors(a + b))
    assert store_and_ledger.delete_ids([chunk_uuid(c.id) for c in a[:4]]) == 4
    assert store_and_ledger.count("doc-a") == 26
    assert store_and_ledger.delete_doc("doc-a") == 26
    assert store_and_ledger.count("doc-a") == 0
    assert store_and_ledger.doc_uuids("doc-b") == {chunk_uuid(c.id) for c in b}


@pytest.mark.integration
def test_search_returns_text_heading_path_pages_and_source(store_and_ledger):
    chunks = [make_chunk("doc-a", i, text=f"topic {w} details") for i, w in enumerate("xyzw")]
    chunks.append(make_chunk("doc-b", 0, text="topic x elsewhere"))
    store_and_ledger.upsert(chunks, vectors(chunks))
    target = chunks[2]
    hits = store_and_ledger.search(
        SearchRequest("topic z details", det_vector(target.embed_text, 16), k=3, hybrid=False)
    )
    assert hits[0].uuid == chunk_uuid(target.id)
    # Vector-only: score = 1 - cosine distance, best first; the query is the target's vector.
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and scores[0] == pytest.approx(1.0, abs=1e-4)
    assert all(h.score == pytest.approx(1 - h.distance) for h in hits)
    assert (hits[0].text, hits[0].heading_path) == (target.text, target.heading_path)
    assert (hits[0].pages, hits[0].source) == (target.pages, target.source)
    only_b = (Condition("doc_id", "equal", "doc-b"),)
    hybrid = store_and_ledger.search(
        SearchRequest("topic x", det_vector("q", 16), k=5, where=only_b)
    )
    assert [h.doc_id for h in hybrid] == ["doc-b"]
    assert [h.text for h in store_and_ledger.search(SearchRequest("elsewhere", None, k=3))] == [
        "topic x elsewhere"
    ]
    keyword = store_and_ledger.search(SearchRequest("x", None))
    for ranked in (
        store_and_ledger.search(SearchRequest("topic x details", det_vector("q", 16), k=5)),
        keyword,
    ):
        scores = [h.score for h in ranked]  # hybrid fusion / BM25 scores: higher is better
        assert len(scores) > 1 and scores == sorted(scores, reverse=True)


@pytest.mark.integration
def test_ledger_put_get_list_delete(store_and_ledger):
    ledger = store_and_ledger.open_ledger()
    ledger.ensure_schema()
    assert ledger.get("file:///a") is None
    first = ledger.put(LedgerEntry(doc_id="file:///a", source="/a", status="ok", chunk_count=3))
    again = ledger.put(first.model_copy(update={"status": "failed", "error_code": "corrupt"}))
    got = ledger.get("file:///a")
    assert got is not None and (got.status, got.error_code, got.chunk_count) == (
        "failed",
        "corrupt",
        3,
    )
    assert got.created_at == first.created_at and again.updated_at >= first.updated_at
    ledger.put(LedgerEntry(doc_id="file:///b", source="/b", status="ok"))
    assert {e.doc_id for e in ledger.entries()} == {"file:///a", "file:///b"}
    assert ledger.delete("file:///a")
    assert ledger.get("file:///a") is None


@pytest.mark.integration
def test_tenants_are_isolated(weaviate_cfg):
    base = weaviate_cfg.model_copy(update={"multi_tenancy": True})
    one = WeaviateStore.open(base.model_copy(update={"tenant": "one"}), ID16)
    two = WeaviateStore(one.client, base.model_copy(update={"tenant": "two"}), ID16)
    two.ensure_schema()
    try:
        chunks = [make_chunk("doc-a", i) for i in range(4)]
        one.upsert(chunks, vectors(chunks))
        assert (one.count(), two.count()) == (4, 0)
        with pytest.raises(StoreError, match="name a tenant"):
            WeaviateStore(one.client, base, ID16).count()
    finally:
        one.client.collections.delete(weaviate_cfg.collection)
        one.close()


@pytest.mark.integration
def test_deletes_and_listing_loop_past_query_maximum_results(tmp_path):
    with LocalWeaviate(tmp_path / "wv", extra_env={"QUERY_MAXIMUM_RESULTS": "100"}) as server:
        st = WeaviateStore.open(server.config(), ID16)
        st.page_size = 100
        chunks = [make_chunk("doc-a", i) for i in range(250)]
        st.upsert(chunks, vectors(chunks))
        assert st.doc_uuids("doc-a") == {chunk_uuid(c.id) for c in chunks}
        assert [c.id for c in st.chunks("doc-a", limit=250)] == [c.id for c in chunks]
        assert st.delete_doc("doc-a") == 250
        assert st.count() == 0
        st.close()


@pytest.mark.integration
def test_server_down_retries_then_fails_clearly_and_recovers(own_weaviate):
    cfg = own_weaviate.config(WeaviateConfig(retries=2))
    st = WeaviateStore.open(cfg, ID16)
    chunks = [make_chunk("doc-a", i) for i in range(40)]
    st.upsert(chunks[:20], vectors(chunks[:20]))
    own_weaviate.stop()
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError, match="after 2 retries"):
        st.upsert(chunks[20:], vectors(chunks[20:]))
    with pytest.raises(StoreUnavailableError) as down:
        st.count()
    assert time.monotonic() - started < 30
    assert down.value.transient and down.value.code == ErrorCode.STORE_UNAVAILABLE
    with pytest.raises(StoreUnavailableError):  # the ledger shares the store's retries
        st.open_ledger().get("doc-a")
    own_weaviate.start()
    st.upsert(chunks[20:], vectors(chunks[20:]))
    assert st.count("doc-a") == 40
    st.close()

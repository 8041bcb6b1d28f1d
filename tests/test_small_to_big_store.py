"""Small-to-big retrieval on a real Weaviate: units obey tenants and ACLs, re-ingest prunes them.

Searches here are BM25 only (no query vector): the test embedder's vectors mean
nothing, and a keyword names one table row exactly.
"""

from __future__ import annotations

import pytest

from chunkweave.chunking.match_units import match_units
from chunkweave.storage.chunk_files import read_manifest
from chunkweave.storage.config import FilesConfig
from chunkweave.storage.filters import SearchRequest
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.stores import open_store
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.store import WeaviateStore
from tests.store_helpers import CountingEmbedder
from tests.test_match_units import fauna_docx

pytestmark = pytest.mark.integration


@pytest.fixture
def s2b_pipeline(weaviate_cfg):
    cfg = weaviate_cfg.model_copy(update={"multi_tenancy": True, "small_to_big": True})
    embedder = CountingEmbedder()
    store = WeaviateStore.open(cfg, EmbedderIdentity(embedder.name, embedder.dimension))
    yield Pipeline(store=store, embedder=embedder)
    store.client.collections.delete([cfg.collection, cfg.ledger_collection])
    store.close()


def _ask(store: WeaviateStore, query: str, **kw) -> list:
    return store.search(SearchRequest(query, None, k=10, small_to_big=True, **kw))


def test_units_never_bring_back_a_chunk_the_caller_may_not_see(s2b_pipeline, tmp_path):
    pipe = s2b_pipeline
    store = pipe.store
    a = fauna_docx(tmp_path / "a.docx")
    hidden = fauna_docx(tmp_path / "hidden.docx")
    b = fauna_docx(tmp_path / "b.docx")
    assert pipe.ingest(a, tenant="a", metadata={"acl": ["team-x"]}).status == "added"
    assert pipe.ingest(hidden, tenant="a", metadata={"acl": ["team-y"]}).status == "added"
    assert pipe.ingest(b, tenant="b").status == "added"
    a_id = next(e.doc_id for e in pipe.scope("a").ledger.entries() if e.source.endswith("a.docx"))

    hits = _ask(store, "quokka", tenant="a", principals=("team-x",))
    assert hits and {h.doc_id for h in hits} == {a_id}
    best = hits[0]
    assert best.type == "table" and "quokka" in best.text
    assert best.matched[0].kind == "row" and best.matched[0].row == 3
    assert "quokka" in best.matched[0].text
    assert _ask(store, "quokka", tenant="a", principals=("team-z",)) == []
    assert _ask(store, "quokka", tenant="a", principals=()) == []
    # Tenant b's copy has no acl: nobody named sees it; a trusted caller sees only b.
    assert _ask(store, "quokka", tenant="b", principals=("team-x",)) == []
    b_hits = _ask(store, "quokka", tenant="b")
    assert b_hits and {h.source for h in b_hits} == {str(b)}
    # The plain chunk search never returns a unit (the row's text alone is no chunk).
    plain = store.search(SearchRequest("quokka", None, k=50, tenant="a", small_to_big=False))
    assert plain and all(not h.matched and "| quokka |" in h.text for h in plain)
    assert store.for_tenant("a").count() == sum(
        e.chunk_count for e in pipe.scope("a").ledger.entries()
    )
    # A new acl alone (retagged in place) reaches the units too.
    moved = pipe.ingest(a, tenant="a", metadata={"acl": ["team-z"]})
    assert moved.status == "updated" and moved.chunks_added == 0
    assert _ask(store, "quokka", tenant="a", principals=("team-x",)) == []
    assert {h.doc_id for h in _ask(store, "quokka", tenant="a", principals=("team-z",))} == {a_id}


def test_reingest_and_delete_leave_no_stale_unit(weaviate_cfg, tmp_path):
    cfg = weaviate_cfg.model_copy(update={"small_to_big": True})
    embedder = CountingEmbedder()
    files = FilesConfig(dir=str(tmp_path / "files"))
    store = open_store(cfg, EmbedderIdentity(embedder.name, embedder.dimension), files)
    inner = store.inner  # type: ignore[attr-defined]
    try:
        pipe = Pipeline(store=store, embedder=embedder)
        path = fauna_docx(tmp_path / "f.docx")
        first = pipe.ingest(path)
        doc_id = first.doc_id
        assert first.status == "added" and _ask(inner, "quokka")
        fauna_docx(path, special="wombat")
        second = pipe.ingest(path)
        assert second.status == "updated" and second.chunks_deleted > 0

        chunks = pipe.chunk(pipe.parse(path), source=first.source, doc_id=doc_id)
        want = {u.text for u in match_units(chunks, embedder, embedder.max_tokens)}
        parents = inner.unit_parents(doc_id)
        chunk_uuids = inner.doc_uuids(doc_id) - set(parents)
        assert len(chunk_uuids) == len(chunks) == inner.count(doc_id)
        assert set(parents.values()) <= chunk_uuids and len(parents) == len(want)
        assert _ask(inner, "quokka") == []
        (hit,) = [h for h in _ask(inner, "wombat") if h.type == "table"]
        assert hit.matched[0].row == 3 and len(inner.chunks(doc_id, limit=100)) == len(chunks)
        # The files sink mirrors chunks only: one file per chunk, no unit.
        assert len(read_manifest(tmp_path / "files")[doc_id]) == len(chunks)

        assert pipe.delete(doc_id).status == "deleted"
        assert inner.doc_uuids(doc_id) == set() and inner.unit_parents(doc_id) == {}
    finally:
        inner.client.collections.delete([cfg.collection, cfg.ledger_collection])
        store.close()


def test_without_units_small_to_big_is_the_chunk_search(weaviate_cfg):
    from tests.store_helpers import make_chunk, vectors

    store = WeaviateStore.open(weaviate_cfg, EmbedderIdentity("test-embedder", 16))
    try:
        chunks = [make_chunk("doc", i, text=f"topic {w} details") for i, w in enumerate("xyzw")]
        store.upsert(chunks, vectors(chunks))
        plain = store.search(SearchRequest("topic z", None, k=3, small_to_big=False))
        fused = store.search(SearchRequest("topic z", None, k=3, small_to_big=True))
        # Same top hit, same (BM25) scores: ties below it may come in another order.
        assert plain and fused[0] == plain[0] and "topic z" in fused[0].text
        assert sorted(h.score for h in fused) == sorted(h.score for h in plain)
    finally:
        store.client.collections.delete([weaviate_cfg.collection, weaviate_cfg.ledger_collection])
        store.close()

"""The ingest pipeline's building blocks against a real Weaviate (hand-built chunks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chunkweave.storage.ingest import Pipeline, doc_id_for
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.weaviate_store import EmbedderIdentity, WeaviateStore
from tests.store_helpers import CountingEmbedder, make_chunk


def test_doc_id_for_paths_is_the_absolute_file_uri(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.pdf").write_bytes(b"x")
    expected = (tmp_path / "a.pdf").resolve().as_uri()
    assert doc_id_for("a.pdf") == expected == doc_id_for(tmp_path / "sub" / ".." / "a.pdf")
    assert doc_id_for(tmp_path / "gone.pdf").startswith("file:///")  # need not exist


def test_doc_id_for_uris_keeps_them_with_a_lowercase_scheme():
    assert doc_id_for("S3://bucket/Key.PDF") == "s3://bucket/Key.PDF"
    assert doc_id_for(Path("/x/y.docx")) == "file:///x/y.docx"


@pytest.fixture
def pipeline(weaviate_cfg):
    embedder = CountingEmbedder()
    store = WeaviateStore.open(weaviate_cfg, EmbedderIdentity(embedder.name, embedder.dimension))
    yield Pipeline(store=store, embedder=embedder)
    store.client.collections.delete([weaviate_cfg.collection, weaviate_cfg.ledger_collection])
    store.close()


@pytest.mark.integration
def test_upsert_chunks_embeds_only_chunks_not_stored(pipeline):
    chunks = [make_chunk("doc", i) for i in range(50)]
    first = pipeline.upsert_chunks(chunks)
    assert (first.added, first.unchanged) == (50, 0)
    assert len(pipeline.embedder.embedded) == 50
    again = pipeline.upsert_chunks(chunks)
    assert (again.added, again.unchanged) == (0, 50)
    assert len(pipeline.embedder.embedded) == 50
    assert again.uuids == first.uuids == {chunk_uuid(c.id) for c in chunks}


@pytest.mark.integration
def test_changed_document_writes_new_then_prunes_stale_only(pipeline):
    old = [make_chunk("doc", i) for i in range(20)]
    other = [make_chunk("other", i) for i in range(5)]
    pipeline.upsert_chunks(old + other)
    new = [*old[:7], make_chunk("doc", 7, text="edited paragraph"), *old[8:]]
    pipeline.embedder.embedded.clear()
    written = pipeline.upsert_chunks(new)
    # Between upsert and prune the document has old and new chunks, never none.
    assert pipeline.store.count("doc") == 21
    assert pipeline.prune("doc", written.uuids) == 1
    assert pipeline.embedder.embedded == [new[7].embed_text]
    assert pipeline.store.doc_uuids("doc") == {chunk_uuid(c.id) for c in new}
    assert pipeline.store.count("other") == 5


@pytest.mark.integration
def test_duplicate_chunk_ids_are_refused(pipeline):
    chunk = make_chunk("doc", 0)
    with pytest.raises(ValueError, match="duplicate"):
        pipeline.upsert_chunks([chunk, chunk])


@pytest.mark.integration
def test_delete_removes_chunks_and_ledger_entry(pipeline):
    chunks = [make_chunk("doc", i) for i in range(12)]
    written = pipeline.upsert_chunks(chunks)
    pipeline.record_ok("doc", "/docs/doc.pdf", "d" * 40, 3, len(written.uuids))
    outcome = pipeline.delete("doc")
    assert (outcome.status, outcome.chunks_deleted, outcome.source) == (
        "deleted",
        12,
        "/docs/doc.pdf",
    )
    assert pipeline.store.count("doc") == 0
    assert pipeline.ledger.get("doc") is None


@pytest.mark.integration
def test_missing_file_is_a_failed_outcome_naming_it(pipeline, tmp_path):
    missing = tmp_path / "nope.pdf"
    outcome = pipeline.ingest(missing)
    assert outcome.status == "failed"
    assert str(missing) in (outcome.error or "")
    entry = pipeline.ledger.get(doc_id_for(missing))
    assert entry is not None and entry.status == "failed"


@pytest.mark.integration
def test_none_embedder_stores_without_vectors_and_bm25_finds_them(weaviate_cfg):
    embedder = CountingEmbedder(name="none", dimension=0)
    store = WeaviateStore.open(weaviate_cfg, EmbedderIdentity("none", 0))
    try:
        pipe = Pipeline(store=store, embedder=embedder)
        chunks = [make_chunk("doc", i, text=f"alpha beta {w}") for i, w in enumerate("xyz")]
        assert pipe.upsert_chunks(chunks).added == 3
        assert embedder.embedded == []
        hits = store.search("beta y", None, k=1)
        assert [h.text for h in hits] == ["alpha beta y"]
    finally:
        store.client.collections.delete([weaviate_cfg.collection, weaviate_cfg.ledger_collection])
        store.close()

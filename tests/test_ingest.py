"""The ingest pipeline's building blocks against a real Weaviate (hand-built chunks)."""

from __future__ import annotations

from pathlib import Path

import pytest
from docx import Document

from chunkweave.chunking.models import ChunkOptions
from chunkweave.parsers import parse_document
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.embedders import EmbedderError, EmbeddingServiceError
from chunkweave.storage.errors import StoreError, StoreUnavailableError
from chunkweave.storage.filters import SearchRequest
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.pipeline import conductor as ingest
from chunkweave.storage.pipeline.conductor import Pipeline, open_pipeline
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.store import WeaviateStore
from tests.store_helpers import CountingEmbedder, MemoryStore, make_chunk


def test_doc_id_for_paths_is_the_absolute_file_uri(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.pdf").write_bytes(b"x")
    expected = (tmp_path / "a.pdf").resolve().as_uri()
    assert doc_id_for("a.pdf") == expected == doc_id_for(tmp_path / "sub" / ".." / "a.pdf")
    assert doc_id_for(tmp_path / "gone.pdf").startswith("file:///")  # need not exist


def test_doc_id_for_uris_keeps_them_with_a_lowercase_scheme():
    assert doc_id_for("S3://bucket/Key.PDF") == "s3://bucket/Key.PDF"
    assert doc_id_for(Path("/x/y.docx")) == "file:///x/y.docx"


def _docx(path: Path, paragraphs: int = 3) -> Path:
    doc = Document()
    doc.add_heading("Intro", level=1)
    for i in range(paragraphs):
        doc.add_paragraph(f"Paragraph {i} says something about topic {i}. " * 3)
    doc.save(str(path))
    return path


class FailingEmbedder(CountingEmbedder):
    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise self.error


def test_ingest_parsed_with_its_chunks_does_not_chunk_again(tmp_path, monkeypatch):
    # The fan-out's join chunks the document to pick its write path, then hands the
    # chunks on: the pipeline writes exactly those and never chunks a second time.
    path = _docx(tmp_path / "a.docx")
    doc, source, doc_id = parse_document(path), str(path), doc_id_for(path)
    store = MemoryStore()
    pipe = Pipeline(store=store, embedder=CountingEmbedder())
    chunks = pipe.chunk(doc, source=source, doc_id=doc_id)
    monkeypatch.setattr(pipe, "chunk", lambda *a, **kw: pytest.fail("chunked again"))
    outcome = pipe.ingest_parsed(doc, source=source, doc_id=doc_id, chunks=chunks)
    assert (outcome.status, outcome.chunks_added) == ("added", len(chunks))
    assert store.doc_uuids(doc_id) == {chunk_uuid(c.id) for c in chunks}


def test_ingest_then_unchanged_then_delete_on_any_chunk_store(tmp_path):
    store = MemoryStore()
    pipe = Pipeline(store=store, embedder=CountingEmbedder())
    path = _docx(tmp_path / "a.docx")
    doc_id = doc_id_for(path)
    assert pipe.ledger.get(doc_id) is None
    first = pipe.ingest(path)
    assert first.status == "added" and first.chunks_added == len(store.doc_uuids(doc_id)) > 0
    assert pipe.ledger.get(doc_id) is not None
    assert pipe.ingest(path).status == "unchanged"
    assert pipe.delete(doc_id).chunks_deleted == first.chunks_added
    assert pipe.ledger.get(doc_id) is None and not store.objects
    pipe.close()
    assert store.closed


@pytest.mark.parametrize("strategy", ["elements", "semantic"])
def test_chunk_is_what_ingest_stores(tmp_path, strategy):
    store, embedder = MemoryStore(), CountingEmbedder()
    pipe = Pipeline(store=store, embedder=embedder, chunk_opts=ChunkOptions(strategy=strategy))
    path = _docx(tmp_path / "a.docx", paragraphs=6)
    doc_id = doc_id_for(path)
    chunks = pipe.chunk(parse_document(path), source=str(path), doc_id=doc_id)
    if strategy == "semantic":  # its sentence embeddings go through the pipeline's embedder
        assert embedder.embedded
    pipe.ingest(path, source=str(path), doc_id=doc_id)
    assert store.doc_uuids(doc_id) == {chunk_uuid(c.id) for c in chunks}


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (EmbeddingServiceError("down", status=None), ErrorCode.EMBEDDER_UNAVAILABLE),
        (EmbeddingServiceError("throttled", status=429), ErrorCode.EMBEDDER_UNAVAILABLE),
        (EmbeddingServiceError("failing", status=503), ErrorCode.EMBEDDER_UNAVAILABLE),
        (EmbeddingServiceError("refused", status=400), ErrorCode.EMBEDDER_ERROR),
        (EmbedderError("broken model"), ErrorCode.EMBEDDER_ERROR),
        (StoreUnavailableError("store down"), ErrorCode.STORE_UNAVAILABLE),
        (ZeroDivisionError("bug"), ErrorCode.INTERNAL),
    ],
)
def test_failures_are_recorded_with_their_error_code(tmp_path, error, code):
    """A bad document is a recorded failed outcome; a transient failure is raised.

    The caller retries a transient failure (a task) or records it itself (the CLI:
    ``Pipeline.failed``), so it never travels as an outcome to be raised again.
    """
    store = MemoryStore()
    pipe = Pipeline(store=store, embedder=FailingEmbedder(error))
    path = _docx(tmp_path / "a.docx")
    transient = code in (ErrorCode.EMBEDDER_UNAVAILABLE, ErrorCode.STORE_UNAVAILABLE)
    assert getattr(error, "transient", False) is transient
    if transient:
        with pytest.raises(type(error)) as raised:
            pipe.ingest(path)
        assert raised.value.code == code
        assert store.ledger.get(doc_id_for(path)) is None
        outcome = pipe.failed(str(path), doc_id_for(path), code, str(raised.value))
    else:
        outcome = pipe.ingest(path)
    assert (outcome.status, outcome.error_code) == ("failed", code)
    entry = store.ledger.get(doc_id_for(path))
    assert entry is not None and (entry.status, entry.error_code) == ("failed", code)


def test_missing_file_is_not_found(tmp_path):
    pipe = Pipeline(store=MemoryStore(), embedder=CountingEmbedder())
    assert pipe.ingest(tmp_path / "gone.docx").error_code == ErrorCode.NOT_FOUND


def test_open_pipeline_builds_on_the_opened_store_and_closes_it_on_failure(monkeypatch):
    opened: list[tuple[WeaviateConfig, EmbedderIdentity]] = []
    store = MemoryStore(EmbedderIdentity("test-embedder", 16))

    def fake_open(cfg: WeaviateConfig, identity: EmbedderIdentity, files=None) -> MemoryStore:
        assert files is None  # no files sink unless configured
        opened.append((cfg, identity))
        return store

    monkeypatch.setattr(ingest, "open_store", fake_open)
    weaviate_cfg = WeaviateConfig()
    pipe = open_pipeline(weaviate_cfg, CountingEmbedder())
    assert pipe.store is store and pipe.ledger is store.ledger and not store.closed
    assert opened == [(weaviate_cfg, EmbedderIdentity("test-embedder", 16))]
    store.identity = EmbedderIdentity("other", 16)  # the pipeline refuses this store
    with pytest.raises(StoreError, match="other"):
        open_pipeline(weaviate_cfg, CountingEmbedder())
    assert store.closed


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
    first = pipeline.writer.upsert(chunks)
    assert (first.added, first.unchanged) == (50, 0)
    assert len(pipeline.embedder.embedded) == 50
    again = pipeline.writer.upsert(chunks)
    assert (again.added, again.unchanged) == (0, 50)
    assert len(pipeline.embedder.embedded) == 50
    assert again.uuids == first.uuids == {chunk_uuid(c.id) for c in chunks}


@pytest.mark.integration
def test_changed_document_writes_new_then_prunes_stale_only(pipeline):
    old = [make_chunk("doc", i) for i in range(20)]
    other = [make_chunk("other", i) for i in range(5)]
    pipeline.writer.upsert(old + other)
    new = [*old[:7], make_chunk("doc", 7, text="edited paragraph"), *old[8:]]
    pipeline.embedder.embedded.clear()
    written = pipeline.writer.upsert(new)
    # Between upsert and prune the document has old and new chunks, never none.
    assert pipeline.store.count("doc") == 21
    assert pipeline.writer.prune("doc", written.uuids) == 1
    assert pipeline.embedder.embedded == [new[7].embed_text]
    assert pipeline.store.doc_uuids("doc") == {chunk_uuid(c.id) for c in new}
    assert pipeline.store.count("other") == 5


@pytest.mark.integration
def test_duplicate_chunk_ids_are_refused(pipeline):
    chunk = make_chunk("doc", 0)
    with pytest.raises(ValueError, match="duplicate"):
        pipeline.writer.upsert([chunk, chunk])


@pytest.mark.integration
def test_delete_removes_chunks_and_ledger_entry(pipeline):
    chunks = [make_chunk("doc", i) for i in range(12)]
    write = pipeline.writer.begin(doc_id="doc", source="/docs/doc.pdf", doc_sha1="d" * 40, pages=3)
    write.write(chunks)
    assert write.commit().status == "added"
    assert pipeline.ledger.get("doc") is not None
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
        assert pipe.writer.upsert(chunks).added == 3
        assert embedder.embedded == []
        hits = store.search(SearchRequest("beta y", None, k=1))
        assert [h.text for h in hits] == ["alpha beta y"]
    finally:
        store.client.collections.delete([weaviate_cfg.collection, weaviate_cfg.ledger_collection])
        store.close()

"""The ``files`` sink beside a real Weaviate: files follow every write and delete of the store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from docx import Document

from chunkweave.storage.chunk_files import read_export
from chunkweave.storage.config import FilesConfig, WeaviateConfig
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.stores import MirroredStore, open_store
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.client import connect
from tests.store_helpers import CountingEmbedder


def _docx(path: Path, sections: dict[str, str]) -> Path:
    doc = Document()
    for heading, text in sections.items():
        doc.add_heading(heading, level=1)
        doc.add_paragraph(text)
    doc.save(str(path))
    return path


def _words(n: int, seed: str) -> str:
    return " ".join(f"{seed}{i}" for i in range(n))


@pytest.fixture
def stores(weaviate_cfg: WeaviateConfig, tmp_path: Path) -> Iterator[tuple[Path, CountingEmbedder]]:
    embedder = CountingEmbedder()
    yield tmp_path / "files", embedder
    with connect(weaviate_cfg) as client:
        client.collections.delete([weaviate_cfg.collection, weaviate_cfg.ledger_collection])


def _pipeline(cfg: WeaviateConfig, embedder: CountingEmbedder, files: Path | None) -> Pipeline:
    identity = EmbedderIdentity(embedder.name, embedder.dimension)
    config = FilesConfig(dir=str(files)) if files else None
    return Pipeline(store=open_store(cfg, identity, config), embedder=embedder)


@pytest.mark.integration
def test_files_follow_the_store(weaviate_cfg, stores, tmp_path):
    out, embedder = stores
    pipe = _pipeline(weaviate_cfg, embedder, out)
    assert isinstance(pipe.store, MirroredStore)
    path = _docx(
        tmp_path / "a.docx",
        {"1 Scope": _words(60, "a"), "2 Terms": _words(60, "b"), "3 Rules": _words(60, "c")},
    )
    doc_id = doc_id_for(path)
    try:
        assert pipe.ingest(path).status == "added"
        stored = pipe.store.doc_uuids(doc_id)
        back = read_export(out)
        assert {chunk_uuid(b.id) for b in back} == stored and len(back) == len(stored)
        assert [b.meta["section_number"] for b in back] == ["1", "2", "3"]
        # An edit: one new chunk, one stale one; the files follow.
        _docx(
            path,
            {"1 Scope": _words(60, "a"), "2 Terms": _words(60, "x"), "3 Rules": _words(60, "c")},
        )
        assert pipe.ingest(path).status == "updated"
        back = read_export(out)
        assert {chunk_uuid(b.id) for b in back} == pipe.store.doc_uuids(doc_id)
        assert any("x0" in b.text for b in back) and not any("b0" in b.text for b in back)
        assert len(list(out.rglob("*.md"))) == len(back)
        pipe.delete(doc_id)
        assert read_export(out) == [] and not list(out.rglob("*.md"))
    finally:
        pipe.close()


@pytest.mark.integration
def test_a_sink_switched_on_later_fills_without_embedding(weaviate_cfg, stores, tmp_path):
    out, embedder = stores
    path = _docx(tmp_path / "a.docx", {"1 Scope": _words(60, "a"), "2 Terms": _words(60, "b")})
    plain = _pipeline(weaviate_cfg, embedder, None)
    try:
        plain.ingest(path)
    finally:
        plain.close()
    embedded = len(embedder.embedded)
    mirrored = _pipeline(weaviate_cfg, embedder, out)
    try:
        outcome = mirrored.ingest(path, force=True)
        assert outcome.status == "updated"
        assert len(embedder.embedded) == embedded  # stored vectors reused
        assert {chunk_uuid(b.id) for b in read_export(out)} == mirrored.store.doc_uuids(
            doc_id_for(path)
        )
    finally:
        mirrored.close()


def test_the_sink_is_configured_in_the_settings(monkeypatch, tmp_path):
    from chunkweave.worker.settings import Settings

    assert Settings().files.dir is None
    monkeypatch.setenv("CHUNKWEAVE_FILES__DIR", str(tmp_path))
    assert Settings().files == FilesConfig(dir=str(tmp_path))

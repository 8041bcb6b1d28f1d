"""A chunk of merged sections carries every section number it holds, and filters find each.

Short numbered sections (a DOCX built here) merge under the default policy; the
chunks are stored in the real Weaviate through the real pipeline, then searched with
``section_number`` and ``section_prefix`` filters, cited as a reader would.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docx import Document

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.chunking.sections import all_section_prefixes, held_section_numbers
from chunkweave.parsers import parse_document
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.filters import Condition, SearchRequest
from chunkweave.storage.pipeline.conductor import open_pipeline
from tests.store_helpers import CountingEmbedder

#: (heading level, heading, the one short sentence under it)
SECTIONS = (
    (1, "1 Scope", "These rules cover the harbour."),
    (2, "1.1 Purpose", "They keep ships apart."),
    (1, "2 Definitions", "Words used in these rules."),
    (3, "2.3.1 Night shift", "Work between ten and six."),
    (1, "7 Operations", "How the harbour runs."),
    (2, "7.3 Berths", "Where ships moor."),
    (3, "7.3.1 Mooring", "Lines and fenders."),
    (4, "7.3.1.1 Lines", "Rope sizes."),
    (5, "7.3.1.1.1 Bollards", "Bollard loads."),
    (6, "7.3.1.1.1.1 Bollard tests", "Tested yearly with weights."),
)


def _docx(path: Path) -> Path:
    doc = Document()
    for level, heading, sentence in SECTIONS:
        doc.add_heading(heading, level=level)
        doc.add_paragraph(sentence)
    doc.save(str(path))
    return path


def _holding(chunks, sentence: str):
    return next(c for c in chunks if sentence in c.text)


def test_merged_sections_keep_every_number(tmp_path: Path):
    doc = parse_document(_docx(tmp_path / "rules.docx"))
    chunks = chunk_document(doc, ChunkOptions(), ApproxTokenCounter(), doc_id="rules")
    first = _holding(chunks, "They keep ships apart.")
    second = _holding(chunks, "Work between ten and six.")
    deep = _holding(chunks, "Tested yearly with weights.")
    # The default policy merged the short sections (the premise of this test) ...
    assert "These rules cover the harbour." in first.text
    assert "Words used in these rules." in second.text
    # ... and each chunk keeps the number of every section in it, its own first.
    assert first.section_number == "1" and first.section_numbers == ("1", "1.1")
    assert second.section_number == "2" and second.section_numbers == ("2", "2.3.1")
    assert deep.section_numbers[-1] == "7.3.1.1.1.1"
    assert all(c.section_numbers[:1] == (c.section_number,) for c in chunks if c.section_number)


def test_held_numbers_and_their_prefixes():
    assert held_section_numbers("2", ["2", None, "2.3.1", "2.3.1"]) == ("2", "2.3.1")
    assert held_section_numbers(None, [None]) == ()
    assert all_section_prefixes(("2", "2.3.1")) == ("2", "2.3", "2.3.1")
    assert all_section_prefixes(("7.3.1.1.1.1",)) == (
        "7", "7.3", "7.3.1", "7.3.1.1", "7.3.1.1.1", "7.3.1.1.1.1",
    )  # fmt: skip


@pytest.mark.integration
def test_filters_find_each_merged_section_in_weaviate(weaviate_cfg: WeaviateConfig, tmp_path):
    source = _docx(tmp_path / "rules.docx")
    pipeline = open_pipeline(weaviate_cfg, CountingEmbedder())
    try:
        outcome = pipeline.ingest(str(source))
        assert outcome.status == "added", outcome
        store = pipeline.store

        def found(prop: str, value: str) -> set[str]:
            request = SearchRequest(
                "harbour rules ships", None, k=50, where=(Condition(prop, "equal", value),)
            )
            hits = store.search(request)
            return {sentence for _, _, sentence in SECTIONS for h in hits if sentence in h.text}

        assert "They keep ships apart." in found("section_number", "1.1")
        assert "Work between ten and six." in found("section_number", "2.3.1")
        assert "Work between ten and six." in found("section_number", "Section 2.3.1")
        assert "Tested yearly with weights." in found("section_number", "§ 7.3.1.1.1.1")
        assert "Words used in these rules." in found("section_number", "2")
        assert "They keep ships apart." not in found("section_number", "2.3.1")
        # section_prefix: every section inside 2.3 (none numbered 2.3 itself) and 7.3.1.1.1
        assert "Work between ten and six." in found("section_prefix", "2.3")
        assert "Tested yearly with weights." in found("section_prefix", "7.3.1.1.1")
        assert "They keep ships apart." not in found("section_prefix", "2")
    finally:
        pipeline.close()


@pytest.mark.integration
def test_a_collection_from_before_gets_section_numbers_and_old_chunks_still_answer(
    weaviate_cfg: WeaviateConfig,
):
    from weaviate.classes.config import Configure

    from chunkweave.storage.uuids import chunk_uuid
    from chunkweave.storage.weaviate.client import connect
    from chunkweave.storage.weaviate.schema import (
        CHUNK_PROPERTIES,
        chunk_properties,
        identity_description,
    )
    from chunkweave.storage.weaviate.store import WeaviateStore
    from tests.store_helpers import ID16, make_chunk, vectors

    # Made by a chunkweave whose chunks had one section_number each (no section_numbers).
    with connect(weaviate_cfg) as client:
        client.collections.create(
            weaviate_cfg.collection,
            description=identity_description(ID16, schema=3),
            properties=[p for p in CHUNK_PROPERTIES if p.name != "section_numbers"],
            vector_config=Configure.Vectors.self_provided(),
        )
    store = WeaviateStore.open(weaviate_cfg, ID16)  # adds section_numbers in place
    try:
        names = {p.name for p in store.collection().config.get().properties}
        assert "section_numbers" in names
        # An old chunk: its own number only, as the earlier version wrote it.
        old = make_chunk("doc-a", 0).model_copy(update={"section_number": "7.3.1"})
        written = chunk_properties(old, None)  # type: ignore[arg-type]
        del written["section_numbers"]
        store.collection().data.insert(written, uuid=chunk_uuid(old.id), vector=vectors([old])[0])
        merged = make_chunk("doc-a", 1).model_copy(
            update={"section_number": "2", "section_numbers": ("2", "2.3.1")}
        )
        store.upsert([merged], vectors([merged]))

        def found(prop: str, value: str) -> list[str]:
            where = (Condition(prop, "equal", value),)
            return [h.uuid for h in store.search(SearchRequest("paragraph", None, 5, where))]

        assert found("section_number", "7.3.1") == [chunk_uuid(old.id)]
        assert found("section_prefix", "7.3") == [chunk_uuid(old.id)]
        assert found("section_number", "2.3.1") == [chunk_uuid(merged.id)]
        assert found("section_number", "2") == [chunk_uuid(merged.id)]
        assert found("section_prefix", "2.3") == [chunk_uuid(merged.id)]
    finally:
        store.client.collections.delete(weaviate_cfg.collection)
        store.close()

"""Match units (small-to-big retrieval) made from chunks: pure, one behaviour per test."""

from __future__ import annotations

from pathlib import Path

from docx import Document

from chunkweave.chunking.match_units import WINDOW_WORDS, match_units, table_rows, unit_id
from chunkweave.chunking.models import Chunk
from chunkweave.parsers import parse_document
from chunkweave.storage.pipeline.chunker import Chunker
from tests.store_helpers import CountingEmbedder

PROSE = " ".join(
    f"Sentence {i} tells how the lighthouse keeper number {i} counted the passing ships."
    for i in range(12)
)


def fauna_docx(path: Path, *, special: str = "quokka", rows: int = 6) -> Path:
    """A heading, a long paragraph and a captioned three-column table; one row names ``special``."""
    doc = Document()
    doc.add_heading("Fauna survey", level=1)
    doc.add_paragraph(PROSE)
    doc.add_paragraph("Table 1 Animals counted per habitat")
    table = doc.add_table(rows=rows + 1, cols=3)
    for col, label in enumerate(("Animal", "Habitat", "Count")):
        table.rows[0].cells[col].text = label
    for i in range(rows):
        animal = special if i == 3 else f"animal{i}"
        for col, value in enumerate((animal, f"habitat{i}", str(10 + i))):
            table.rows[i + 1].cells[col].text = value
    doc.save(str(path))
    return path


def chunks_of(path: Path) -> list[Chunk]:
    """The document's chunks, as the pipeline makes them with the test embedder."""
    return Chunker(None, CountingEmbedder()).chunk(parse_document(path), doc_id="fauna")


def test_every_table_row_is_a_unit_with_its_labels_and_context(tmp_path):
    chunks = chunks_of(fauna_docx(tmp_path / "f.docx"))
    table = next(c for c in chunks if c.type == "table")
    rows = [u for u in match_units([table]) if u.kind == "row"]
    assert [u.row for u in rows] == list(range(6))
    assert rows[3].text == "Animal: quokka; Habitat: habitat3; Count: 13"
    assert all(u.chunk_id == table.id for u in rows)
    assert "Fauna survey" in rows[3].embed_text and rows[3].embed_text.endswith(rows[3].text)


def test_long_prose_gives_sentence_windows_whose_spans_are_the_text(tmp_path):
    chunks = chunks_of(fauna_docx(tmp_path / "f.docx"))
    prose = next(c for c in chunks if c.type == "text" and "lighthouse" in c.text)
    windows = list(match_units([prose]))
    assert len(windows) >= 3 and {u.kind for u in windows} == {"sentences"}
    for unit in windows:
        assert unit.span is not None and prose.text[unit.span[0] : unit.span[1]] == unit.text
        assert len(unit.text.split()) <= WINDOW_WORDS
    starts = [u.span[0] for u in windows if u.span]
    assert starts == sorted(starts) and windows[-1].text.endswith("ships.")


def test_a_short_chunk_is_its_own_unit():
    chunks = [c.model_copy(update={"text": "Short text."}) for c in _one_chunk()]
    assert list(match_units(chunks)) == []


def test_unit_ids_are_stable_unique_and_follow_the_chunk(tmp_path):
    first = list(match_units(chunks_of(fauna_docx(tmp_path / "a.docx"))))
    again = list(match_units(chunks_of(fauna_docx(tmp_path / "b.docx"))))
    assert [u.id for u in first] == [u.id for u in again]
    assert len({u.id for u in first}) == len(first)
    edited = list(match_units(chunks_of(fauna_docx(tmp_path / "c.docx", special="wombat"))))
    rows = {u.id for u in first if u.kind == "row"}
    assert not rows & {u.id for u in edited if u.kind == "row"}  # the table chunk changed
    assert unit_id("a" * 40, "row", 1, "x") != unit_id("a" * 40, "row", 2, "x")


def test_no_unit_is_embedded_longer_than_the_budget(tmp_path):
    chunks = chunks_of(fauna_docx(tmp_path / "f.docx"))
    counter = CountingEmbedder()
    for unit in match_units(chunks, counter, 12):
        assert counter.count(unit.embed_text) <= 12 and unit.embed_text


def test_pipe_tables_are_read_with_their_header():
    labels, rows = table_rows("Table 2 x\n\n| A | B |\n|---|---|\n| 1 | 2 |\n| 3 |  |\n\nafter")
    assert labels == ["A", "B"] and rows == [["1", "2"], ["3", ""]]


def _one_chunk() -> list[Chunk]:
    from tests.store_helpers import make_chunk

    return [make_chunk("doc", 0, PROSE)]


def test_unit_properties_are_reserved_metadata_keys():
    from chunkweave.storage.metadata import RESERVED_KEYS
    from chunkweave.storage.weaviate.unit_objects import unit_properties_schema

    assert {p.name for p in unit_properties_schema()} <= RESERVED_KEYS

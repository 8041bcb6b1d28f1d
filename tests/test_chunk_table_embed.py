"""Table chunks embed their rows: labels, context, sizing, IDs (``ChunkOptions.table_embed``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document, resolve_options
from chunkweave.chunking.table_rows import column_labels, row_line, row_lines
from tests.chunk_helpers import children, documents, el, make_doc, words

HEAD = ("Option", "Default", "Meaning")


def _doc(rows: tuple[tuple[str, ...], ...], header_rows: int = 1, caption: str | None = None):
    elements = [el("heading", "3 Commands", level=1), el("heading", "3.2 copy", level=2)]
    if caption:
        elements.append(el("caption", caption))
    elements.append(el("table", "", rows=rows, header_rows=header_rows))
    elements.append(el("paragraph", "After the table " + words(30)))
    return make_doc(elements)


def _chunks(doc, embed: str, max_tokens: int | None = None):
    opts = resolve_options(ChunkOptions(table_embed=embed, max_tokens=max_tokens), 256)
    return chunk_document(doc, opts, ApproxTokenCounter(), doc_id="d")


def test_row_line_labels_each_cell_with_its_column() -> None:
    labels = column_labels((HEAD,), 1)
    assert row_line(labels, ("--force", "off", "overwrite files")) == (
        "Option: --force; Default: off; Meaning: overwrite files"
    )
    # an empty cell says nothing: it is left out
    assert row_line(labels, ("--quiet", "", "no output")) == "Option: --quiet; Meaning: no output"


def test_several_header_rows_join_like_the_markdown_header() -> None:
    rows = (("", "2011-12", "2011-12"), ("State", "Men", "Women"), ("Kerala", "2161", "3195"))
    assert row_lines(rows, 2) == ("State: Kerala; 2011-12 / Men: 2161; 2011-12 / Women: 3195",)


def test_without_header_the_first_cell_keys_the_row() -> None:
    assert row_lines((("Port", "8080"), ("Host", "localhost")), 0) == (
        "Port: 8080",
        "Host: localhost",
    )
    # a first row of three or more labels reads as a header (as its Markdown shows it)
    rows = (("Name", "Type", "Use"), ("USER", "CHAR(8)", "the user"))
    assert row_lines(rows, 0) == ("Name; Type; Use", "Name: USER; Type: CHAR(8); Use: the user")


def test_rows_embed_carries_path_caption_and_labels_text_stays_markdown() -> None:
    rows = (HEAD, ("--force", "off", "overwrite files"), ("--quiet", "on", "no output"))
    doc = _doc(rows, caption="Table 7. Options of copy")
    by_mode = {m: [c for c in _chunks(doc, m) if c.type == "table"] for m in ("text", "rows")}
    text, rows_chunk = by_mode["text"][0], by_mode["rows"][0]
    assert rows_chunk.text == text.text  # stored text is the same Markdown
    assert rows_chunk.text.startswith("Table 7. Options of copy\n| Option | Default | Meaning |")
    lines = rows_chunk.embed_text.split("\n")
    assert lines[0] == "Test Doc > 3 Commands > 3.2 copy"
    assert lines[1] == "Table 7. Options of copy"
    assert lines[2:] == [
        "Option: --force; Default: off; Meaning: overwrite files",
        "Option: --quiet; Default: on; Meaning: no output",
    ]
    both = next(c for c in _chunks(doc, "both") if c.type == "table")
    assert both.embed_text.endswith("\n".join(lines[2:]))
    assert rows_chunk.text in both.embed_text


def test_long_table_row_groups_each_embed_their_own_rows_with_labels() -> None:
    rows = (HEAD, *((f"--opt{i}", str(i), words(12, f"m{i}x")) for i in range(40)))
    chunks = [c for c in _chunks(_doc(rows), "rows", max_tokens=120) if c.type == "table"]
    assert len(chunks) > 2
    covered = []
    for c in chunks:
        assert c.token_count <= 120
        assert c.text.startswith("| Option | Default | Meaning |")  # header repeated
        assert c.embed_text.startswith("Test Doc > 3 Commands > 3.2 copy\n")
        body = c.embed_text.split("\n")[1:]
        assert c.table_row_start is not None and c.table_row_end is not None
        assert len(body) == c.table_row_end - c.table_row_start
        assert all(line.startswith("Option: --opt") for line in body)
        covered.extend(range(c.table_row_start, c.table_row_end))
    assert covered == list(range(40))


def test_serialisation_moves_only_table_chunk_ids() -> None:
    rows = (HEAD, ("--force", "off", "overwrite files"))
    doc = _doc(rows)
    text, rows_ = _chunks(doc, "text"), _chunks(doc, "rows")
    assert [c.type for c in text] == [c.type for c in rows_]
    assert text[0].chunker == rows_[0].chunker  # the fingerprint leaves the option out
    for a, b in zip(text, rows_, strict=True):
        assert a.text == b.text
        # an ID covers the embedded text: a table chunk re-embedded gets a new one
        assert (a.id == b.id) == (a.embed_text == b.embed_text)
        assert (a.id == b.id) == (a.type != "table")


@settings(max_examples=40, deadline=None)
@given(doc=documents(), embed=st.sampled_from(["rows", "both"]), limit=st.sampled_from([64, 256]))
def test_every_piece_fits_and_keeps_the_text_contract(doc, embed: str, limit: int) -> None:
    plain = children(_chunks(doc, "text", max_tokens=limit))
    chunks = children(_chunks(doc, embed, max_tokens=limit))
    counter = ApproxTokenCounter()
    for c in chunks:
        assert c.token_count == counter.count(c.embed_text) <= limit
    tables = [c for c in chunks if c.type == "table"]
    # rows are grouped again (embed texts may cost more) but no row is lost or doubled
    for table_id in {c.table_id for c in tables}:
        # pieces of one row cut between words share its range: distinct ranges tile the rows
        spans = sorted(
            {(c.table_row_start, c.table_row_end) for c in tables if c.table_id == table_id}
        )
        assert spans[0][0] == 0
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
        assert spans[-1][1] == max(p.table_row_end for p in plain if p.table_id == table_id)
    assert [c.text for c in plain if c.type != "table"] == [
        c.text for c in chunks if c.type != "table"
    ]


def test_unknown_serialisation_is_refused() -> None:
    with pytest.raises(ValueError, match="table_embed"):
        ChunkOptions(table_embed="csv")  # type: ignore[arg-type]


def test_rule_cells_are_not_values() -> None:
    # a text table's dashed line under its header says nothing: its line is empty
    rows = (("ID", "NAME"), ("----", "------"), ("400", "FROMMHERZ"))
    assert row_lines(rows, 1) == ("", "ID: 400; NAME: FROMMHERZ")
    assert row_line(("A", "B"), ("-1", "x")) == "A: -1; B: x"  # a negative number stays
    assert row_line(("A", "B"), ("–", "x")) == "A: –; B: x"  # so does a dash for "none"

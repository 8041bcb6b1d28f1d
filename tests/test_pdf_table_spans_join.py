"""PDF tables: merged cells filled as their spans say; a table split by a page break joined."""

from __future__ import annotations

from dataclasses import dataclass

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.parsers.elements import Element, table_element
from chunkweave.parsers.pdf.join import join_continuations
from chunkweave.parsers.pdf.tables.spans import (
    covering_cells,
    fill_spans,
    header_depth,
    join_wrapped_header,
)
from chunkweave.parsers.structure import finalize
from tests.chunk_helpers import make_doc


@dataclass
class _Row:
    cells: list[tuple[float, float, float, float] | None]
    bbox: tuple[float, float, float, float]


@dataclass
class _Grid:
    rows: list[_Row]


def _grid(spec: list[str]) -> _Grid:
    """A grid from letters: equal letters are one merged cell (PyMuPDF's None elsewhere)."""
    seen: dict[str, tuple[int, int]] = {}
    boxes: dict[str, list[float]] = {}
    for r, line in enumerate(spec):
        for c, name in enumerate(line):
            x0, y0, x1, y1 = 10.0 * c, 10.0 * r, 10.0 * c + 10, 10.0 * r + 10
            if name in boxes:
                b = boxes[name]
                boxes[name] = [min(b[0], x0), min(b[1], y0), max(b[2], x1), max(b[3], y1)]
            else:
                seen[name] = (r, c)
                boxes[name] = [x0, y0, x1, y1]
    rows = []
    for r, line in enumerate(spec):
        cells = [
            tuple(boxes[name]) if seen[name] == (r, c) else None  # type: ignore[misc]
            for c, name in enumerate(line)
        ]
        rows.append(_Row(cells, (0.0, 10.0 * r, 10.0 * len(line), 10.0 * r + 10)))
    return _Grid(rows)


def test_row_spans_fill_every_row_header_spans_fill_the_header() -> None:
    grid = _grid(["aMMd", "bcef", "bghi", "jklm"])
    texts = (
        ("Plan", "Modern method", "", "Total"),
        ("GMC", "Pill", "IUD", "9"),
        ("", "Pill", "IUD", "8"),
        ("COHS", "x", "y", "7"),
    )
    filled = fill_spans(texts, covering_cells(grid))
    assert filled[0] == ("Plan", "Modern method", "Modern method", "Total")
    assert filled[2][0] == "GMC"  # the row-spanned key in every row it spans
    assert filled[3] == texts[3]


def test_a_figure_spanning_rows_stays_in_its_first_row() -> None:
    # "8" halt stations for two states together: the total counts it once.
    grid = _grid(["ab", "cb", "de"])
    texts = (("Delhi", "8"), ("Rajasthan", ""), ("Gujarat", "6"))
    assert fill_spans(texts, covering_cells(grid)) == texts


def test_a_data_row_span_and_a_title_row_keep_their_text_in_the_first_cell() -> None:
    grid = _grid(["TTT", "abc", "GGG", "def"])
    texts = (("Title", "", ""), ("K", "2007", "2008"), ("Group", "", ""), ("x", "1", "2"))
    assert fill_spans(texts, covering_cells(grid)) == texts


def test_a_group_label_over_named_columns_makes_a_two_level_header() -> None:
    # "TEDs" spans three columns named in the second row; the other labels span both rows.
    two_level = _grid(["aTTTb", "acdeb", "fghij", "klmno"])
    assert header_depth(covering_cells(two_level), 4, 5) == 2
    # A row-spanning key in the data ("GMC" over two rows), no group label: one header row.
    assert header_depth(covering_cells(_grid(["abcd", "efgh", "eijk", "lmno"])), 4, 4) == 1
    # A group label whose second row holds data beside it: one header row.
    assert header_depth(covering_cells(_grid(["aMMd", "bcef", "bghi", "jklm"])), 4, 4) == 1
    # A title across the whole first row is no group label.
    assert header_depth(covering_cells(_grid(["TTT", "abc", "def", "ghi"])), 4, 3) == 1
    # Header and one row only: the data row is never taken into the header.
    assert header_depth(covering_cells(_grid(["aTTb", "acdb"])), 2, 4) == 1


def test_a_two_level_header_repeats_in_every_row_group_and_names_the_columns() -> None:
    rows = (
        ("Layers", "TEDs", "TEDs", "Time"),
        ("Layers", "simple", "all", "Time"),
        ("6", "0.965", "0.955", "2.73"),
        ("4", "0.938", "0.927", "1.97"),
    )
    doc = make_doc([table_element(rows, 2, page=1, bbox=(0.0, 0.0, 100.0, 100.0))])
    opts = ChunkOptions(max_tokens=40, min_tokens=0)
    chunks = chunk_document(doc, opts, ApproxTokenCounter(), doc_id="d", source="t.pdf")
    tables = [c for c in chunks if c.type == "table"]
    assert len(tables) >= 2 and all("TEDs / simple" in c.text for c in tables)
    assert all("TEDs / simple:" in c.embed_text for c in tables)
    assert not any(c.embed_text.rstrip().endswith("Time") for c in tables)  # no label-only piece


def _table(rows, page: int, bbox=(50.0, 500.0, 550.0, 780.0)) -> Element:
    return table_element(tuple(rows), 1, page=page, bbox=bbox)


def _el(type: str, text: str, page: int) -> Element:
    return Element(type=type, text=text, page=page, bbox=(50.0, 10.0, 550.0, 30.0), order=0)


HEAD = ("Option", "Meaning")


def test_a_table_continued_on_the_next_page_is_one_table_with_both_pages() -> None:
    first = _table([HEAD, ("-a", "all"), ("-b", "brief")], 4)
    second = _table([HEAD, ("-c", "count")], 5, bbox=(52.0, 60.0, 548.0, 200.0))
    out = list(
        join_continuations(
            iter([first, _el("page_footer", "4", 4), _el("page_header", "Guide", 5), second])
        )
    )
    tables = [e for e in out if e.type == "table"]
    assert len(tables) == 1
    joined = tables[0]
    assert joined.rows == (HEAD, ("-a", "all"), ("-b", "brief"), ("-c", "count"))
    assert joined.page == 4 and joined.continued == ((5, (52.0, 60.0, 548.0, 200.0)),)
    assert "-c\tcount" in joined.text
    assert [e.type for e in out] == ["table", "page_footer", "page_header"]
    # its chunk keeps both pages and a region on each
    doc = make_doc(list(finalize(out)))
    chunk = next(
        c
        for c in chunk_document(doc, ChunkOptions(max_tokens=256), ApproxTokenCounter(), doc_id="d")
        if c.type == "table"
    )
    assert chunk.pages == (4, 5)
    assert sorted({r.page for r in chunk.regions}) == [4, 5]


def test_a_continuation_without_the_header_keeps_all_its_rows() -> None:
    first = _table([HEAD, ("-a", "all")], 1)
    second = _table([("-b", "brief"), ("-c", "count")], 2)
    (joined,) = join_continuations(iter([first, second]))
    assert joined.rows == (HEAD, ("-a", "all"), ("-b", "brief"), ("-c", "count"))


def test_tables_that_do_not_continue_each_other_stay_apart() -> None:
    first = _table([HEAD, ("-a", "all")], 1)
    cases = [
        [first, _table([("x", "y", "z"), ("1", "2", "3")], 2)],  # other columns
        [first, _table([HEAD, ("-b", "b")], 3)],  # not the next page
        [first, _el("paragraph", "Some text.", 2), _table([HEAD, ("-b", "b")], 2)],  # text between
        [first, _table([HEAD, ("-b", "b")], 2, bbox=(300.0, 60.0, 550.0, 200.0))],  # other edges
    ]
    for elements in cases:
        out = list(join_continuations(iter(elements)))
        assert sum(e.type == "table" for e in out) == 2


def test_a_header_label_wrapped_around_a_centred_sibling_is_one_row() -> None:
    rows = (
        ("", "", "Literacy", "Literacy"),
        ("State", "n", "", "Read &"),
        ("", "", "Illiterate", ""),
        ("", "", "", "Write"),
        ("Kerala", "2400", "7.2", "0.5"),
    )
    assert join_wrapped_header(rows) == (
        rows[0],
        ("State", "n", "Illiterate", "Read & Write"),
        rows[4],
    )
    # Labels in consecutive rows of one column are two header rows, not a wrap.
    stacked = (("Year", "Total"), ("", "(in billions)"), ("1996", "3,051"), ("1997", "3,100"))
    assert join_wrapped_header(stacked) == stacked

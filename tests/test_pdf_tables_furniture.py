"""PDF tables of contents and indexes, list-versus-table, and page numbers off the band."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chunkweave.parsers.document import ParsedDocument, ParseOptions
from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf import parse_pdf
from chunkweave.parsers.pdf.bands import outer_marker
from chunkweave.parsers.pdf.tables.grid import find_grid_tables
from chunkweave.parsers.pdf.tables.leaders import find_leader_tables
from chunkweave.parsers.pdf.tables.pairs import find_pair_tables
from chunkweave.parsers.pdf.text import Line
from tests.pdf_helpers import make_line


def _parse(path: Path, **kw: Any) -> ParsedDocument:
    return parse_pdf(path, ParseOptions(**kw))


def _leader(entry: str, ref: str, x0: float, y0: float, x1: float = 450.0) -> Line:
    return make_line(f"{entry} . . . . . . . . . . . . {ref}", x0, y0, x1)


def _tables(doc: ParsedDocument) -> list[Element]:
    return [e for e in doc.elements if e.type == "table"]


# ---------------------------------------------------------------- contents pages


@pytest.mark.parametrize("mode", ["fast", "auto"])
def test_contents_page_is_one_two_column_table(corpus: Path, mode: str) -> None:
    doc = _parse(corpus / "redp5110_sampled.pdf", mode=mode, page_range=(2, 2))
    tables = _tables(doc)
    assert len(tables) == 1
    rows = tables[0].rows or ()
    # 43 entries are printed on the page, each an (entry, page) row, leaders dropped.
    assert len(rows) == 43 and {len(r) for r in rows} == {2}
    assert rows[0] == ("Notices", "vii")
    assert ("Chapter 3. Row and Column Access Control", "13") in rows
    assert rows[-1] == ("3.6.8 Demonstrating data access with a view and RCAC", "32")
    assert tables[0].header_rows == 0
    assert not [e for e in doc.elements if ". . . ." in e.text and e.type != "table"]
    # The running footer is still furniture, the heading still a heading.
    assert [e.text for e in doc.elements if e.type == "heading"] == ["Contents"]
    assert {e.text for e in doc.elements if e.type == "page_footer"} >= {"iii"}


def test_contents_entries_with_short_leaders_join_the_table(corpus: Path) -> None:
    """R-intro's bold chapter entries have two leader dots only; they are rows too."""
    doc = _parse(corpus / "R-intro.pdf", mode="fast", page_range=(3, 3))
    tables = _tables(doc)
    assert len(tables) == 1
    rows = tables[0].rows or ()
    assert rows[0] == ("Preface", "1")
    assert ("2 Simple manipulations; numbers and vectors", "8") in rows
    assert not [e for e in doc.elements if e.type == "paragraph" and ". ." in e.text]


def test_leader_lines_make_rows_with_wrapped_entries_and_side_pieces() -> None:
    lines = [
        _leader("1 Introduction", "1", 90, 100),
        make_line("2 A long chapter title that wraps onto", 90, 112, 400),
        _leader("a second line", "5", 90, 124),
        # the reference printed as its own piece to the right of the leaders
        make_line("3 Methods . . . . . . . . . . . .", 90, 136, 420),
        make_line("9", 440, 136, 446),
        _leader("4 Results", "xii", 90, 148),
    ]
    tables = find_leader_tables(lines, page_no=3)
    assert len(tables) == 1
    assert tables[0].rows == (
        ("1 Introduction", "1"),
        ("2 A long chapter title that wraps onto a second line", "5"),
        ("3 Methods", "9"),
        ("4 Results", "xii"),
    )
    assert tables[0].page == 3 and tables[0].bbox == (90, 100, 450, 158)


def test_index_letter_headings_split_tables_and_stay_text() -> None:
    lines = [
        make_line("A", 90, 80, 100, size=13),
        _leader("abline", "71", 90, 100, 297),
        _leader("ace", "67", 90, 112, 297),
        _leader("anova", "56, 63", 90, 124, 297),
        make_line("B", 90, 150, 100, size=13),
        _leader("boxplot", "40", 90, 170, 297),
        _leader("break", "44", 90, 182, 297),
        _leader("bruto", "67", 90, 194, 297),
        # the page's other column, references aligned on its own right edge
        _leader("cbind", "26", 315, 100, 522),
        _leader("coef", "58", 315, 112, 522),
    ]
    tables = find_leader_tables(lines, page_no=1)
    assert [t.rows[0] for t in tables if t.rows] == [("abline", "71"), ("boxplot", "40")]
    assert tables[0].rows and tables[0].rows[2] == ("anova", "56, 63")
    # Two entries are not a table.
    assert find_leader_tables(lines[-2:], page_no=1) == []


def test_prose_with_dots_is_not_a_contents_table() -> None:
    lines = [
        make_line("The values are 1.2.3 and so on...", 90, 100, 400),
        make_line("See section 4. . 5 more lines follow here and end", 90, 112, 400),
        make_line("with an ellipsis … and a number 7 in the text", 90, 124, 400),
    ]
    assert find_leader_tables(lines, page_no=1) == []


# ---------------------------------------------------------------- lists are not tables


def test_side_by_side_bullet_lists_are_lists_in_reading_order(corpus: Path) -> None:
    """The light layout model boxes two adjacent bullet lists as one table."""
    doc = _parse(corpus / "list-item-example.pdf", mode="auto")
    assert _tables(doc) == []
    items = [e.text for e in doc.elements if e.type == "list_item" and e.page == 1]
    assert "What challenges may arise in development?" in items
    assert "Underlying considerations: usability and user experience" in items
    assert not [t for t in items if "●" in t]
    left = items.index("What are product types?")
    assert items[left + 1] == "What challenges may arise in development?"


# ---------------------------------------------------------------- page numbers


@pytest.mark.parametrize("mode", ["fast", "auto"])
def test_page_number_above_a_wide_bottom_margin_is_a_footer(corpus: Path, mode: str) -> None:
    """Page 2 is A4 with the letter-size layout of page 1: its number sits high."""
    doc = _parse(corpus / "code_and_formula.pdf", mode=mode)
    footers = [(e.page, e.text) for e in doc.elements if e.type == "page_footer"]
    assert footers == [(1, "1"), (2, "1")]
    assert not [e for e in doc.elements if not e.is_furniture and e.text.strip() == "1"]


def test_outer_marker_needs_an_edge_line_alone_and_apart() -> None:
    body = [make_line(f"line {i} of the body text", 100, 100 + 12 * i, 480) for i in range(20)]
    number = make_line("12", 300, 700, 310)
    assert outer_marker([*body, number], page_height=842) == (20, "bottom")
    # Too far from the bottom edge (above the wider band).
    high = make_line("12", 300, 400, 310)
    assert outer_marker([*body[:10], high], page_height=842) is None
    # Close under the text: a number in the text, not a page number.
    close = make_line("12", 300, body[-1].bbox[3] + 4, 310)
    assert outer_marker([*body, close], page_height=842) is None
    # Sharing its row with other text.
    beside = make_line("Total", 100, 700, 140)
    assert outer_marker([*body, number, beside], page_height=842) is None
    # Not a page number nor a document code.
    assert outer_marker([*body, make_line("Total", 300, 700, 340)], page_height=842) is None
    assert outer_marker([*body, make_line("NOTE 1", 300, 700, 340)], page_height=842) is None
    assert outer_marker([*body, make_line("REDP-5110-00", 300, 700, 360)], page_height=842) == (
        20,
        "bottom",
    )


# ---------------------------------------------------------------- grids and ruled tables


def test_grid_with_centred_cells_and_a_header_set_above() -> None:
    """Right-aligned cells start inside their column; the header is centred over it."""
    header = [
        Line("LINE", (89, 100, 112, 109), 9.0, True, False, 0, 4),
        Line("POSITION", (185, 100, 232, 109), 9.0, True, False, 0, 8),
        Line("DESCRIPTION", (280, 100, 350, 109), 9.0, True, False, 0, 11),
    ]
    data = [("1", "01-05", "Command code"), ("1", "06", "Definer"), ("2", "07-18", "TIN")]
    data += [("2", "59", "Name"), ("3", "76-80", "Indicator")]
    lines = list(header)
    for i, (a, b, c) in enumerate(data):
        y = 138 + 19 * i
        x_b = 215 if "-" in b else 222.4  # two-digit positions are right-aligned
        lines += [make_line(a, 130, y, 135), make_line(b, x_b, y, 241), make_line(c, 280, y, 400)]
    tables = find_grid_tables(lines, page_no=7)
    assert len(tables) == 1
    rows = tables[0].rows or ()
    assert rows[0] == ("LINE", "POSITION", "DESCRIPTION") and tables[0].header_rows == 1
    assert rows[1:] == tuple(data)
    # Without the header's bold/upper case it is not taken as the header.
    plain = [Line(ln.text.lower(), ln.bbox, 9.0, False, False, 0, 4) for ln in header]
    other = find_grid_tables(plain + lines[3:], page_no=7)
    assert other[0].rows == tuple(data) and other[0].header_rows == 0


def test_booktabs_table_rows_are_split_from_one_ruled_row(corpus: Path) -> None:
    """Ruled only above, below and under the header, the data rows come back as one."""
    doc = _parse(corpus / "layout-parser-paper-with-table.pdf", mode="fast")
    tables = _tables(doc)
    assert len(tables) == 1
    rows = tables[0].rows or ()
    assert len(rows) == 6 and {len(r) for r in rows} == {4}
    assert rows[0] == ("Dataset", "Base Model1", "Large Model", "Notes")
    assert rows[2] == (
        "PRImA [3]",
        "M",
        "-",
        "Layouts of scanned modern magazines and scientific reports",
    )
    assert [r[0] for r in rows[1:]] == [
        "PubLayNet [38]",
        "PRImA [3]",
        "Newspaper [17]",
        "TableBank [18]",
        "HJDataset [31]",
    ]


def test_wrapped_cells_keep_their_row(corpus: Path) -> None:
    """A description wrapping over lines while its neighbours do not is one row."""
    doc = _parse(corpus / "redp5110_sampled.pdf", mode="fast", page_range=(8, 8))
    tables = _tables(doc)
    assert len(tables) == 1 and len(tables[0].rows or ()) == 5
    assert (tables[0].rows or ())[2][0] == "USER_NAME"


# ---------------------------------------------------------------- key/value pairs


def test_two_column_lookup_table_and_key_bindings(corpus: Path) -> None:
    doc = _parse(corpus / "R-intro.pdf", mode="fast", page_range=(67, 67))
    tables = _tables(doc)
    assert len(tables) == 1
    assert tables[0].rows == (
        ("Family name", "Link functions"),
        ("binomial", "logit, probit, log, cloglog"),
        ("gaussian", "identity, log, inverse"),
        ("Gamma", "identity, inverse, log"),
    )
    assert tables[0].header_rows == 1  # plain header over monospaced keys
    doc = _parse(corpus / "R-intro.pdf", mode="fast", page_range=(107, 107))
    rows = [r for t in _tables(doc) for r in t.rows or ()]
    assert ("C-e", "Go to the end of the line.") in rows
    assert ("C-d", "Delete the character under the cursor.") in rows
    assert not [e for e in doc.elements if e.type == "code" and e.text.strip() == "C-e"]


def test_margin_headings_beside_prose_are_not_a_table(corpus: Path) -> None:
    """The IRS manual sets section titles in a margin column beside justified text."""
    doc = _parse(corpus / "pdf2image-memory-error-test-400p.pdf", mode="fast", page_range=(7, 8))
    assert not [t for t in _tables(doc) if len(t.rows[0] if t.rows else ()) == 2]


def test_pairs_need_short_keys_and_no_code_comments() -> None:
    def pair(key: str, value: str, y: float, kx1: float = 160.0) -> list[Line]:
        return [make_line(key, 100, y, kx1), make_line(value, 240, y, 330)]

    table = [*pair("alpha", "first letter", 100), *pair("beta", "second", 112)]
    table += pair("gamma", "third letter", 124)
    found = find_pair_tables(table, page_no=2)
    assert len(found) == 1 and found[0].rows == (
        ("alpha", "first letter"),
        ("beta", "second"),
        ("gamma", "third letter"),
    )
    assert find_pair_tables(table[:4], page_no=2) == []  # two rows are not a table
    comments = [*pair("x <- 1", "# one", 100), *pair("y <- 2", "# two", 112)]
    comments += pair("z <- 3", "# three", 124)
    assert find_pair_tables(comments, page_no=2) == []
    # Keys as wide as the distance to the values: two text columns, not keys.
    wide = [ln for y in (100, 112, 124) for ln in pair("a wide left line", "right", y, 230)]
    assert find_pair_tables(wide, page_no=2) == []


def _ruled_page(segments: list[tuple[float, float, float, float]]) -> Any:
    """A one-page PDF with the given line segments, returned as its open page."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for x0, y0, x1, y1 in segments:
        page.draw_line((x0, y0), (x1, y1))
    return page


def test_a_framed_note_plus_a_footnote_rule_is_not_table_evidence() -> None:
    from chunkweave.parsers.pdf.tables.rules import has_table_rules

    frame = [(120, 430, 500, 430), (120, 560, 500, 560), (120, 430, 120, 560), (500, 430, 500, 560)]
    footnote_rule = [(90, 700, 230, 700)]
    assert not has_table_rules(_ruled_page(frame + footnote_rule))


def test_a_frame_with_a_row_rule_inside_is_a_grid() -> None:
    from chunkweave.parsers.pdf.tables.rules import has_table_rules

    frame = [(120, 430, 500, 430), (120, 560, 500, 560), (120, 430, 120, 560), (500, 430, 500, 560)]
    row_rule = [(120, 480, 500, 480)]
    assert has_table_rules(_ruled_page(frame + row_rule))

"""Wrapped cells in tables whose body has no row rules: a row's next lines stay in the row."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.parsers.pdf.tables.grid import find_grid_tables
from chunkweave.parsers.pdf.tables.rules import has_table_rules
from chunkweave.parsers.pdf.text import Line
from tests.pdf_helpers import make_line

COLUMNS = [50.0, 200.0, 340.0, 430.0, 567.0]


def _cost_table(tmp_path: Path, top: float) -> Path:
    """A table ruled between its columns and under its header only, ``top`` pt down.

    The body's rows are text lines; the labour cell of the first row wraps onto a
    second line its neighbours leave blank.
    """
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.draw_line((45, 48), (567, 48))  # running-header rules, no table
    page.draw_line((45, 52), (567, 52))
    page.insert_text((120, 44), "Register / Vol. 85 / Proposed Rules", fontsize=9)
    x = COLUMNS
    header = ["Action", "Labor cost", "Parts cost", "Cost on operators"]
    body = [
        (["Wiring change", "Up to 79 work-hours x $85 =", "Up to $3,790", "Up to $766,865"], 0),
        (["", "Up to $6,715", "", ""], 10),
        (["Sensor test", "40 work-hours x $85 = $3,400", "$0", "$248,200"], 20),
        (["Manual revision", "1 work-hour x $85 = $85", "$0", "$6,205"], 30),
    ]
    for c, t in enumerate(header):
        page.insert_text((x[c] + 4, top + 16), t, fontsize=8)
    ruled = top + 24
    for cells, dy in body:
        for c, t in enumerate(cells):
            if t:
                page.insert_text((x[c] + 4, ruled + 12 + dy), t, fontsize=8)
    bottom = ruled + 50
    for y in (top, ruled, bottom):
        page.draw_line((45, y), (567, y))
    # Column rules only, drawn a segment per row as report generators do.
    for xx in x[1:-1]:
        for a, b in zip(
            (top, ruled, ruled + 20, ruled + 30),
            (ruled, ruled + 20, ruled + 30, bottom),
            strict=True,
        ):
            page.draw_line((xx - 3, a), (xx - 3, b))
    page.insert_text((50, bottom + 40), "The FAA has received no definitive data.", fontsize=9)
    path = tmp_path / "costs.pdf"
    doc.save(path)
    return path


def test_a_wrapped_cell_in_an_unruled_body_stays_in_its_row(corpus: Path) -> None:
    """Issue 31: "Up to 79 work-hours × $85 per hour =" over "Up to $6,715." is one cell.

    The Federal Register's cost table is ruled between its columns and under its
    header only; its continued part opens page 6, its top rule in the header band.
    """
    doc = corpus.parent / "corpus-extra" / "federal-register-2020-17221.pdf"
    parsed = parse_document(doc, ParseOptions(mode="fast", page_range=(5, 6)))
    tables = [e for e in parsed.elements if e.type == "table"]
    assert [t.page for t in tables] == [5, 6]
    first, continued = (t.rows or () for t in tables)
    assert len(first) == 4 and first[2][0].startswith("AFM revisions")
    assert continued[0] == (
        "Action",
        "Labor cost",
        "Parts cost",
        "Cost per product",
        "Cost on U.S. operators",
    )
    assert len(continued) == 3
    assert continued[1][1] == "Up to 79 work-hours × $85 per hour = Up to $6,715."
    # Dot leaders running cells out to their rule are not cell text.
    assert continued[2] == (
        "AOA sensor system test",
        "40 work-hours × $85 per hour = $3,400.",
        "$0",
        "$3,400",
        "$248,200.",
    )


def test_a_table_at_the_top_of_the_body_shows_rules(tmp_path: Path) -> None:
    """Its top rule lies in the header band; the column rules reaching it make it count."""
    assert has_table_rules(pymupdf.open(_cost_table(tmp_path, top=76))[0])


def test_rules_in_the_header_band_alone_are_no_table_evidence(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for y in (30, 48, 52):
        page.draw_line((45, y), (567, y))
    page.draw_line((300, 30), (300, 52))
    page.draw_line((45, 700), (200, 700))  # a footnote rule
    assert not has_table_rules(page)


def _record(y: float, cells: list[list[str]], pitch: float = 10.0) -> list[Line]:
    """One record of an unruled table: each cell's lines stacked at ``pitch`` from ``y``."""
    return [
        make_line(text, COLUMNS[c], y + pitch * k, COLUMNS[c] + 6 * len(text), size=9)
        for c, lines in enumerate(cells)
        for k, text in enumerate(lines)
    ]


def test_records_a_blank_line_apart_keep_their_wrapped_lines() -> None:
    """Issue 31: "40025" over "EASTLAND" is one street cell, "FRANKLIN," over "INC." one name."""
    lines = [
        *_record(100, [["1100P"], ["WESTCO,", "INC."], ["1900 115TH", "ST."], ["CA"]]),
        *_record(131, [["1300S"], ["FRANKLIN,", "INC."], ["40025", "EASTLAND"], ["DE"]]),
        *_record(162, [["1400P"], ["MOTORWORKS,", "INC."], ["19503", "BESWICK"], ["IL"]]),
    ]
    tables = find_grid_tables(lines, page_no=1)
    assert len(tables) == 1
    assert tables[0].rows == (
        ("1100P", "WESTCO, INC.", "1900 115TH ST.", "CA"),
        ("1300S", "FRANKLIN, INC.", "40025 EASTLAND", "DE"),
        ("1400P", "MOTORWORKS, INC.", "19503 BESWICK", "IL"),
    )
    # Capitals throughout: no row is set apart as a header.
    assert tables[0].header_rows == 0


def test_rows_at_one_pitch_under_a_group_label_stay_rows() -> None:
    """A stub filled only on a group's first row: the rows below are rows, not wraps."""
    lines = [
        *_record(100, [["North"], ["alpha"], ["12"], ["7"]]),
        *_record(112, [[""], ["beta"], [""], ["9"]]),
        *_record(124, [["South"], ["gamma"], ["30"], ["4"]]),
        *_record(136, [[""], ["delta"], [""], ["2"]]),
        *_record(148, [["East"], ["epsilon"], ["8"], ["1"]]),
    ]
    lines = [ln for ln in lines if ln.text]
    tables = find_grid_tables(lines, page_no=1)
    assert len(tables) == 1
    assert len(tables[0].rows or ()) == 5


def test_registration_marks_in_the_bleed_are_no_table_evidence() -> None:
    """Print-ready pages draw crop and registration marks outside the crop box.

    A registration mark drawn twice (two stroke widths) is a small grid of rules;
    taken for table evidence it sent every page of a book to ``find_tables``.
    """
    doc = pymupdf.open()
    page = doc.new_page(width=480, height=678)
    page.set_cropbox(pymupdf.Rect(42, 42, 438, 636))
    for width in (0.5, 0.25):  # drawn twice, as the book's marks are
        for cx in (-30.0, 426.0):  # left and right of the trimmed page, mid-height
            page.draw_line((cx - 12, 297), (cx + 12, 297), width=width)
            page.draw_line((cx, 273), (cx, 321), width=width)
    strokes = [it for p in page.get_cdrawings() for it in p["items"]]
    assert strokes and min(it[1][0] for it in strokes) < 0  # in the bleed
    assert not has_table_rules(page)
    # The same marks on the page itself would be evidence: the test can fail.
    inside = doc.new_page(width=480, height=678)
    for width in (0.5, 0.25):
        for cx in (100.0, 300.0):
            inside.draw_line((cx - 12, 297), (cx + 12, 297), width=width)
            inside.draw_line((cx, 273), (cx, 321), width=width)
    assert has_table_rules(inside)


def _words(x: float, lines: list[str], top: float = 100.0) -> list[tuple]:
    """A cell's words as ``get_text("words")`` gives them, one text line per entry."""
    return [
        (x, top + 12 * k, x + 60, top + 12 * k + 9, text, 0, k, 0)
        for k, text in enumerate(lines)
        if text
    ]


def test_two_paragraph_cells_side_by_side_stay_one_row() -> None:
    """Cells compared column by column wrap on shared lines by chance: one row."""
    from chunkweave.parsers.pdf.tables.ruled import _stacked_rows

    cells = [
        _words(50, ["Article 15 the", "committee is", "set up"]),
        _words(300, ["Article 15", "as before", ""]),
    ]
    assert len(_stacked_rows(cells)) == 1
    # Three columns whose lines align, one wrapping onto a line of its own: two rows.
    cells = [
        _words(50, ["Wiring", "", "Sensor"]),
        _words(200, ["79 hours =", "$6,715", "40 hours"]),
        _words(350, ["$3,790", "", "$0"]),
    ]
    assert _stacked_rows(cells) == [
        ("Wiring", "79 hours = $6,715", "$3,790"),
        ("Sensor", "40 hours", "$0"),
    ]

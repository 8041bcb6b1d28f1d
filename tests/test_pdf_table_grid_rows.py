"""Rows and header rows of tables from the text grid: stacked lines, wrapped cells, spans."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.tables.spanning import header_grid, label_spans
from tests.pdf_helpers import make_line

REGIONS = ["North", "South", "East", "West", "Centre", "Coast", "Hills"]
FIRST = ["157", "42", "276", "31", "88", "120", "64"]
SECOND = ["12", "9", "30", "4", "15", "22", "7"]
COLS = [(70.0, 140.0), (190.0, 230.0), (290.0, 330.0)]


def _tables(path: Path) -> list[Element]:
    doc = parse_document(path, ParseOptions(mode="fast"))
    return [e for e in doc.elements if e.type == "table"]


def _sheet(tmp_path: Path, body: list[list[list[str]]]) -> Path:
    """A ruled grid: a title row, two header rows, then ``body`` rows of stacked lines."""
    doc = pymupdf.open()
    page = doc.new_page()
    x = [70, 180, 280, 380]
    y = 100.0
    edges = [y]
    for texts in (["Statistics sheet 2024", "", ""], ["Region", "Cases", "Deaths"]):
        for c, t in enumerate(texts):
            page.insert_text((x[c] + 4, y + 13), t, fontsize=10)
        y += 18
        edges.append(y)
    page.insert_text((x[1] + 4, y + 13), "count", fontsize=10)
    page.insert_text((x[2] + 4, y + 13), "count", fontsize=10)
    y += 18
    edges.append(y)
    for cells in body:
        height = 12 * max(len(lines) for lines in cells) + 6
        for c, lines in enumerate(cells):
            for k, t in enumerate(lines):
                page.insert_text((x[c] + 4, y + 12 + 12 * k), t, fontsize=10)
        y += height
        edges.append(y)
    for e in edges:
        page.draw_line((x[0], e), (x[-1], e))
    for xx in x:
        page.draw_line((xx, edges[0]), (xx, edges[-1]))
    path = tmp_path / "sheet.pdf"
    doc.save(path)
    return path


def test_stacked_values_under_a_ruled_header_become_rows(tmp_path: Path) -> None:
    """Issue 31: each column's seven values in one cell, on lines the columns share."""
    tables = _tables(_sheet(tmp_path, [[REGIONS, FIRST, SECOND]]))
    assert len(tables) == 1
    rows = tables[0].rows or ()
    assert ("North", "157", "12") in rows
    assert ("Hills", "64", "7") in rows
    assert len(rows) >= 7 + 2


def test_a_wrapped_cell_keeps_its_row(tmp_path: Path) -> None:
    """A label over two lines beside one value each: one row, not two."""
    body = [
        [["North"], ["157"], ["12"]],
        [["South and", "south-east"], ["42"], ["9"]],
        [["East"], ["276"], ["30"]],
    ]
    rows = _tables(_sheet(tmp_path, body))[0].rows or ()
    assert ("South and south-east", "42", "9") in rows


def test_a_label_over_a_rule_spans_the_rule_columns() -> None:
    actual = make_line("Actual", 215.0, 80.0, 245.0)
    rule = (185.0, 335.0, 92.0)  # under "Actual", over the two year columns
    assert label_spans([actual], COLS, [rule]) == [(1, 2)]
    # No rule: the label keeps the column its text starts in.
    assert label_spans([actual], COLS, []) == [(1, 1)]
    # A rule reaching into the stub column marks no group.
    assert label_spans([actual], COLS, [(60.0, 335.0, 92.0)]) == [(1, 1)]


def test_header_lines_wrapped_or_parallel() -> None:
    # "Read &" / "Write" around "Illiterate" (centred between them): one header row.
    wrapped = [
        [make_line("Region", 70, 100, 110), make_line("Read &", 190, 100, 225)],
        [make_line("Illiterate", 290, 106, 330)],
        [make_line("Write", 190, 112, 220)],
    ]
    assert header_grid(wrapped, COLS) == [["Region", "Read & Write", "Illiterate"]]
    # Labels set in parallel over two lines the columns share: two rows.
    parallel = [
        [make_line("Fall", 190, 100, 215), make_line("Total", 290, 100, 320)],
        [make_line("(thousands)", 190, 112, 230), make_line("(billions)", 290, 112, 330)],
    ]
    assert header_grid(parallel, COLS) == [["", "Fall", "Total"], ["", "(thousands)", "(billions)"]]
    # A rule under a spanning label parts it from the names of its columns.
    spanned = [
        [make_line("Actual", 215, 80, 245)],
        [make_line("2003", 190, 96, 215), make_line("2004", 290, 96, 315)],
    ]
    assert header_grid(spanned, COLS, [(185.0, 335.0, 92.0)]) == [
        ["", "Actual", "Actual"],
        ["", "2003", "2004"],
    ]

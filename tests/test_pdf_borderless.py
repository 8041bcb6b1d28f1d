"""Borderless tables: whitespace-aligned columns, one-direction rules, sideways pages.

Each synthetic PDF is written with PyMuPDF and holds one behaviour; the public files
check the same classes on documents nobody tuned for (``corpus-extra``) and a manual
(``corpus``), parsing only the pages concerned.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from chunkweave.parsers.document import ParsedDocument, ParseOptions
from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf import parse_pdf
from chunkweave.parsers.pdf.tables.leaders import find_leader_tables
from tests.pdf_helpers import make_line

EXTRA = Path(__file__).resolve().parents[2] / "shared" / "corpus-extra"

_HEADER = ("Region", "2019", "2020", "2021", "2022")
_ROWS = [
    ("Northeast", "485,670", "503,528", "521,015", "536,697"),
    ("Maine", "13,278", "13,077", "12,950", "13,151"),
    ("New Jersey", "83,826", "86,502", "90,049", "93,013"),
    ("Vermont", "7,100", "7,152", "6,779", "7,317"),
    ("Midwest", "680,178", "676,786", "684,049", "702,987"),
]


def _parse(path: Path, mode: str = "fast", **kw: Any) -> ParsedDocument:
    return parse_pdf(path, ParseOptions(mode=mode, **kw))


def _tables(doc: ParsedDocument) -> list[Element]:
    return [e for e in doc.elements if e.type == "table"]


def _put_right(page: pymupdf.Page, right: float, y: float, text: str, size: float = 9) -> None:
    """Write ``text`` right-aligned at ``right`` (figures in a column)."""
    width = pymupdf.get_text_length(text, fontname="helv", fontsize=size)
    page.insert_text((right - width, y), text, fontsize=size)


def _figures_table(
    page: pymupdf.Page, top: float, rows: Sequence[Sequence[str]], rights: Sequence[float]
) -> float:
    """Write ``rows``: a left-aligned label column, then right-aligned figure columns."""
    y = top
    for row in rows:
        page.insert_text((72, y), row[0], fontsize=9)
        for text, right in zip(row[1:], rights, strict=True):
            _put_right(page, right, y, text)
        y += 12
    return y


# The figure columns end 46 pt apart: the widest figure ("485,670", 31 pt at 9 pt)
# leaves about 15 pt (1.7 em) of white space, under the 3 em at which visual lines
# keep pieces apart, so every row is one visual line until the detector cuts it.
_RIGHTS = (220.0, 266.0, 312.0, 358.0)


# ---------------------------------------------------------------- whitespace-aligned


def test_whitespace_aligned_figures_become_one_table(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Table 3. Graduates by region", fontsize=11)
    y = _figures_table(page, 90, [_HEADER, *_ROWS], _RIGHTS)
    page.insert_text((72, y + 20), "Figures are rounded to the nearest unit.", fontsize=10)
    path = tmp_path / "aligned.pdf"
    doc.save(path)

    for mode in ("fast", "auto"):
        tables = _tables(_parse(path, mode))
        assert len(tables) == 1, mode
        t = tables[0]
        assert t.rows is not None
        assert t.rows[0] == _HEADER
        assert list(t.rows[1:]) == [tuple(r) for r in _ROWS]
        assert t.header_rows == 1
        # Neither the title nor the note below joined the table.
        assert "Table 3" not in t.text and "rounded" not in t.text


def test_space_aligned_monospaced_table_with_leaders(tmp_path: Path) -> None:
    """A typewriter table: one string per row, columns kept by runs of spaces."""
    lines = [
        "                    Design effect",
        "Proportion       1.0     1.1     1.2     1.3",
        "-------------------------------------------",
        "0.99 ........    800     880     960   1,040",
        "0.95 ........    160     176     192     208",
        "0.90 ........     80      88      96     104",
        "0.85 ........     53      59      64      69",
    ]
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Table 1. Recommended sample sizes", fontsize=10, fontname="cour")
    for i, text in enumerate(lines):
        page.insert_text((72, 100 + 13 * i), text, fontsize=10, fontname="cour")
    path = tmp_path / "mono.pdf"
    doc.save(path)

    tables = _tables(_parse(path))
    assert len(tables) == 1
    rows = tables[0].rows or ()
    assert ("Proportion", "1.0", "1.1", "1.2", "1.3") in rows
    assert ("0.99", "800", "880", "960", "1,040") in rows
    assert rows[-1] == ("0.85", "53", "59", "64", "69")
    assert not any("----" in c or "...." in c for r in rows for c in r)
    # "Design effect" and the row above the rule are the header.
    assert tables[0].header_rows == 2


def test_two_column_prose_with_figures_is_not_a_table(tmp_path: Path) -> None:
    """Two columns of running text, full of years and amounts, stay paragraphs."""
    left = [
        "In 1990, 1995 and 2000 the survey counted",
        "12,400 and 13,100 and 15,900 households in",
        "the region, while 2,100 2,300 and 2,800 of",
        "them moved during the 12 24 and 36 months",
        "that followed each of the three rounds.",
    ]
    right = [
        "Between 2001 and 2005 about 310 420 and 515",
        "new firms opened, and 1,200 1,350 and 1,410",
        "jobs were added in the 3 4 and 5 years that",
        "the programme ran in the 12 districts it had",
        "chosen as pilots for the next phases.",
    ]
    doc = pymupdf.open()
    page = doc.new_page()
    for i, (a, b) in enumerate(zip(left, right, strict=True)):
        page.insert_text((72, 100 + 13 * i), a, fontsize=10)
        page.insert_text((320, 100 + 13 * i), b, fontsize=10)
    path = tmp_path / "prose.pdf"
    doc.save(path)

    for mode in ("fast", "auto"):
        doc_ = _parse(path, mode)
        assert _tables(doc_) == [], mode
        text = " ".join(e.text for e in doc_.elements)
        assert "12,400 and 13,100" in text


def test_monospaced_word_columns_become_a_table(tmp_path: Path) -> None:
    """A manual's list of functions set in columns (each word placed on its own)."""
    grid = [
        ("add1", "deviance", "formula", "predict", "step"),
        ("alias", "drop1", "kappa", "print", "summary"),
        ("anova", "effects", "labels", "proj", "vcov"),
        ("coef", "family", "plot", "residuals", ""),
    ]
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text(
        (72, 80), "Generic functions that orient themselves to the model:", fontsize=10
    )
    for r, row in enumerate(grid):
        for c, word in enumerate(row):
            if word:
                page.insert_text((90 + 66 * c, 104 + 13 * r), word, fontsize=10, fontname="cour")
    page.insert_text((72, 170), "A brief description of the most used ones follows.", fontsize=10)
    path = tmp_path / "functions.pdf"
    doc.save(path)

    tables = _tables(_parse(path))
    assert len(tables) == 1
    assert tables[0].rows == tuple(grid)
    assert tables[0].header_rows == 0


# ---------------------------------------------------------------- partial rules, fills


def test_table_ruled_only_between_row_groups(tmp_path: Path) -> None:
    """Rules above and below the header and under the last row, none between columns:
    the ruled-table finder guesses columns and merges some; the text alignment wins."""
    doc = pymupdf.open()
    page = doc.new_page()
    top = 100.0
    page.draw_line((70, top - 12), (362, top - 12))
    page.draw_line((70, top + 4), (362, top + 4))
    y = _figures_table(page, top, [_HEADER], _RIGHTS) + 6
    y = _figures_table(page, y, _ROWS, _RIGHTS)
    page.draw_line((70, y - 7), (362, y - 7))
    path = tmp_path / "booktabs.pdf"
    doc.save(path)

    tables = _tables(_parse(path))
    assert len(tables) == 1
    rows = tables[0].rows or ()
    assert {len(r) for r in rows} == {5}
    assert ("Maine", "13,278", "13,077", "12,950", "13,151") in rows
    assert rows[0] == _HEADER


def test_row_shading_instead_of_rules(tmp_path: Path) -> None:
    """Alternate rows on filled backgrounds, no rules: still one table, rows intact."""
    doc = pymupdf.open()
    page = doc.new_page()
    for i in range(0, len(_ROWS) + 1, 2):
        y = 90 + 12 * i
        page.draw_rect(pymupdf.Rect(70, y - 9, 362, y + 3), color=None, fill=(0.85, 0.85, 0.9))
    _figures_table(page, 90, [_HEADER, *_ROWS], _RIGHTS)
    path = tmp_path / "shaded.pdf"
    doc.save(path)

    tables = _tables(_parse(path))
    assert len(tables) == 1
    assert list((tables[0].rows or ())[1:]) == [tuple(r) for r in _ROWS]


def test_grid_drawn_as_filled_rectangles(tmp_path: Path) -> None:
    """Cell borders drawn as thin filled rectangles (Word's table borders)."""
    rows = [("Item", "Count", "Share"), ("Pens", "12", "40%"), ("Ink", "18", "60%")]
    doc = pymupdf.open()
    page = doc.new_page()
    top, xs = 100.0, (72.0, 192.0, 312.0, 432.0)
    for r in range(len(rows) + 1):
        page.draw_rect(
            pymupdf.Rect(72, top + 20 * r, 432, top + 20 * r + 0.8), color=None, fill=(0, 0, 0)
        )
    for x in xs:
        page.draw_rect(
            pymupdf.Rect(x, top, x + 0.8, top + 20 * len(rows)), color=None, fill=(0, 0, 0)
        )
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            page.insert_text((80 + 120 * c, top + 14 + 20 * r), cell, fontsize=10)
    path = tmp_path / "filled.pdf"
    doc.save(path)

    tables = _tables(_parse(path))
    assert len(tables) == 1
    assert tables[0].rows == tuple(rows)


# ---------------------------------------------------------------- sideways, leaders


def test_sideways_table_on_a_portrait_page(tmp_path: Path) -> None:
    """A landscape table printed turned on a portrait page is read in its own frame."""
    doc = pymupdf.open()
    page = doc.new_page()
    # rotate=90: the text runs up the page; successive rows move right.
    for r, row in enumerate([_HEADER, *_ROWS, *_ROWS]):
        x = 100 + 12 * r
        page.insert_text((x, 700), row[0], fontsize=9, rotate=90)
        for text, right in zip(row[1:], _RIGHTS, strict=True):
            width = pymupdf.get_text_length(text, fontname="helv", fontsize=9)
            page.insert_text((x, 700 - (right - 72) + width), text, fontsize=9, rotate=90)
    path = tmp_path / "sideways.pdf"
    doc.save(path)

    tables = _tables(_parse(path))
    assert len(tables) == 1
    rows = tables[0].rows or ()
    assert rows[0] == _HEADER
    assert ("Vermont", "7,100", "7,152", "6,779", "7,317") in rows
    bbox = tables[0].bbox or (0, 0, 0, 0)
    # The box is in page coordinates: tall and narrow, where the text is.
    assert bbox[3] - bbox[1] > bbox[2] - bbox[0] and 90 <= bbox[0] < bbox[2] <= 250


def test_leader_rows_with_several_figures_are_not_contents_entries() -> None:
    """A statistical table's labels have dot leaders too; its figures are no page numbers."""
    lines = []
    for i, label in enumerate(["Robbery", "Burglary", "Arson", "Fraud"]):
        y = 100 + 12 * i
        lines += [
            make_line(f"{label} . . . . . . . . .", 36, y, 160),
            make_line("9,739", 190, y, 216),
            make_line("4,741", 236, y, 258),
            make_line("4,801", 280, y, 300),
        ]
    assert find_leader_tables(lines, page_no=1) == []


# ---------------------------------------------------------------- public files


def _extra(name: str) -> Path:
    path = EXTRA / name
    if not path.exists():
        pytest.skip("corpus-extra not available")
    return path


def test_statistical_table_with_close_figure_columns() -> None:
    """us-018 p.1: ten figure columns a few points apart, a state label column."""
    doc = _parse(_extra("us-018.pdf"), "auto", page_range=(1, 1))
    tables = _tables(doc)
    assert len(tables) == 1
    rows = tables[0].rows or ()
    assert {len(r) for r in rows} == {11}
    assert rows[1][:3] == ("Region and state", "2003–04", "2004–05")
    assert rows[5][:7] == ("Maine", "13,278", "13,077", "12,950", "13,151", "14,350", "14,093")
    assert tables[0].header_rows == 2 and len(rows) == 58


def test_two_stacked_typewriter_tables() -> None:
    """us-034 p.2: two monospaced tables, one above the other, leaders and dashes."""
    tables = _tables(_parse(_extra("us-034.pdf"), page_range=(2, 2)))
    assert len(tables) == 2
    for t, first in zip(tables, ("800", "1,360"), strict=True):
        rows = t.rows or ()
        assert rows[2][:2] == ("0.99", first) and {len(r) for r in rows} == {8}


def test_sideways_public_table() -> None:
    """clockwise_table_2: a 17-column table printed sideways (horizontal rules only)."""
    tables = _tables(_parse(_extra("clockwise_table_2.pdf")))
    assert len(tables) == 1
    rows = tables[0].rows or ()
    tribe = next(r for r in rows if r[0] == "Scheduled tribe")
    assert tribe[:4] == ("Scheduled tribe", "59.3", "39.0", "26.8")
    assert max(len(r) for r in rows) == 17


def test_function_table_in_a_manual(corpus: Path) -> None:
    """R-intro p.64: generic functions in five columns of separately placed words."""
    tables = _tables(_parse(corpus / "R-intro.pdf", page_range=(64, 64)))
    assert len(tables) == 1
    assert tables[0].rows == (
        ("add1", "deviance", "formula", "predict", "step"),
        ("alias", "drop1", "kappa", "print", "summary"),
        ("anova", "effects", "labels", "proj", "vcov"),
        ("coef", "family", "plot", "residuals", ""),
    )


def test_field_layout_table_keeps_value_lines_as_rows(tmp_path: Path) -> None:
    """A manual's record layout: line, position, description, with the values of a
    field listed under its description; no rules. Every line stays a row."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 70), "Exhibit 4. Entity display", fontsize=10)
    y = 100.0
    for text, x in (("LINE", 80), ("POSITION", 150), ("DESCRIPTION AND VALIDITY", 250)):
        page.insert_text((x, y), text, fontsize=10, fontname="hebo")
    rows = [
        ("14", "66", "LLC indicator"),
        ("14", "79", "Daily Delinquency Penalty Indicator"),
        ("", "", "0 = no delinquency penalty"),
        ("", "", "1 = more than 60 days late"),
        ("15", "9", "Taxpayer Authentication Number"),
        ("19-22", "03-80", "Filing Requirements: Form Number"),
    ]
    y += 28
    for line, pos, text in rows:
        if line:
            _put_right(page, 100, y, line, size=10)
            _put_right(page, 180, y, pos, size=10)
        page.insert_text((250, y), text, fontsize=10)
        y += 16
    path = tmp_path / "layout.pdf"
    doc.save(path)

    tables = _tables(_parse(path))
    assert len(tables) == 1
    assert tables[0].rows == (("LINE", "POSITION", "DESCRIPTION AND VALIDITY"), *rows)
    assert tables[0].header_rows == 1


def test_field_layout_table_in_a_public_manual(corpus: Path) -> None:
    """IRM exhibit (p.45): no rules, right-aligned positions, value lists, ranges."""
    doc = _parse(corpus / "pdf2image-memory-error-test-400p.pdf", page_range=(45, 45))
    tables = _tables(doc)
    assert len(tables) == 1
    rows = tables[0].rows or ()
    assert rows[0] == ("LINE", "POSITION", "DESCRIPTION AND VALIDITY")
    assert ("14", "79", "501C- Daily Delinquency Penalty Indicator") in rows
    assert ("", "", "0 = no deliquency penalty") in rows
    assert rows[-1] == ("23", "03-26", "Filing Requirements: Form Number & Value")
    assert not [e for e in doc.elements if e.type == "paragraph" and "LLC indicator" in e.text]


def test_grid_does_not_swallow_the_text_below() -> None:
    """spanning_cells: the first grid's last row reaches over the paragraph below;
    that row is dropped, so the paragraph stays text and the table keeps 21 rows."""
    doc = _parse(_extra("spanning_cells.pdf"))
    tables = _tables(doc)
    assert [len(t.rows or ()) for t in tables] == [21, 4]
    assert tables[0].rows and tables[0].rows[-1][0] == "Enterprise-class data centers"
    assert [e for e in doc.elements if e.type == "paragraph" and "summarizes" in e.text]

"""Pure logic of the PDF parser: numbering, matching, ordering, joining, grids."""

from __future__ import annotations

from dataclasses import dataclass

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.bands import is_page_number
from chunkweave.parsers.pdf.furniture import signature
from chunkweave.parsers.pdf.headings import (
    keys_match,
    match_key,
    numbering_depth,
    rank_styles,
)
from chunkweave.parsers.pdf.join import join_continuations
from chunkweave.parsers.pdf.order import find_gutters, reading_order
from chunkweave.parsers.pdf.tables.grid import find_grid_tables
from chunkweave.parsers.pdf.text import clean_text, join_lines
from tests.pdf_helpers import make_line


@dataclass
class Box:
    name: str
    bbox: tuple[float, float, float, float]


def test_numbering_depth() -> None:
    assert numbering_depth("2.3.1 Results") == 3
    assert numbering_depth("A.1 Proofs") == 2
    assert numbering_depth("Chapter 4 Methods") == 1
    assert numbering_depth("3 Dense Passage Retriever") == 1
    assert numbering_depth("Results") is None
    assert numbering_depth("2024") is None


def test_outline_keys_ignore_numbering_and_punctuation() -> None:
    assert match_key("1.1 The R environment") == match_key("The R environment")
    assert keys_match(
        match_key("Chapter 2: Simple manipulations"), match_key("Simple manipulations")
    )
    assert not keys_match(match_key("Introduction"), match_key("Conclusion"))


def test_rank_styles_prefers_numbering_depth() -> None:
    styles = {(18.0, True): 5, (14.0, True): 9, (12.0, True): 4}
    depths = {(14.0, True): {2: 8, 1: 1}}
    levels = rank_styles(styles, depths)
    assert levels[(18.0, True)] == 1
    assert levels[(14.0, True)] == 2
    assert levels[(12.0, True)] == 3


def test_page_numbers_and_signatures() -> None:
    assert all(is_page_number(t) for t in ["7", "- 12 -", "Page 3", "3 of 20", "xii"])
    assert not is_page_number("Table 3")
    assert signature("Chapter 2:  Roles 11") == signature("chapter 2: roles 12")


def test_join_lines_dehyphenates_and_normalises_ligatures() -> None:
    assert join_lines(["the infor-", "mation is", "state-of-the-art"]) == (
        "the information is state-of-the-art"
    )
    assert join_lines(["Self-", "Attention"]) == "Self- Attention"
    assert clean_text("ﬁnal \u00adoﬀer") == "final offer"


def test_two_columns_read_column_by_column() -> None:
    boxes = [
        Box("title", (100, 50, 500, 70)),
        Box("L1", (60, 100, 290, 200)),
        Box("R1", (310, 100, 540, 200)),
        Box("L2", (60, 210, 290, 400)),
        Box("R2", (310, 210, 540, 400)),
        Box("wide-figure", (60, 420, 540, 500)),
        Box("L3", (60, 520, 290, 700)),
        Box("R3", (310, 520, 540, 700)),
    ]
    assert len(find_gutters(boxes)) == 1
    order = [b.name for b in reading_order(boxes)]
    assert order == ["title", "L1", "L2", "R1", "R2", "wide-figure", "L3", "R3"]


def test_single_column_keeps_top_to_bottom() -> None:
    boxes = [Box("b", (60, 300, 540, 400)), Box("a", (60, 100, 540, 200))]
    assert find_gutters(boxes) == []
    assert [b.name for b in reading_order(boxes)] == ["a", "b"]


def _el(kind: str, text: str, page: int = 1) -> Element:
    return Element(type=kind, text=text, page=page, order=0)  # type: ignore[arg-type]


def test_continuations_join_across_page_furniture() -> None:
    els = [
        _el("paragraph", "The model was trained on"),
        _el("page_footer", "12"),
        _el("page_header", "Running title", 2),
        _el("paragraph", "large data sets.", 2),
        _el("paragraph", "New paragraph.", 2),
    ]
    out = list(join_continuations(iter(els)))
    assert [e.type for e in out] == ["paragraph", "page_footer", "page_header", "paragraph"]
    assert out[0].text == "The model was trained on large data sets."
    assert out[0].page == 1


def test_finished_sentences_are_not_joined() -> None:
    els = [_el("paragraph", "Done."), _el("paragraph", "lowercase start")]
    assert len(list(join_continuations(iter(els)))) == 2


def test_grid_table_from_aligned_lines() -> None:
    lines = [
        make_line("LINE", 50, 100, 80, bold=True),
        make_line("POSITION", 150, 100, 200, bold=True),
        make_line("DESCRIPTION", 250, 100, 320, bold=True),
    ]
    for i, (a, b, c) in enumerate(
        [("1", "01-05", "Command code"), ("1", "06", "Definer"), ("2", "07-08", "MFT")]
    ):
        y = 120 + 20 * i
        lines += [make_line(a, 50, y, 56), make_line(b, 150, y, 180), make_line(c, 250, y, 330)]
    lines.append(make_line("A = adjustments", 262, 172, 340))  # continues the cell above
    tables = find_grid_tables(lines, page_no=3)
    assert len(tables) == 1
    t = tables[0]
    assert t.rows is not None and len(t.rows) == 4 and t.header_rows == 1
    assert t.rows[0] == ("LINE", "POSITION", "DESCRIPTION")
    assert t.rows[3] == ("2", "07-08", "MFT A = adjustments")
    assert t.page == 3


def test_plain_text_is_not_a_grid() -> None:
    lines = [make_line(f"Body line {i} of a paragraph.", 72, 100 + 12 * i, 500) for i in range(20)]
    assert find_grid_tables(lines, page_no=1) == []

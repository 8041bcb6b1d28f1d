"""Tables only where there are tables; headings never from running text.

Running text set in columns lines up like a table's cells; a bold phrase inside a
paragraph, a bullet or a word broken over a line end look like short headings.
Pure-logic tests on hand-built lines and cells, a synthetic three-column page, and
the public documents of ``corpus-extra`` the rules were written for.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from chunkweave.parsers.document import ParseOptions
from chunkweave.parsers.elements import Element, table_element
from chunkweave.parsers.pdf import parse_pdf
from chunkweave.parsers.pdf.blocks import PageContext, TextRegion, classify_region
from chunkweave.parsers.pdf.headings import HeadingModel, demote_run_ins
from chunkweave.parsers.pdf.headings.runon import ends_broken
from chunkweave.parsers.pdf.tables.verdict import read_cells, verdict
from tests.pdf_helpers import make_line

EXTRA = Path(__file__).resolve().parents[2] / "shared" / "corpus-extra"

_PROSE = (
    "The agency has determined that final corrective action is necessary to address the "
    "unsafe condition on these airplanes. This proposed rule would require operators to "
    "install new software for the flight control computers, to revise the flight manual, "
    "and to conduct a test of the sensor system before further flight. The agency invites "
    "comments on the proposed changes and on the economic effects of the rule, and will "
    "consider every comment received by the closing date before it finalizes the action. "
    "Operators who wish to comment should identify the docket number and submit the "
    "comments through the portal, by mail, or by hand delivery to the docket office, which "
    "is open during normal business hours except on federal holidays and weekends. "
) * 3


def _wrap(text: str, width: float, size: float) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        trial = f"{lines[-1]} {word}" if lines else word
        if lines and pymupdf.get_text_length(trial, fontname="helv", fontsize=size) <= width:
            lines[-1] = trial
        else:
            lines.append(word)
    return lines


def _three_columns(path: Path) -> list[str]:
    """Write a page of running text in three columns sharing baselines; return its lines."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    lines = _wrap(_PROSE, 160, 9)
    per_column = (len(lines) + 2) // 3
    for c in range(3):
        for k, text in enumerate(lines[c * per_column : (c + 1) * per_column]):
            page.insert_text((45 + c * 177, 80 + k * 11), text, fontsize=9)
    doc.save(path)
    return lines


def test_running_text_in_three_columns_is_read_in_order_not_as_a_table(tmp_path: Path) -> None:
    path = tmp_path / "columns.pdf"
    lines = _three_columns(path)
    parsed = parse_pdf(path, ParseOptions(mode="fast"))
    assert not [e for e in parsed.elements if e.type == "table"]
    text = " ".join(e.text for e in parsed.elements if not e.is_furniture)
    # Column by column: the text reads as written.
    assert " ".join(text.split()) == " ".join(" ".join(lines).split())


def _cells(column_texts: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(zip(*column_texts, strict=True))


def test_columns_of_running_text_read_as_text_and_short_cells_as_a_table() -> None:
    prose = _wrap(_PROSE, 160, 9)[:24]
    running = _cells([prose[0:8], prose[8:16], prose[16:24]])
    assert read_cells(running).running_text
    table = _cells(
        [
            ["Region", "Northeast", "Maine", "New Jersey", "Vermont"],
            ["2019", "485,670", "13,278", "83,826", "7,100"],
            ["2020", "503,528", "13,077", "86,502", "7,152"],
        ]
    )
    reading = read_cells(table)
    assert reading.text_columns == 0 and not reading.running_text
    # A table with one column of descriptions is in doubt, not running text.
    described = _cells(
        [
            ["Action", "Install", "Revise", "Test", "Remove"],
            ["1", "2", "1", "3", "1"],
            prose[0:5],
        ]
    )
    assert read_cells(described).doubtful


def test_the_layout_model_votes_on_doubtful_candidates() -> None:
    prose = _wrap(_PROSE, 160, 9)[:5]
    labels = ["Action", "Install", "Revise", "Test", "Remove"]
    rows = _cells([labels, ["1", "2", "1", "3", "1"], prose])
    box = (40.0, 100.0, 560.0, 200.0)
    candidate = table_element(rows, 1, page=1, bbox=box)
    assert verdict(candidate)  # no model: the candidate stands
    assert not verdict(candidate, [((30.0, 90.0, 570.0, 210.0), "text")])
    assert verdict(candidate, [((30.0, 90.0, 570.0, 210.0), "table")])
    # Clear running text falls without a model, and stands where the model saw a table.
    running = table_element(_cells([prose, prose, prose]), 0, page=1, bbox=box)
    assert not verdict(running)
    assert verdict(running, [((30.0, 90.0, 570.0, 210.0), "table")])


def _ctx(style_levels: dict[tuple[float, bool], int]) -> PageContext:
    model = HeadingModel(
        body_size=9.0,
        style_levels=style_levels,
        outline_levels={},
        title_style=None,
        has_outline=False,
    )
    return PageContext(page=2, page_height=792, first_page=False, headings=model, outline=None)


def _classify(lines: list, hint: str | None = None, levels: dict | None = None) -> list[Element]:
    ctx = _ctx(levels if levels is not None else {(9.0, True): 1})
    return list(classify_region(TextRegion(lines, hint), ctx))


def test_a_bold_phrase_inside_a_paragraph_stays_in_the_paragraph() -> None:
    lines = [
        make_line("Boeing 737 Flight Standardization", 399, 203, 543, 9),
        make_line("Board Report for public comment. If an", 399, 213, 563, 9),
        make_line("addendum is posted, the FAA will", 399, 223, 544, 9),
        make_line("announce the availability of it in the", 399, 233, 552, 9),
        make_line("Federal Register. The FAA will", 399, 243, 532, 9, bold=True),
        make_line("consider the report and the comments", 399, 253, 558, 9),
        make_line("submitted in finalizing the AD.", 399, 263, 530, 9),
    ]
    out = _classify(lines)
    assert [e.type for e in out] == ["paragraph"]
    assert "in the Federal Register. The FAA will consider the report" in out[0].text


def test_a_run_in_phrase_whose_sentence_runs_on_below_is_no_heading() -> None:
    lines = [
        make_line("Note 1 to paragraph (g): Guidance for", 407, 616, 547, 8, bold=True),
        make_line("doing the installation and installation", 399, 625, 540, 8),
        make_line("verification of the software can be found.", 399, 634, 561, 8),
    ]
    out = _classify(lines, levels={(8.0, True): 1})
    assert [e.type for e in out] == ["paragraph"]


def test_a_heading_styled_line_ending_in_a_broken_word_is_no_heading() -> None:
    assert ends_broken("The Boeing Company: Docket No. FAA–") and ends_broken("infor-")
    assert not ends_broken("PART 39—AIRWORTHINESS DIRECTIVES") and not ends_broken("Costs –")
    line = make_line("The Boeing Company: Docket No. FAA–", 222, 645, 373, 8, bold=True)
    assert [e.type for e in _classify([line], levels={(8.0, True): 1})] == ["paragraph"]


def test_a_bullet_is_a_list_item_whatever_the_layout_model_says() -> None:
    lines = [
        make_line("• Partly because of the strength of leading retailers,", 72, 72, 524, 11),
        make_line("wholesalers appear to have a minor role in the food chain", 108, 91, 401, 11),
    ]
    out = _classify(lines, hint="section-header", levels={(11.0, False): 1})
    assert [e.type for e in out] == ["list_item"]


def test_a_heading_running_on_into_the_paragraph_below_is_demoted() -> None:
    def el(kind: str, text: str, box: tuple[float, float, float, float]) -> Element:
        level = 1 if kind == "heading" else None
        return Element(type=kind, text=text, page=6, bbox=box, order=0, level=level)

    run_in = el("heading", "Note 2: Guidance for", (399, 616, 547, 624))
    below = el("paragraph", "doing the installation is in the manual.", (399, 625, 568, 650))
    real = el("heading", "(a) Comments Due Date", (222, 677, 311, 685))
    body = el("paragraph", "The FAA must receive comments on this AD.", (230, 689, 382, 697))
    numbered = el("heading", "6.3.4 Attaching arbitrary lists", (90, 99, 285, 110))
    code = el("paragraph", "attach() is a generic function.", (90, 118, 522, 128))
    out = list(demote_run_ins([run_in, below, real, body, numbered, code]))
    kinds = ["paragraph", "paragraph", "heading", "paragraph", "heading", "paragraph"]
    assert [e.type for e in out] == kinds


@pytest.fixture(scope="module")
def extra() -> Path:
    if not EXTRA.is_dir():
        pytest.fail(f"corpus-extra not found at {EXTRA}")
    return EXTRA


def test_federal_register_columns_are_text_and_its_tables_stay(extra: Path) -> None:
    parsed = parse_pdf(extra / "federal-register-2020-17221.pdf", ParseOptions(mode="fast"))
    body = [e for e in parsed.elements if not e.is_furniture]
    tables = [e for e in body if e.type == "table"]
    assert len(tables) <= 0.02 * len(body)
    # The cost table on page 5 (ruled, short cells) is still a table.
    assert any(t.page == 5 and "Labor cost" in t.text for t in tables)
    headings = {e.text for e in body if e.type == "heading"}
    assert "Background" in headings
    assert not [h for h in headings if h.startswith(("Federal Register.", "Note 1 to"))]
    assert not [h for h in headings if h.endswith("FAA–")]


def test_eu_004_bullet_is_no_section_heading(extra: Path) -> None:
    parsed = parse_pdf(extra / "eu-004.pdf", ParseOptions(mode="auto", page_range=(12, 12)))
    bullet = [e for e in parsed.elements if e.text.startswith(("Partly because", "• Partly"))]
    assert bullet and all(e.type == "list_item" for e in bullet)

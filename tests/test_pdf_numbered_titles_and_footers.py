"""Layouts of documents nobody tuned for, rebuilt as tiny PDFs.

Each test draws the layout in a few lines with PyMuPDF and fails on the parser that
had the failure: bold numbered section titles read as list items, and a footer row
of three pieces under two notice lines leaking into the body.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf

from chunkweave.parsers.document import ParseOptions
from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf import parse_pdf

_BODY = (
    "The program reads the evaluated data and writes the processed covariance",
    "matrices to a file that the other modules of the system read in turn, so",
    "that the analyst can propagate the uncertainty to the final results here.",
)


def _parse(path: Path, mode: str = "fast") -> list[Element]:
    return list(parse_pdf(path, ParseOptions(mode=mode)).elements)


def _word_processor_pdf(path: Path, titles: list[str], *, bold: bool) -> Path:
    """Numbered body-size titles, each followed closely (same block) by its paragraph."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 72.0
    for title in titles:
        if y > 640:
            page = doc.new_page(width=612, height=792)
            y = 72.0
        page.insert_text((72, y), title, fontsize=11, fontname="hebo" if bold else "helv")
        y += 13.5
        for line in _BODY:
            page.insert_text((72, y), line, fontsize=11, fontname="helv")
            y += 13.5
        y += 14
    doc.save(path)
    return path


_TITLES = [
    "1. NAME AND TITLE",
    "2. CONTRIBUTOR",
    "3. CODING LANGUAGE AND COMPUTER",
    "4. DESCRIPTION OF PROGRAM",
    "5. METHOD OF SOLUTION",
    "6. RESTRICTIONS OR LIMITATIONS",
]


def test_bold_numbered_body_size_titles_are_headings(tmp_path: Path) -> None:
    """No outline, body size, bold, numbered "1." like a list: sections, one level."""
    els = _parse(_word_processor_pdf(tmp_path / "wp.pdf", _TITLES, bold=True))
    heads = [e for e in els if e.type == "heading"]
    assert [e.text for e in heads] == _TITLES
    assert {e.level for e in heads} == {1}
    # The paragraph under a title sits in its section.
    para = next(e for e in els if e.type == "paragraph")
    assert para.heading_path == (_TITLES[0],)


def test_regular_numbered_lines_stay_list_items(tmp_path: Path) -> None:
    """The same numbered lines in the body font are an enumerated list, not sections."""
    els = _parse(_word_processor_pdf(tmp_path / "list.pdf", _TITLES, bold=False))
    assert not [e for e in els if e.type == "heading"]
    items = [e.text for e in els if e.type == "list_item"]
    # Each numbered line runs on into the lines under it: one list item each.
    assert len(items) == len(_TITLES)
    assert all(t.startswith(title) for t, title in zip(items, _TITLES, strict=True))


def test_bold_numbered_sentence_stays_a_list_item(tmp_path: Path) -> None:
    """A bold numbered line that ends like a sentence is a list item (an instruction)."""
    steps = ["1. Open the valve slowly.", "2. Read the gauge.", "3. Close the valve."]
    els = _parse(_word_processor_pdf(tmp_path / "steps.pdf", steps, bold=True))
    assert not [e for e in els if e.type == "heading"]


def _footer_pdf(path: Path, pages: int = 5) -> Path:
    """Pages whose footer is a row of three pieces above two notice lines (IRS-manual style)."""
    doc = pymupdf.open()
    for n in range(1, pages + 1):
        page = doc.new_page(width=612, height=792)
        y = 90.0
        for _ in range(6):
            for line in _BODY:
                page.insert_text((72, y), line, fontsize=10, fontname="helv")
                y += 12
            y += 10
        page.insert_text((72, 752), "Cat. No. 28171E (12-12-2022)", fontsize=9.5)
        page.insert_text((269, 752), "Internal Revenue Manual", fontsize=9.5)
        page.insert_text((500, 752), f"2.3.59-{n}", fontsize=9.5, fontname="hebo")
        page.insert_text((72, 762), "Any line marked with a #", fontsize=9.5)
        page.insert_text((72, 772), "is for Official Use Only", fontsize=9.5, fontname="hebo")
    doc.save(path)
    return path


def test_three_piece_footer_row_above_notice_lines_is_furniture(tmp_path: Path) -> None:
    els = _parse(_footer_pdf(tmp_path / "footer.pdf"))
    body = " ".join(e.text for e in els if not e.is_furniture)
    assert "Internal Revenue Manual" not in body
    assert "Cat. No." not in body and "2.3.59-" not in body
    assert "Official Use Only" not in body
    footers = [e.text for e in els if e.type == "page_footer"]
    assert footers.count("Internal Revenue Manual") == 5
    # The body text is all still there.
    assert body.count("final results here.") == 5 * 6

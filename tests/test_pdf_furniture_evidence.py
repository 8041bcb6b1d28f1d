"""Furniture from evidence across pages: signatures, learnt bands, the model's classes.

Pure logic on small synthetic lines first (what a running line's signature keeps,
which bands the document-wide model learns, which lines the layout model's boxes
mark), then corpus checks: the Redbook's annotated running headers and footers
stay out of the body and out of every chunk, yet are kept as ``page_header`` /
``page_footer`` elements.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.groundtruth import load_groundtruth
from bench.scoring import furniture_leaks
from chunkweave.chunking import ChunkOptions, chunk_document, resolve_options
from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.parsers.pdf.furniture import FurnitureModel, model_furniture, signature
from chunkweave.parsers.pdf.text import Line

HEIGHT = 800.0


def _line(text: str, y: float, size: float = 9.0, x: float = 72.0) -> Line:
    return Line(
        text=text,
        bbox=(x, y, x + 6 * len(text), y + size),
        size=size,
        bold=False,
        mono=False,
        block=0,
        chars=len(text),
    )


def _page(header: str, footer: str, n: int) -> list[Line]:
    body = [
        _line(f"Body line {k} of page {n} runs on for a while here.", 200 + 14 * k, 10.0)
        for k in range(20)
    ]
    return [_line(header, 40.0), *body, _line(footer, 760.0)]


# ---------------------------------------------------------------- signatures


def test_signature_masks_page_numbers_roman_numerals_and_dates() -> None:
    assert signature("Page iv") == signature("Page 12") == signature("PAGE XII")
    assert signature("Draft of March 3, 2024") == signature("Draft of May 19, 2023")
    assert signature("12 Mar 2020 report") == signature("3 Sep 2021 Report")
    assert signature("Chapter IX: Results") == signature("Chapter 9: Results")


def test_signature_keeps_words_that_only_look_like_numerals_or_months() -> None:
    # "civil" and "mild" are no roman numerals; "may" without a day is a word.
    assert signature("Civil works") != signature("Mild works")
    assert signature("This may contain") == "this may contain"
    assert signature("Results for March") != signature("Results for May")


# ---------------------------------------------------------------- learnt bands


def test_dated_running_header_repeats_and_its_bands_are_learnt() -> None:
    model = FurnitureModel()
    months = ["January", "March", "May", "July"]
    for n, month in enumerate(months):
        model.observe(n, _page(f"Draft of {month} {n + 2}, 2024", f"Page {n + 1}", n), HEIGHT)
    assert model.repeated("top", "Draft of October 9, 2025")
    assert not model.repeated("top", "Body line 1 of page 1 runs on for a while here.")
    bands = model.bands()
    assert bands.header_bottom == pytest.approx(49.0 / HEIGHT)
    assert bands.footer_top == pytest.approx(760.0 / HEIGHT)
    assert bands.band_of("Draft of June 1, 2030") == "top"
    assert bands.band_of("Page 99") == "bottom"
    assert bands.band_of("Some heading") is None
    lines = _page("Draft of April 4, 2024", "Page 7", 9)
    found = model.classify(lines, HEIGHT, 10.0)
    assert found == {0: "top", len(lines) - 1: "bottom"}


def test_a_line_seen_on_one_page_learns_no_band() -> None:
    model = FurnitureModel()
    headers = ["Annual report", "Methods in brief", "Results by region", "Outlook"]
    for n, header in enumerate(headers):
        model.observe(n, _page(header, "", n), HEIGHT)
    bands = model.bands()
    assert bands.header_bottom is None and bands.footer_top is None
    assert bands.header == bands.footer == frozenset()


def test_model_furniture_marks_the_lines_inside_header_and_footer_boxes() -> None:
    lines = _page("Running title", "Page 3", 0)
    boxes = [
        ((60.0, 30.0, 400.0, 55.0), "page-header"),
        ((60.0, 190.0, 500.0, 480.0), "text"),
        ((60.0, 750.0, 400.0, 775.0), "page-footer"),
    ]
    assert model_furniture(lines, boxes) == {0: "top", len(lines) - 1: "bottom"}
    assert model_furniture(lines, [((60.0, 190.0, 500.0, 480.0), "text")]) == {}


# ---------------------------------------------------------------- corpus


class _Words:
    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


@pytest.mark.parametrize("mode", ["fast", "auto"])
def test_redbook_furniture_is_kept_as_elements_and_left_out_of_chunks(
    corpus: Path, mode: str
) -> None:
    path = corpus / "redp5110_sampled.pdf"
    gt = load_groundtruth(path)
    assert gt is not None and gt.furniture
    doc = parse_document(path, ParseOptions(mode=mode))
    furniture = [e for e in doc.elements if e.is_furniture]
    body = [e.text for e in doc.elements if not e.is_furniture]
    reference = [text for _, text in gt.stream]
    leaked, total = furniture_leaks(body, gt.furniture, reference)
    assert total > 0 and leaked == 0
    # Kept as elements: most annotated running lines are found among them.
    kept, _ = furniture_leaks([e.text for e in furniture], gt.furniture)
    assert kept >= 0.8 * total
    assert {e.type for e in furniture} == {"page_header", "page_footer"}
    chunks = chunk_document(doc, resolve_options(ChunkOptions(), 256), _Words(), doc_id="r")
    leaked_in_chunks, _ = furniture_leaks([c.text for c in chunks], gt.furniture, reference)
    assert leaked_in_chunks == 0

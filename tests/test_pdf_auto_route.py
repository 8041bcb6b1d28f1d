"""``auto`` mode: one route per document, with the layout model as the arbiter.

Unit tests of the pure logic (the decision, the per-class comparison, the sample,
style confirmation), then real parses of small generated PDFs with the real model:

- titles in the body's own plain style: the model calls them section headers, the
  heuristics cannot (no style to learn), so the document goes to the model;
- bold body-size titles in a document that also sets a paragraph in bold: the
  profile cannot learn the style, the model confirms it on the sample, and the
  heuristics keep the document with the confirmed style;
- plain prose, learnt titles and a trusted outline stay on the heuristics.

The route is read from what ``parse_pdf`` records (:func:`recorded_routes`) and
from its DEBUG record.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pymupdf
import pytest

from chunkweave.parsers.document import ParseOptions
from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf import parse_pdf
from chunkweave.parsers.pdf.calibrate import (
    CALIBRATION_PAGES,
    FIRST_PAGES,
    RouteExplanation,
    calibration_pages,
    compare_page,
    confirm_styles,
    recorded_routes,
    with_styles,
)
from chunkweave.parsers.pdf.furniture import FurnitureModel
from chunkweave.parsers.pdf.headings import HeadingModel, OutlineIndex
from chunkweave.parsers.pdf.layout_model import LayoutBox, model_available
from chunkweave.parsers.pdf.profile import PdfProfile
from chunkweave.parsers.pdf.route import (
    TOLERANCE,
    ClassAgreement,
    decide_document,
    wilson_lower,
)
from chunkweave.parsers.pdf.text import Line

TITLES = (
    "Background",
    "Scope of the work",
    "Site conditions",
    "Budget and costs",
    "Schedule",
    "Risks and mitigation",
    "Public consultation",
    "Recommendation",
)
_PROSE = (
    "the committee reviewed the request and noted that the existing building has been "
    "vacant for several years while the owner prepared plans for a new residential project "
    "on the lot next to the park"
)

needs_model = pytest.mark.skipif(not model_available(), reason="pymupdf-layout not installed")


# --- the decision ---------------------------------------------------------------------


def test_wilson_lower_bound_grows_with_evidence() -> None:
    assert wilson_lower(0, 50) == 0.0
    assert wilson_lower(3, 0) == 0.0
    # The same share is stronger evidence over more blocks.
    assert wilson_lower(2, 10) < wilson_lower(20, 100) < 0.2
    # The bound never exceeds the observed share.
    assert wilson_lower(5, 20) < 5 / 20


def test_decision_keeps_heuristics_within_the_tolerance() -> None:
    few = [
        ClassAgreement("section-header", model=6, model_agreed=5, heuristic=5, heuristic_agreed=5)
    ]
    route, reason = decide_document(few, outline_trusted=False)
    # One of eleven blocks: not enough to say the heuristics are worse than tolerated.
    assert route == "heuristic", reason
    many = [ClassAgreement("section-header", model=8, model_agreed=0)]
    route, reason = decide_document(many, outline_trusted=False)
    assert route == "model", reason
    assert f"{TOLERANCE:.2f}" in reason


def test_decision_without_decisive_blocks_is_heuristic() -> None:
    assert decide_document([ClassAgreement("table")], outline_trusted=False)[0] == "heuristic"


def test_trusted_outline_settles_headings_but_not_tables() -> None:
    headings = [ClassAgreement("section-header", model=8, model_agreed=0)]
    assert decide_document(headings, outline_trusted=True)[0] == "heuristic"
    tables = [*headings, ClassAgreement("table", model=6, model_agreed=0, heuristic=1)]
    assert decide_document(tables, outline_trusted=True)[0] == "model"


def test_class_agreement_counts() -> None:
    c = ClassAgreement("list-item", model=4, model_agreed=3) + ClassAgreement(
        "list-item", heuristic=2, heuristic_agreed=1
    )
    assert (c.blocks, c.disagreeing) == (6, 2)
    assert c.agreement == pytest.approx(4 / 6)
    assert ClassAgreement("caption").agreement is None


# --- the sample ----------------------------------------------------------------------


def test_short_documents_are_sampled_whole() -> None:
    assert calibration_pages(5) == [0, 1, 2, 3, 4]


def test_long_documents_get_first_pages_and_a_spread() -> None:
    pages = calibration_pages(400)
    assert len(pages) == CALIBRATION_PAGES
    assert pages[:FIRST_PAGES] == list(range(FIRST_PAGES))
    # Spread through the rest: one page in each of the remaining slices.
    assert pages[-1] > 300 and pages[FIRST_PAGES] < 100
    assert pages == calibration_pages(400)


# --- the comparison ------------------------------------------------------------------


def _line(text: str, y: float, size: float = 10.0, bold: bool = False) -> Line:
    return Line(text=text, bbox=(72, y, 300, y + size), size=size, bold=bold, mono=False, block=0)


def _el(kind: str, line: Line, level: int | None = None) -> Element:
    return Element(type=kind, text=line.text, page=1, bbox=line.bbox, order=0, level=level)


def test_compare_counts_agreement_per_class() -> None:
    title, body, item = _line("Scope", 100, bold=True), _line("Text here.", 120), _line("- a", 140)
    heuristic = [_el("paragraph", title), _el("paragraph", body), _el("list_item", item, 1)]
    model = [_el("heading", title, 1), _el("paragraph", body), _el("list_item", item, 1)]
    counts = compare_page([title, body, item], heuristic, model)
    assert counts["section-header"] == ClassAgreement("section-header", model=1, model_agreed=0)
    assert counts["list-item"] == ClassAgreement(
        "list-item", model=1, model_agreed=1, heuristic=1, heuristic_agreed=1
    )
    assert counts["table"].blocks == 0


def _profile(style_levels: dict[tuple[float, bool], int], outline: bool = False) -> PdfProfile:
    headings = HeadingModel(
        body_size=10.0,
        style_levels=style_levels,
        outline_levels={},
        title_style=None,
        has_outline=outline,
    )
    return PdfProfile(
        headings=headings, furniture=FurnitureModel(), outline=OutlineIndex(), page_count=2
    )


def _boxes(lines: list[Line], labels: list[str]) -> list[LayoutBox]:
    return [LayoutBox(ln.bbox, label) for ln, label in zip(lines, labels, strict=True)]


def test_model_confirms_and_rejects_styles() -> None:
    bold = [_line(t, 100 + 30 * i, bold=True) for i, t in enumerate(TITLES[:3])]
    big = [_line(f"Big {i}", 300 + 30 * i, size=12.0) for i in range(2)]
    sample = [(bold + big, _boxes(bold + big, ["section-header"] * 3 + ["text"] * 2))]
    confirmed, rejected = confirm_styles(sample, _profile({(12.0, False): 1}))
    assert set(confirmed) == {(10.0, True)}
    assert rejected == {(12.0, False)}
    tuned = with_styles(_profile({(12.0, False): 1}), confirmed, rejected)
    assert set(tuned.headings.style_levels) == {(10.0, True)}


def test_one_vote_confirms_nothing_and_an_outline_decides_alone() -> None:
    one = [_line("Alone", 100, bold=True)]
    assert confirm_styles([(one, _boxes(one, ["section-header"]))], _profile({})) == ({}, set())
    bold = [_line(t, 100 + 30 * i, bold=True) for i, t in enumerate(TITLES[:3])]
    sample = [(bold, _boxes(bold, ["section-header"] * 3))]
    assert confirm_styles(sample, _profile({}, outline=True)) == ({}, set())


def test_plain_body_style_is_never_confirmed() -> None:
    plain = [_line(t, 100 + 30 * i) for i, t in enumerate(TITLES[:4])]
    sample = [(plain, _boxes(plain, ["section-header"] * 4))]
    assert confirm_styles(sample, _profile({})) == ({}, set())


# --- real parses ---------------------------------------------------------------------


def _prose(seed: int, count: int) -> list[str]:
    """``count`` lines of plain prose of about 14 words; the last ends a sentence."""
    vocabulary = _PROSE.split()
    out = []
    for i in range(count):
        k = (seed * 7 + i * 3) % len(vocabulary)
        words = (vocabulary[k:] + vocabulary[:k])[:14]
        text = " ".join(words)
        out.append(text[0].upper() + text[1:] + ("." if i == count - 1 else ""))
    return out


def _write(
    path: Path,
    titles: tuple[str, ...],
    bold_notice: bool,
    sections: int = 8,
    title_font: str = "hebo",
    title_gap: float = 20,
) -> Path:
    """Write sections of five prose lines, each under an 11 pt title (or none)."""
    doc = pymupdf.open()
    page = doc.new_page()
    y = 72.0

    def put(text: str, font: str = "helv", gap: float = 14) -> None:
        nonlocal y
        page.insert_text((72, y), text, fontsize=11, fontname=font)
        y += gap

    if bold_notice:
        # A bold paragraph: bold body-size text is then too common to be a heading style.
        for line in _prose(3, 7):
            put(line, "hebo")
        y += 16
    for s in range(sections):
        if y > 640:
            page = doc.new_page()
            y = 72.0
        if titles:
            put(titles[s], title_font, title_gap)
        for line in _prose(s, 5):
            put(line)
        y += 16
    doc.save(path)
    return path


def _parse(
    path: Path, caplog: pytest.LogCaptureFixture, mode: str = "auto"
) -> tuple[list[str], RouteExplanation]:
    """Parse; return the heading texts and the recorded route explanation."""
    caplog.clear()
    with (
        caplog.at_level(logging.DEBUG, logger="chunkweave.parsers.pdf"),
        recorded_routes() as found,
    ):
        doc = parse_pdf(path, ParseOptions.model_validate({"mode": mode, "ocr": False}))
    records = [r for r in caplog.records if hasattr(r, "explanation")]
    assert len(records) == 1 and len(found) == 1
    assert records[0].explanation == found[0]
    headings = [e.text for e in doc.elements if e.type == "heading"]
    return headings, found[0]


@needs_model
def test_disagreement_sends_the_document_to_the_model(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Titles in the body's own plain style, set apart: only the model sees them.
    path = _write(tmp_path / "plain.pdf", TITLES, False, title_font="helv", title_gap=24)
    headings, explained = _parse(path, caplog)
    assert explained.route == "model", explained.lines()
    assert explained.pages == (("model:calibrated", 2),)
    header = next(c for c in explained.classes if c.label == "section-header")
    assert header.model >= len(TITLES) // 2 and header.heuristic_agreed == header.heuristic
    assert headings == list(TITLES)
    fast = parse_pdf(path, ParseOptions(mode="fast", ocr=False))
    assert not [e for e in fast.elements if e.type == "heading"]


@needs_model
def test_model_confirmed_style_keeps_the_heuristics(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path / "class1.pdf", TITLES, bold_notice=True)
    headings, explained = _parse(path, caplog)
    assert explained.route == "heuristic", explained.lines()
    assert [(s, b) for s, b, _ in explained.confirmed] == [(11.0, True)]
    before = next(c for c in explained.before if c.label == "section-header")
    assert before.model_agreed < before.model  # the profile alone missed them
    assert headings == list(TITLES)
    fast = parse_pdf(path, ParseOptions(mode="fast", ocr=False))
    assert len([e for e in fast.elements if e.type == "heading"]) < len(TITLES)


@needs_model
def test_plain_prose_stays_on_heuristics(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = _write(tmp_path / "prose.pdf", (), bold_notice=False, sections=14)
    headings, explained = _parse(path, caplog)
    assert explained.route == "heuristic"
    assert explained.pages == (("heuristic:calibrated", 2),)
    assert explained.sampled == (1, 2)
    assert headings == []


@needs_model
def test_learnt_titles_and_outline_stay_on_heuristics(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path / "learnt.pdf", TITLES, bold_notice=False)
    headings, explained = _parse(path, caplog)
    assert explained.route == "heuristic" and not explained.confirmed
    assert headings == list(TITLES)
    outlined = _write(tmp_path / "outlined.pdf", TITLES, bold_notice=True)
    doc = pymupdf.open(outlined)
    found = [doc.load_page(i) for i in range(doc.page_count)]
    pages = {t: p.number + 1 for p in found for t in TITLES if p.search_for(t)}
    doc.set_toc([[1, t, pages[t]] for t in TITLES])
    doc.save(tmp_path / "outlined2.pdf")
    doc.close()
    headings, explained = _parse(tmp_path / "outlined2.pdf", caplog)
    assert explained.route == "heuristic" and explained.outline_trusted
    assert headings == list(TITLES)


def test_fast_mode_records_its_route_without_a_sample(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path / "fast.pdf", TITLES, bold_notice=False)
    _, explained = _parse(path, caplog, mode="fast")
    assert (explained.route, explained.reason, explained.sampled) == ("heuristic", "fast", ())
    assert explained.pages == (("heuristic:fast", 2),)


@needs_model
def test_a_page_range_takes_the_whole_documents_route(tmp_path: Path) -> None:
    path = _write(tmp_path / "plain.pdf", TITLES, False, title_font="helv", title_gap=24)
    with recorded_routes() as found:
        part = parse_pdf(path, ParseOptions(mode="auto", ocr=False, page_range=(2, 2)))
    (explained,) = found
    # The sample is the document's, not the range's: both parts of a fan-out agree.
    assert explained.route == "model" and explained.sampled == (1, 2)
    assert explained.pages == (("model:calibrated", 1),)
    assert {e.page for e in part.elements} == {2}
    assert (
        [e.text for e in part.elements if e.type == "heading"]
        == [t for t in TITLES if t in {e.text for e in part.elements}]
        != []
    )


def test_a_model_route_that_loses_outline_headings_is_refused() -> None:
    # Under a trusted outline the model route merged three of five outline-backed
    # headings away: it contradicts the outline, whatever it says about lists.
    classes = [
        ClassAgreement("section-header", model=2, model_agreed=2, heuristic=5, heuristic_agreed=2),
        ClassAgreement("list-item", model=50, model_agreed=10, heuristic=10, heuristic_agreed=10),
    ]
    route, reason = decide_document(classes, outline_trusted=True)
    assert route == "heuristic" and "contradicts the outline" in reason
    # Without the outline the same counts send the document to the model.
    assert decide_document(classes, outline_trusted=False)[0] == "model"
    kept = [ClassAgreement("section-header", heuristic=5, heuristic_agreed=5), classes[1]]
    assert decide_document(kept, outline_trusted=True)[0] == "model"

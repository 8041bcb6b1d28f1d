"""``auto`` mode routing: the layout model runs where the heuristics are unsure, not elsewhere.

The case it exists for: a short word-processor PDF whose section titles are
bold body-size lines (no numbering, no outline), in a document that also sets a
whole paragraph in bold, so the profile cannot learn "bold body size" as a heading
style. The heuristics leave the titles as paragraphs; ``auto`` must send those pages
to the layout model. Ordinary pages must stay on the heuristics.

The route of each page is read from the parser's DEBUG record (its ``routes``
attribute: ``"route:reason"`` -> pages).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pymupdf
import pytest

from chunkweave.parsers.document import ParseOptions
from chunkweave.parsers.pdf import parse_pdf
from chunkweave.parsers.pdf.model import model_available

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


def _write(path: Path, titles: tuple[str, ...], bold_notice: bool, sections: int = 8) -> Path:
    """Write sections of five prose lines, each under a bold 11 pt title (or none)."""
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
            put(titles[s], "hebo", 20)
        for line in _prose(s, 5):
            put(line)
        y += 16
    doc.save(path)
    return path


def _parse(path: Path, caplog: pytest.LogCaptureFixture) -> tuple[list[str], dict[str, list]]:
    """Parse in ``auto`` mode; return the heading texts and the per-page routes."""
    with caplog.at_level(logging.DEBUG, logger="chunkweave.parsers.pdf"):
        doc = parse_pdf(path, ParseOptions(mode="auto", ocr=False))
    records = [r for r in caplog.records if hasattr(r, "routes")]
    assert len(records) == 1
    headings = [e.text for e in doc.elements if e.type == "heading"]
    return headings, records[0].routes


@needs_model
def test_auto_escalates_unsure_bold_titles(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path / "class1.pdf", TITLES, bold_notice=True)
    headings, routes = _parse(path, caplog)
    # Every page holds a title the heuristics cannot type: all go to the model.
    assert routes == {"model:unsure headings": [1, 2]}
    assert headings == list(TITLES)
    fast = parse_pdf(path, ParseOptions(mode="fast", ocr=False))
    # The class as described: the heuristics alone find fewer (today none).
    assert len([e for e in fast.elements if e.type == "heading"]) < len(TITLES)


def test_auto_keeps_plain_prose_on_heuristics(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path / "prose.pdf", (), bold_notice=False, sections=14)
    headings, routes = _parse(path, caplog)
    assert routes == {"heuristic:plain": [1, 2]}
    assert headings == []


def test_auto_keeps_learnt_bold_titles_on_heuristics(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Without the bold paragraph the profile learns the bold titles' style: nothing unsure.
    path = _write(tmp_path / "learnt.pdf", TITLES, bold_notice=False)
    headings, routes = _parse(path, caplog)
    assert routes == {"heuristic:plain": [1, 2]}
    assert headings == list(TITLES)


def test_auto_trusts_the_outline(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # With an outline naming the titles the heuristics are sure: no escalation.
    path = _write(tmp_path / "outlined.pdf", TITLES, bold_notice=True)
    doc = pymupdf.open(path)
    pages = {t: p.number + 1 for p in doc for t in TITLES if p.search_for(t)}
    doc.set_toc([[1, t, pages[t]] for t in TITLES])
    doc.save(tmp_path / "outlined2.pdf")
    doc.close()
    headings, routes = _parse(tmp_path / "outlined2.pdf", caplog)
    assert routes == {"heuristic:plain": [1, 2]}
    assert headings == list(TITLES)

"""Native pages whose text runs up or down the page: a landscape page set on a portrait one."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from chunkweave.parsers.document import ParseOptions
from chunkweave.parsers.pdf import parse_pdf

EXTRA = Path(__file__).resolve().parents[2] / "shared" / "corpus-extra"

_PARAS = [
    "Landscape pages hold the wide tables of a report and the prose around them.",
    "Their text is drawn along the height of a portrait page, and the page's rotation "
    "turns it upright for the reader.",
    "None of these sentences may go missing from the parse.",
]


def _landscape(path: Path, rotate: int | None) -> Path:
    """One portrait page whose title and paragraphs run up the page (``/Rotate`` ``rotate``)."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    # rotate=90: each line runs up the page; the next line sits to its right.
    page.insert_text((80, 720), "Turned Report", fontsize=20, rotate=90)
    x = 130.0
    for para in _PARAS:
        words, line = para.split(), ""
        for word in words:
            if pymupdf.get_text_length(f"{line} {word}", fontsize=10) > 620:
                page.insert_text((x, 720), line, fontsize=10, rotate=90)
                x, line = x + 13, word
            else:
                line = f"{line} {word}".strip()
        page.insert_text((x, 720), line, fontsize=10, rotate=90)
        x += 26
    if rotate is not None:
        page.set_rotation(rotate)
    doc.save(path)
    return path


@pytest.mark.parametrize("rotate", [90, None])
def test_a_page_set_sideways_reads_upright_and_whole(tmp_path: Path, rotate: int | None) -> None:
    path = _landscape(tmp_path / "turned.pdf", rotate)
    for mode in ("fast", "auto"):
        doc = parse_pdf(path, ParseOptions(mode=mode))
        text = " ".join(e.text for e in doc.elements)
        for para in _PARAS:
            assert para in text, (mode, text[:300])
        # In reading order: the title first, then the paragraphs as they follow.
        assert text.index("Turned Report") < text.index(_PARAS[0]) < text.index(_PARAS[2])
        # Boxes stay in the page's own coordinates, where the (upward) text is drawn.
        first = next(e for e in doc.elements if _PARAS[0][:30] in e.text)
        x0, y0, x1, y1 = first.bbox or (0, 0, 0, 0)
        assert 110 <= x0 < x1 <= 200 and y1 - y0 > x1 - x0 and y1 <= 792


def test_a_margin_stamp_does_not_turn_a_page(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    for i in range(12):
        page.insert_text((72, 100 + 14 * i), f"Line {i} of the ordinary horizontal body text.")
    page.insert_text((560, 600), "DRAFT COPY", fontsize=8, rotate=90)
    path = tmp_path / "stamp.pdf"
    doc.save(path)
    parsed = parse_pdf(path, ParseOptions(mode="fast"))
    text = " ".join(e.text for e in parsed.elements)
    assert "Line 0 of the ordinary" in text and "Line 11 of the ordinary" in text
    assert "DRAFT" not in text  # rotated marginalia stay out of the flow, as before


def test_public_landscape_pages_keep_their_prose() -> None:
    """Scheherazade-features: 9 landscape pages (/Rotate 90, text running up the page)."""
    path = EXTRA / "Scheherazade-features.pdf"
    if not path.exists():
        pytest.skip("corpus-extra not available")
    doc = parse_pdf(path, ParseOptions(mode="auto"))
    pages = {e.page for e in doc.elements}
    assert pages == set(range(1, 10))  # before, pages 1 and 4-9 gave nothing
    text = " ".join(e.text for e in doc.elements)
    assert "The Scheherazade font includes a number of optional features" in text

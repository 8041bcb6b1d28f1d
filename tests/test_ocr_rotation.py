"""Scans whose image is turned, or whose /Rotate disagrees with the image, OCR to the same words.

The scan is made here: a page of text rendered to an image, placed on image-only
PDF pages turned by 0/90/180/270 degrees (``/Rotate 0``, like a fax fed sideways),
and on pages whose ``/Rotate`` compensates for, or disagrees with, the image.
"""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.parsers.pdf import ocr as pdf_ocr
from chunkweave.parsers.pdf import orientation
from chunkweave.parsers.pdf.ocr import plausibility, tessdata_dir

pytestmark = pytest.mark.skipif(tessdata_dir("eng") is None, reason="Tesseract eng data missing")

LINES = (
    "Quarterly maintenance report for the northern water district",
    "The pumping station replaced two valves and inspected every filter",
    "Customers reported fewer outages than during the previous winter",
    "Next quarter the crew will repaint the reservoir and test alarms",
)
WORDS = {w.lower() for line in LINES for w in line.split() if len(w) > 3}


def _scan_png(tmp_path: Path) -> Path:
    """Render the text page to a PNG at 150 dpi: the "scan"."""
    doc = pymupdf.open()
    page = doc.new_page(width=460, height=200)
    for i, line in enumerate(LINES):
        page.insert_text((20, 40 + 36 * i), line, fontsize=13)
    png = tmp_path / "scan.png"
    png.write_bytes(page.get_pixmap(dpi=150).tobytes("png"))
    return png


def _scanned_pdf(tmp_path: Path, layouts: list[tuple[int, int]]) -> Path:
    """One image-only page per ``(image turn, page /Rotate)`` pair."""
    png = _scan_png(tmp_path)
    doc = pymupdf.open()
    for turn, rotate in layouts:
        # The image turned by ``turn``; the page box fits the turned image.
        w, h = (460, 200) if turn in (0, 180) else (200, 460)
        page = doc.new_page(width=w, height=h)
        page.insert_image(page.rect, filename=str(png), rotate=turn)
        page.set_rotation(rotate)
    path = tmp_path / "scan.pdf"
    doc.save(str(path))
    return path


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]{4,}", text)}


def _page_words(path: Path) -> dict[int, set[str]]:
    parsed = parse_document(path, ParseOptions(ocr=True, mode="fast"))
    assert not any("no text" in w for w in parsed.warnings), parsed.warnings
    pages: dict[int, set[str]] = {}
    for el in parsed.elements:
        pages.setdefault(el.page or 0, set()).update(_words(el.text))
    return pages


def _assert_reads(words: set[str]) -> None:
    found = words & WORDS
    assert len(found) >= 0.9 * len(WORDS), sorted(WORDS - words)


def test_scan_turned_0_90_180_270_ocrs_to_the_same_words(tmp_path: Path) -> None:
    path = _scanned_pdf(tmp_path, [(0, 0), (90, 0), (180, 0), (270, 0)])
    pages = _page_words(path)
    assert sorted(pages) == [1, 2, 3, 4]
    for words in pages.values():
        _assert_reads(words)
    upright = pages[1] & WORDS
    for page_no in (2, 3, 4):
        # The same words, not merely enough of them.
        assert len(upright ^ (pages[page_no] & WORDS)) <= 2


def test_rotate_that_disagrees_with_the_image(tmp_path: Path) -> None:
    # Page 1: /Rotate 90 undoes an image turned 270 (upright on screen, like the
    # skewed corpus scan). Page 2: /Rotate 90 on an upright image (sideways on screen).
    path = _scanned_pdf(tmp_path, [(270, 90), (0, 90)])
    pages = _page_words(path)
    _assert_reads(pages[1])
    _assert_reads(pages[2])


def test_without_orientation_detection_the_four_turns_are_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(orientation, "osd_available", lambda tessdata: False)
    path = _scanned_pdf(tmp_path, [(180, 0)])
    page = pymupdf.open(path)[0]
    result = pdf_ocr.ocr_page(page, "eng")
    assert result.rotation == 180 and result.tried == (0, 90, 180, 270)
    assert result.how == "vote" and "best of the turns" in (result.note or "")
    assert result.note is not None and "languages tried: eng" in result.note
    _assert_reads(_words(result.textpage.extractText()))


def test_missing_language_is_named_and_the_rest_used(tmp_path: Path) -> None:
    path = _scanned_pdf(tmp_path, [(0, 0)])
    page = pymupdf.open(path)[0]
    result = pdf_ocr.ocr_page(page, "eng+xyz")
    assert result.languages == ("eng",) and result.missing == ("xyz",)
    assert result.note is not None and "no Tesseract data for xyz" in result.note
    _assert_reads(_words(result.textpage.extractText()))


def test_page_warnings_say_which_languages_and_turns_were_tried(tmp_path: Path) -> None:
    path = _scanned_pdf(tmp_path, [(0, 0), (90, 0)])  # upright, then turned in the image
    doc = parse_document(path, ParseOptions(ocr_language="eng+xyz"))
    by_page = {int(w.split(":")[0].split()[1]): w for w in doc.warnings}
    assert "no Tesseract data for xyz" in by_page[1] and "languages tried: eng" in by_page[1]
    assert "turned" in by_page[2] and "orientation detection" in by_page[2], by_page[2]


def test_plausibility_tells_words_from_garbage() -> None:
    words, chars = plausibility("The pumping station replaced two valves")
    assert words == chars
    # Read from a turned scan in the extra corpus (cardinal.pdf, page 4, as displayed).
    garbage = "2 = Pt g : > oO 2 202 S ae # ae ¢€ & 3 a £55 8, Baik %E2Es. = p g 2% 2 o a Z e32¢"
    words, chars = plausibility(garbage)
    assert words < 0.5 * chars
    words, chars = plausibility("北京大学 中文 مرحبا بالعالم")
    assert words == chars

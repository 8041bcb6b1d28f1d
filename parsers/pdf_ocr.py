"""OCR for pages without a text layer, through PyMuPDF's Tesseract binding.

A page *needs* OCR when it has (almost) no extractable text but shows images:
a scan, or a scanned clipping pasted on an otherwise empty page. OCR runs only
when enabled and Tesseract's language data can be found (``TESSDATA_PREFIX``,
PyMuPDF's own lookup, or the Debian ``tesseract-ocr`` data directory); otherwise
the caller records a warning.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pymupdf

#: Rendering resolution for OCR; 300 dpi is Tesseract's sweet spot, 200 is faster
#: and enough for body text.
OCR_DPI = 200
#: A page with no text but images covering this share of it is image-only (a scan
#: may be a small clipping, e.g. one table).
MIN_IMAGE_COVER = 0.02


def image_cover(page: pymupdf.Page) -> float:
    """Share of the page area covered by images (capped at 1)."""
    area = abs(page.rect) or 1.0
    covered = 0.0
    for info in page.get_image_info():
        covered += abs(pymupdf.Rect(info["bbox"]) & page.rect)
    return min(covered / area, 1.0)


def looks_scanned(page: pymupdf.Page, text_chars: int) -> bool:
    """Return True when the page has no real text layer but large images."""
    return text_chars < 20 and image_cover(page) >= MIN_IMAGE_COVER


@functools.cache
def tessdata_dir(language: str) -> str | None:
    """Directory holding ``<language>.traineddata``, or None when OCR is unavailable."""
    candidates: list[str] = []
    if env := os.environ.get("TESSDATA_PREFIX"):
        candidates.append(env)
    try:
        found = pymupdf.get_tessdata()
    except (RuntimeError, OSError):
        found = None
    if found:
        candidates.append(str(found))
    candidates.extend(str(p) for p in sorted(Path("/usr/share/tesseract-ocr").glob("*/tessdata")))
    for cand in candidates:
        first = language.split("+")[0]
        if (Path(cand) / f"{first}.traineddata").is_file():
            return cand
    return None


def ocr_textpage(page: pymupdf.Page, language: str) -> pymupdf.TextPage:
    """Run Tesseract over the rendered page and return the resulting TextPage.

    Raises RuntimeError when OCR is unavailable or fails.
    """
    tessdata = tessdata_dir(language)
    if tessdata is None:
        raise RuntimeError(f"Tesseract language data for {language!r} not found")
    return page.get_textpage_ocr(language=language, dpi=OCR_DPI, full=True, tessdata=tessdata)

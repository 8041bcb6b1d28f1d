"""OCR for pages without a text layer, through PyMuPDF's Tesseract binding.

A page *needs* OCR when it has (almost) no extractable text but shows images:
a scan, or a scanned clipping pasted on an otherwise empty page. OCR runs only
when enabled and Tesseract's language data can be found (``TESSDATA_PREFIX``,
PyMuPDF's own lookup, or the Debian ``tesseract-ocr`` data directory); otherwise
the caller records a warning.

Orientation. The page is rendered as it is displayed (its ``/Rotate`` applied)
and the recognised text is placed in that displayed frame, horizontal, so a
``/Rotate 90`` scan whose image is upright on screen reads like any other page.
Scans whose *image* is turned (a fax fed sideways, a page scanned upside down)
read as garbage at first: when the first pass yields too little plausible text
(:func:`plausibility`), Tesseract's orientation detection (``tesseract --psm 0``,
the CLI, when installed with its ``osd`` data) names the turn, and without it the
three other quarter turns are tried. A turned reading replaces the displayed one
only if it reads as text; the most plausible such reading wins. Its text is
placed in the displayed frame too, scaled to fit the page, so line positions are
approximate but lines stay horizontal and inside the page. Small skew is left to
Tesseract's own layout analysis, which straightens lines of a few degrees (the
skewed ``/Rotate 90`` scan of the extra corpus reads as well as an unskewed one).

Languages are Tesseract's ``+``-joined codes (``ParseOptions.ocr_language``, e.g.
``eng+kor``). Each needs its ``<code>.traineddata``: on Debian
``apt-get install tesseract-ocr-kor`` (``-chi-sim``, ``-ara``, ``-rus``...), or
drop the file into ``$TESSDATA_PREFIX``. Requested languages without data are
left out and named in :attr:`OcrResult.note`.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import weakref
from dataclasses import dataclass
from pathlib import Path

import pymupdf

#: Rendering resolution for OCR; 300 dpi is Tesseract's sweet spot, 200 is faster
#: and enough for body text.
OCR_DPI = 200
#: A page with no text but images covering this share of it is image-only (a scan
#: may be a small clipping, e.g. one table).
MIN_IMAGE_COVER = 0.02
#: A reading counts as text when letters forming plausible words make up this share
#: of its characters. Upright pages of the extra corpus score 0.8 or more, the same
#: pages turned by a quarter or half turn 0.55 or less.
PLAUSIBLE_SHARE = 0.65
#: Below this many characters in plausible words a reading is "little text".
MIN_WORD_CHARS = 40
_QUARTER_TURNS = (0, 90, 180, 270)
_OSD_TIMEOUT_S = 60
_OSD_ROTATE = re.compile(r"^Rotate:\s*(\d+)", re.MULTILINE)
_OSD_CONFIDENCE = re.compile(r"^Orientation confidence:\s*([\d.]+)", re.MULTILINE)
#: Orientation detection below this confidence is a guess: all turns are tried instead.
_OSD_MIN_CONFIDENCE = 2.0
_LETTER_RUN = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class OcrResult:
    """The best OCR reading of one page and how it was obtained.

    ``rotation`` is the quarter turn (degrees, counter-clockwise) applied to the
    displayed page before the winning pass; ``tried`` lists every turn tried, in
    order. ``languages`` were used; ``missing`` were requested but have no data.
    ``word_chars`` / ``chars`` is the reading's :func:`plausibility`.
    """

    textpage: pymupdf.TextPage
    rotation: int
    tried: tuple[int, ...]
    orientation_detected: bool
    languages: tuple[str, ...]
    missing: tuple[str, ...]
    word_chars: int
    chars: int

    @property
    def note(self) -> str | None:
        """Return one sentence for the page's warning when the reading was not plain."""
        parts = []
        if self.chars == 0:
            parts.append("OCR found no text")
        else:
            if self.rotation:
                how = "orientation detection" if self.orientation_detected else "best of the turns"
                parts.append(f"OCR read the image turned {self.rotation} degrees ({how})")
            if not _reads_as_text((self.word_chars, self.chars)):
                share = round(100 * self.word_chars / self.chars)
                parts.append(f"OCR text looks unreliable ({share}% of it in words)")
        if self.missing:
            parts.append(f"no Tesseract data for {'+'.join(self.missing)}")
        if not parts:
            return None
        turns = "/".join(str(t) for t in self.tried)
        return f"{'; '.join(parts)} (languages tried: {'+'.join(self.languages)}; turns: {turns})"


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


def split_languages(language: str) -> list[str]:
    """Return the Tesseract codes of a ``+``-joined language string, in order."""
    return [code for code in (c.strip() for c in language.split("+")) if code]


@functools.cache
def tessdata_dir(language: str) -> str | None:
    """Directory holding the most of the ``language`` codes' data, or None if none has any."""
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
    codes = split_languages(language)
    best, best_count = None, 0
    for cand in candidates:
        count = sum((Path(cand) / f"{code}.traineddata").is_file() for code in codes)
        if count > best_count:
            best, best_count = cand, count
    return best


def plausibility(text: str) -> tuple[int, int]:
    """Return ``(word_chars, chars)`` of an OCR reading.

    ``chars`` counts non-space characters; ``word_chars`` the letters in runs of two
    or more that are cased like words (lower, Capitalised or UPPER) or belong to an
    uncased script (CJK, Arabic...). Text read from a turned image is mostly
    punctuation, digits and mixed-case fragments.
    """
    chars = sum(1 for c in text if not c.isspace())
    words = 0
    for run in _LETTER_RUN.findall(text):
        if len(run) < 2:
            continue
        uncased = not any(c.isupper() or c.islower() for c in run)
        if uncased or run.islower() or run.isupper() or run.istitle():
            words += len(run)
    return words, chars


def ocr_page(page: pymupdf.Page, language: str) -> OcrResult:
    """OCR ``page`` as displayed, turning its image when that reads better (module doc).

    Raises RuntimeError when no requested language has data or Tesseract fails.
    """
    tessdata = tessdata_dir(language)
    codes = split_languages(language)
    if tessdata is None or not codes:
        raise RuntimeError(f"Tesseract language data for {language!r} not found")
    have = tuple(c for c in codes if (Path(tessdata) / f"{c}.traineddata").is_file())
    missing = tuple(c for c in codes if c not in have)
    langs = "+".join(have)
    readings: dict[int, tuple[pymupdf.TextPage, tuple[int, int]]] = {}

    def read(turn: int) -> tuple[int, int]:
        if turn not in readings:
            readings[turn] = _ocr_turned(page, turn, langs, tessdata)
        return readings[turn][1]

    detected = False
    if not _reads_as_text(read(0)):
        if osd_available(tessdata):
            turn = detect_turn(page, tessdata)
            detected = turn is not None
            if turn:
                read(turn)
        else:
            for other in _QUARTER_TURNS[1:]:
                read(other)
    # The page as displayed is the default; a turned reading replaces it only when
    # it reads as text (a chart or a wrong language reads as garbage every way).
    turned = [t for t in readings if t and _reads_as_text(readings[t][1])]
    best = max(turned, key=lambda t: readings[t][1][0]) if turned else 0
    textpage, (words, chars) = readings[best]
    return OcrResult(
        textpage=textpage,
        rotation=best,
        tried=tuple(readings),
        orientation_detected=detected and best != 0,
        languages=have,
        missing=missing,
        word_chars=words,
        chars=chars,
    )


def osd_available(tessdata: str) -> bool:
    """Tell whether the ``tesseract`` command and its ``osd`` data are installed."""
    return shutil.which("tesseract") is not None and (Path(tessdata) / "osd.traineddata").is_file()


def detect_turn(page: pymupdf.Page, tessdata: str) -> int | None:
    """Return the quarter turn that makes the displayed page upright, per Tesseract OSD.

    ``None`` when orientation detection is unavailable (:func:`osd_available`), fails
    (too few characters) or is unsure.
    """
    exe = shutil.which("tesseract")
    if exe is None or not osd_available(tessdata):
        return None
    # At the OCR resolution: at 100 dpi detection misses 13 pt text and its
    # confidence on real pages drops to the level of charts' (measured).
    png = page.get_pixmap(dpi=OCR_DPI, alpha=False).tobytes("png")
    try:
        proc = subprocess.run(
            [exe, "-", "-", "--psm", "0", "--tessdata-dir", tessdata],
            input=png,
            capture_output=True,
            timeout=_OSD_TIMEOUT_S,
            check=False,
            env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = proc.stdout.decode("utf-8", "replace")
    rotate, confidence = _OSD_ROTATE.search(out), _OSD_CONFIDENCE.search(out)
    if proc.returncode != 0 or rotate is None or confidence is None:
        return None
    turn = int(rotate.group(1)) % 360
    if turn not in _QUARTER_TURNS or float(confidence.group(1)) < _OSD_MIN_CONFIDENCE:
        return None
    return turn


def _reads_as_text(score: tuple[int, int]) -> bool:
    words, chars = score
    return words >= MIN_WORD_CHARS and words >= PLAUSIBLE_SHARE * chars


def _ocr_turned(
    page: pymupdf.Page, turn: int, languages: str, tessdata: str
) -> tuple[pymupdf.TextPage, tuple[int, int]]:
    # Render the displayed page turned by ``turn`` degrees, OCR it into a one-page
    # PDF, and read that page's text scaled (uniformly) to fit the displayed page.
    zoom = OCR_DPI / 72
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom).prerotate(turn), alpha=False)
    data = pix.pdfocr_tobytes(compress=False, language=languages, tessdata=tessdata)
    ocr = pymupdf.open("pdf", data).load_page(0)
    scale = min(page.rect.width / ocr.rect.width, page.rect.height / ocr.rect.height)
    textpage = ocr.get_textpage(flags=0, matrix=pymupdf.Matrix(scale, scale))
    # Associate the TextPage with the page it describes (PyMuPDF checks this).
    textpage.parent = weakref.proxy(page)
    return textpage, plausibility(textpage.extractText())

"""OCR for pages without a text layer, through PyMuPDF's Tesseract binding.

A page *needs* OCR when it has (almost) no extractable text but shows images:
a scan, or a scanned clipping pasted on an otherwise empty page. OCR runs only
when enabled and Tesseract's language data can be found (``TESSDATA_PREFIX``,
PyMuPDF's own lookup, or the Debian ``tesseract-ocr`` data directory); otherwise
the caller records a warning.

Orientation. The page's orientation is detected *before* OCR
(:func:`~chunkweave.parsers.pdf.orientation.detect_turn`: Tesseract's orientation
detection, or without it the most plausible reading of the four quarter turns of a
downscaled render), and the page is OCRed once, in its
:class:`~chunkweave.parsers.pdf.orientation.ReadingFrame` (displayed, then turned
upright), where its lines run left to right. The frame maps every box back to the
page's coordinates exactly (a quarter turn and a translation), so regions land on
the words in the page however its image and ``/Rotate`` are turned. Small skew is
left to Tesseract's own layout analysis, which straightens lines of a few degrees
(the skewed ``/Rotate 90`` scan of the extra corpus reads as well as an unskewed
one). A turned reading that does not read as text (:func:`plausibility`) gives way
to the page read as displayed.

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
import weakref
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from chunkweave.parsers.pdf.orientation import (
    QUARTER_TURNS,
    VOTE_DPI,
    ReadingFrame,
    detect_turn,
)
from chunkweave.parsers.pdf.text import TEXT_FLAGS

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
#: A scan whose own text layer holds this many characters (in any direction) is read
#: from it, not OCRed: the same count below which a page's lines make it a scan.
MIN_LAYER_CHARS = 20
_LETTER_RUN = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class OcrResult:
    """The OCR reading of one page and how it was obtained.

    ``textpage`` holds the text in ``frame`` (the page turned upright: its lines run
    left to right); ``frame.to_page`` maps its boxes onto the page. ``rotation`` is
    ``frame.turn``, the quarter turn applied to the displayed page; ``how`` says who
    chose it (``osd``, ``vote`` or ``none``, see
    :class:`~chunkweave.parsers.pdf.orientation.Orientation`); ``tried`` lists the
    turns read, in order. ``languages`` were used; ``missing`` were requested but
    have no data. ``word_chars`` / ``chars`` is the reading's :func:`plausibility`.
    """

    textpage: pymupdf.TextPage
    frame: ReadingFrame
    how: str
    tried: tuple[int, ...]
    languages: tuple[str, ...]
    missing: tuple[str, ...]
    word_chars: int
    chars: int

    @property
    def rotation(self) -> int:
        """Return the quarter turn (degrees) the page was read in."""
        return self.frame.turn

    @property
    def note(self) -> str | None:
        """Return one sentence for the page's warning when the reading was not plain."""
        parts = []
        if self.chars == 0:
            parts.append("OCR found no text")
        else:
            if self.rotation:
                how = "orientation detection" if self.how == "osd" else "best of the turns"
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


def text_layer(page: pymupdf.Page) -> tuple[pymupdf.TextPage, ReadingFrame] | None:
    """Return a scan's own text layer, read in the frame where its lines run left to right.

    A scan may carry an invisible OCR text layer (render mode 3) already, set in the
    page's frame however the image is turned: a ``/Rotate 270`` scan's text runs up
    the unrotated page. Its lines are read in the :class:`ReadingFrame` that turns the
    direction most of its characters run in to left-to-right, instead of OCRing the
    image again. None when the layer holds fewer than :data:`MIN_LAYER_CHARS`.
    """
    weights = _directions(page)
    if sum(weights.values()) < MIN_LAYER_CHARS:
        return None
    return _upright(page, max(weights, key=lambda k: weights[k]))


def turned_text(page: pymupdf.Page) -> tuple[pymupdf.TextPage, ReadingFrame] | None:
    """Return a page's text read upright when most of it runs up or down the page.

    A landscape page set on a portrait one (its ``/Rotate`` turns it for display, or
    nothing does) draws its text along the page's height; read as it stands, its
    visual lines would be the few horizontal ones. None when most characters run
    left to right, or the page holds fewer than :data:`MIN_LAYER_CHARS`.
    """
    weights = _directions(page)
    total = sum(weights.values())
    way = max(weights, key=lambda k: weights[k]) if weights else (1, 0)
    if total < MIN_LAYER_CHARS or way == (1, 0) or 2 * weights[way] <= total:
        return None
    return _upright(page, way)


def _directions(page: pymupdf.Page) -> dict[tuple[int, int], int]:
    """Characters of the page's own text per direction its lines run (rounded unit vector)."""
    own = page.get_textpage(flags=TEXT_FLAGS)
    weights: dict[tuple[int, int], int] = {}
    for block in page.get_text("dict", textpage=own).get("blocks", ()):
        for line in block.get("lines", ()):
            ux, uy = line.get("dir", (1.0, 0.0))
            way = (round(ux), round(uy))
            n = sum(len(sp["text"].strip()) for sp in line.get("spans", ()))
            weights[way] = weights.get(way, 0) + n
    return weights


def _upright(
    page: pymupdf.Page, way: tuple[int, int]
) -> tuple[pymupdf.TextPage, ReadingFrame] | None:
    """Return the page's text in the frame where direction ``way`` runs left to right."""
    ux, uy = way
    for turn in QUARTER_TURNS:
        frame = ReadingFrame.of(page, turn)
        m = frame.matrix
        if ux * m.a + uy * m.c > 0.9:  # the direction, turned by the frame, runs along x
            # Clipped to the page as the frame sees it (MuPDF's own clip would
            # apply the unturned page's box to the turned coordinates).
            textpage = page.get_textpage(clip=frame.rect, flags=TEXT_FLAGS, matrix=frame.matrix)
            return textpage, frame
    return None


def ocr_page(page: pymupdf.Page, language: str) -> OcrResult:
    """OCR ``page`` once, in the orientation detected first (module doc).

    Raises RuntimeError when no requested language has data or Tesseract fails.
    """
    tessdata = tessdata_dir(language)
    codes = split_languages(language)
    if tessdata is None or not codes:
        raise RuntimeError(f"Tesseract language data for {language!r} not found")
    have = tuple(c for c in codes if (Path(tessdata) / f"{c}.traineddata").is_file())
    missing = tuple(c for c in codes if c not in have)
    langs = "+".join(have)

    def vote(turn: int) -> tuple[int, int]:
        _, score = read_in_frame(page, ReadingFrame.of(page, turn), langs, tessdata, VOTE_DPI)
        return score

    orientation = detect_turn(page, tessdata, vote, _reads_as_text)
    tried = [orientation.turn] if orientation.how != "vote" else list(QUARTER_TURNS)
    frame = ReadingFrame.of(page, orientation.turn)
    textpage, (words, chars) = read_in_frame(page, frame, langs, tessdata)
    if frame.turn and not _reads_as_text((words, chars)):
        # A turned reading must read as text to replace the page as displayed (a
        # chart or a wrong language reads as garbage every way).
        upright = ReadingFrame.of(page, 0)
        shown, (w0, c0) = read_in_frame(page, upright, langs, tessdata)
        if orientation.how != "vote":
            tried.append(0)
        if w0 >= words:
            frame, textpage, words, chars = upright, shown, w0, c0
    return OcrResult(
        textpage=textpage,
        frame=frame,
        how=orientation.how if frame.turn else "none",
        tried=tuple(tried),
        languages=have,
        missing=missing,
        word_chars=words,
        chars=chars,
    )


def read_in_frame(
    page: pymupdf.Page, frame: ReadingFrame, languages: str, tessdata: str, dpi: float = OCR_DPI
) -> tuple[pymupdf.TextPage, tuple[int, int]]:
    """OCR ``page`` rendered in ``frame``; return its text (in frame points) and plausibility."""
    pix = frame.render(page, dpi)
    data = pix.pdfocr_tobytes(compress=False, language=languages, tessdata=tessdata)
    ocr = pymupdf.open("pdf", data).load_page(0)
    # The OCR page is the pixmap at its own resolution: scale it onto the frame.
    scale = pymupdf.Matrix(frame.rect.width / ocr.rect.width, frame.rect.height / ocr.rect.height)
    textpage = ocr.get_textpage(flags=0, matrix=scale)
    # Associate the TextPage with the page it describes (PyMuPDF checks this).
    textpage.parent = weakref.proxy(page)
    return textpage, plausibility(textpage.extractText())


def _reads_as_text(score: tuple[int, int]) -> bool:
    words, chars = score
    return words >= MIN_WORD_CHARS and words >= PLAUSIBLE_SHARE * chars

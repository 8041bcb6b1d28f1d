"""Which way up a scanned page reads, and the frame its text is read in.

A scan's image may be turned against the page's ``/Rotate`` (a fax fed sideways, a
page scanned upside down, a ``/Rotate`` that undoes or disagrees with the image).
:func:`detect_turn` names the quarter turn that makes the *displayed* page (its
``/Rotate`` applied) upright, before any OCR:

1. Tesseract's orientation and script detection (``tesseract --psm 0``, the CLI with
   its ``osd`` data; Debian's ``tesseract-ocr`` depends on ``tesseract-ocr-osd``);
   when it is unsure (too few characters, a photo or chart) the page is read as
   displayed;
2. when it is not installed: a vote, the most plausible OCR reading
   (:func:`~chunkweave.parsers.pdf.ocr.plausibility`) of the four quarter turns of a
   downscaled render (:data:`VOTE_DPI`), which costs about as much as one OCR pass
   at full resolution (orientation detection: a few seconds a page).

The text is then read in a :class:`ReadingFrame`, the displayed page turned upright,
where its lines run left to right and every classifier works as on any page; each
element's box is mapped back to PyMuPDF's page frame (the unrotated page, the frame
of :attr:`~chunkweave.parsers.elements.Element.bbox` and of chunk regions) by
:meth:`ReadingFrame.to_page`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pymupdf

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.geometry import BBox

QUARTER_TURNS = (0, 90, 180, 270)
#: Orientation detection renders at this resolution: at 100 dpi its confidence on
#: real pages of the extra corpus falls to 4-8, at 150 dpi it is 11-25 (charts,
#: photos and stamps: below 2), for a cost that hardly depends on the resolution.
OSD_DPI = 150
#: The fallback vote reads each turn at this resolution: on the extra corpus's scans
#: the upright turn reads 1.6-8x the word characters of any other turn.
VOTE_DPI = 72
#: Orientation detection below this confidence is a guess: the page stays as displayed.
OSD_MIN_CONFIDENCE = 2.0
#: A page is never rendered larger than this: a page drawn 200 inches square would
#: take 10 GB at 300 dpi. 40 million pixels hold an A2 page at 300 dpi; larger pages
#: are rendered at the resolution that fits (OCR and orientation read the image in
#: the page's own points, whatever its resolution).
MAX_RENDER_PIXELS = 40_000_000
_OSD_TIMEOUT_S = 60
_OSD_ROTATE = re.compile(r"^Rotate:\s*(\d+)", re.MULTILINE)
_OSD_CONFIDENCE = re.compile(r"^Orientation confidence:\s*([\d.]+)", re.MULTILINE)

How = Literal["osd", "vote", "none"]


@dataclass(frozen=True)
class ReadingFrame:
    """The page turned so that it reads upright: displayed, then turned ``turn`` degrees.

    ``matrix`` maps PyMuPDF's page coordinates (the unrotated page) onto the frame,
    whose rectangle ``rect`` starts at ``(0, 0)``; ``turn`` follows PyMuPDF's
    ``Matrix(degrees)`` (clockwise on screen, like ``/Rotate``).
    """

    turn: int
    matrix: pymupdf.Matrix
    rect: pymupdf.Rect

    @classmethod
    def of(cls, page: pymupdf.Page, turn: int) -> ReadingFrame:
        """Return the frame of ``page`` displayed and then turned by ``turn`` degrees."""
        m = page.rotation_matrix * pymupdf.Matrix(turn)
        r = (page.rect * page.derotation_matrix) * m
        m = m * pymupdf.Matrix(1, 0, 0, 1, -r.x0, -r.y0)
        return cls(turn=turn, matrix=m, rect=pymupdf.Rect(0, 0, r.width, r.height))

    @property
    def is_page(self) -> bool:
        """Tell whether the frame is the page's own (no ``/Rotate``, no turn)."""
        m = self.matrix
        values = (m.a, m.b, m.c, m.d, m.e, m.f)
        return all(abs(v - w) < 1e-6 for v, w in zip(values, (1, 0, 0, 1, 0, 0), strict=True))

    def to_page(self, bbox: BBox) -> BBox:
        """Map a box of the frame onto the page's coordinates."""
        r = pymupdf.Rect(bbox) * ~self.matrix
        return (r.x0, r.y0, r.x1, r.y1)

    def from_page(self, bbox: BBox) -> BBox:
        """Map a box of the page's coordinates into the frame."""
        r = pymupdf.Rect(bbox) * self.matrix
        return (r.x0, r.y0, r.x1, r.y1)

    def element_to_page(self, el: Element) -> Element:
        """Return ``el`` with its boxes in the page's coordinates."""
        return self._mapped(el, self.to_page)

    def element_from_page(self, el: Element) -> Element:
        """Return ``el``, boxed in the page's coordinates, with its boxes in the frame."""
        return self._mapped(el, self.from_page)

    def _mapped(self, el: Element, move: Callable[[BBox], BBox]) -> Element:
        if self.is_page or el.bbox is None:
            return el
        continued = tuple((p, move(b)) for p, b in el.continued)
        return el.model_copy(update={"bbox": move(el.bbox), "continued": continued})

    def render(self, page: pymupdf.Page, dpi: float, gray: bool = False) -> pymupdf.Pixmap:
        """Render the page in this frame: pixel ``(x, y)`` is frame point ``(x, y) * zoom``.

        ``zoom`` is ``dpi / 72``, lowered so the image holds at most
        :data:`MAX_RENDER_PIXELS` (read it back as ``pixmap.width / frame.rect.width``).
        """
        zoom = min(dpi / 72, _bounded_zoom(self.rect.width, self.rect.height))
        matrix = pymupdf.Matrix(self.turn) * pymupdf.Matrix(zoom, zoom)
        cs = pymupdf.csGRAY if gray else pymupdf.csRGB
        return page.get_pixmap(matrix=matrix, colorspace=cs, alpha=False)


def _bounded_zoom(width: float, height: float) -> float:
    """Return the largest zoom at which a ``width`` x ``height`` page fits the bound.

    MuPDF rounds each side up to a whole pixel, so it solves
    ``(width * z + 1) * (height * z + 1) <= MAX_RENDER_PIXELS`` for ``z``.
    """
    w, h = max(width, 1.0), max(height, 1.0)
    b = w + h
    return (-b + (b * b + 4 * w * h * (MAX_RENDER_PIXELS - 1)) ** 0.5) / (2 * w * h)


@dataclass(frozen=True)
class Orientation:
    """The turn that makes a displayed page upright, and how it was found.

    ``how`` is ``osd`` (Tesseract's detection, ``confidence`` its score), ``vote``
    (the most plausible reading of the four turns, ``scores`` the word characters
    each turn read) or ``none`` (detection unsure, or no turn read as text: the
    page as displayed).
    """

    turn: int
    how: How
    confidence: float = 0.0
    scores: tuple[tuple[int, int], ...] = ()


def osd_available(tessdata: str) -> bool:
    """Tell whether the ``tesseract`` command and its ``osd`` data are installed."""
    return shutil.which("tesseract") is not None and (Path(tessdata) / "osd.traineddata").is_file()


def osd_turn(page: pymupdf.Page, tessdata: str) -> tuple[int, float] | None:
    """Return Tesseract's ``(turn, confidence)`` for the displayed page.

    ``None`` when orientation detection is unavailable (:func:`osd_available`) or
    fails (too few characters, a timeout).
    """
    exe = shutil.which("tesseract")
    if exe is None or not osd_available(tessdata):
        return None
    png = ReadingFrame.of(page, 0).render(page, OSD_DPI, gray=True).tobytes("png")
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
    if turn not in QUARTER_TURNS:
        return None
    return turn, float(confidence.group(1))


def detect_turn(
    page: pymupdf.Page,
    tessdata: str,
    score: Callable[[int], tuple[int, int]],
    reads: Callable[[tuple[int, int]], bool],
) -> Orientation:
    """Return the quarter turn that makes the displayed page upright (module doc).

    With orientation detection installed its answer is taken when confident; when
    unsure (a photo, a chart, a stamp, a few words) the page stays as displayed, as
    most scans are. Without it, ``score(turn)`` reads the page turned at a low
    resolution and returns its plausibility ``(word_chars, chars)``; the turn with
    the most word characters wins when ``reads`` says it is text, else the page stays
    as displayed.
    """
    if osd_available(tessdata):
        found = osd_turn(page, tessdata)
        if found is not None and found[1] >= OSD_MIN_CONFIDENCE:
            return Orientation(turn=found[0], how="osd", confidence=found[1])
        return Orientation(turn=0, how="none", confidence=found[1] if found else 0.0)
    scores = tuple(score(t) for t in QUARTER_TURNS)
    # Ties go to the earlier turn, so to the page as displayed.
    best = max(range(len(QUARTER_TURNS)), key=lambda i: (scores[i][0], -i))
    if not reads(scores[best]):
        return Orientation(turn=0, how="none", scores=scores)
    return Orientation(turn=QUARTER_TURNS[best], how="vote", scores=scores)

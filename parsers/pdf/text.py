"""Text-layer extraction for PDF pages: visual lines with their font facts.

One ``page.get_text("dict")`` call per page (images excluded, ligatures expanded)
is turned into :class:`Line` values: one per *visual* line, i.e. MuPDF lines that
share a baseline and touch horizontally are merged (a bullet glyph and its text,
a heading number and its title). Each line keeps the facts the classifiers need:
its dominant font size, whether it is bold or monospaced, and the MuPDF block it
came from (a first hint of paragraph boundaries).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

import pymupdf

from chunkweave.parsers.pdf.geometry import BBox, union

# Ligatures expanded by MuPDF (no PRESERVE_LIGATURES), no inline images (slow and
# unused: figures come from get_image_info), text clipped to the page.
TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP

_BOLD_FLAG = 16
_MONO_FLAG = 8
_MONO_NAMES = ("mono", "courier", "consol", "menlo", "typewriter", "code", "cmtt", "sfmono")
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi")
_CONTROL = re.compile(r"[\u0000-\u0008\u000b\u000c\u000e-\u001f\u00ad\ufeff]")
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u202f\u3000]+")


@dataclass(slots=True)
class Line:
    """One visual line of text on a page.

    ``size`` is the font size covering most characters; ``bold`` / ``mono`` are
    true when most characters are bold / monospaced. ``block`` is the MuPDF block
    number of the line's first part. ``bbox`` is in PDF points, origin top-left.
    """

    text: str
    bbox: BBox
    size: float
    bold: bool
    mono: bool
    block: int
    chars: int = 0
    first_bold: bool = False
    indent: int = 0

    @property
    def height(self) -> float:
        """Line height in points (at least 1)."""
        return max(self.bbox[3] - self.bbox[1], 1.0)

    @property
    def style(self) -> tuple[float, bool]:
        """The (rounded size, bold) pair used to cluster heading styles."""
        return (round(self.size * 2) / 2, self.bold)


def clean_text(text: str) -> str:
    """Normalise extracted text: NFKC (ligatures), no soft hyphens or controls, single spaces."""
    # Printable ASCII is already NFKC and holds no control or exotic space: only
    # runs of plain spaces can need work (most lines of most documents).
    if text.isascii() and text.isprintable():
        return _SPACES.sub(" ", text) if "  " in text else text
    text = unicodedata.normalize("NFKC", text)
    text = _CONTROL.sub("", text)
    return _SPACES.sub(" ", text)


@functools.lru_cache(maxsize=4096)
def _font_traits(font: str, flags: int) -> tuple[bool, bool]:
    """(bold, monospaced) from the span flags and the font name."""
    name = font.lower()
    bold = bool(flags & _BOLD_FLAG) or any(n in name for n in _BOLD_NAMES)
    mono = bool(flags & _MONO_FLAG) or any(n in name for n in _MONO_NAMES)
    return bold, mono


def _line_from_spans(spans: list[dict], block: int) -> Line | None:
    """Build one line from MuPDF spans; None when it holds no visible character.

    Character counts weigh the font facts. MuPDF starts a new span at every
    synthetic space, so a line of a TeX document is dozens of spans in a handful
    of fonts: consecutive spans in one font, flags and size are counted as one
    run, and the font facts are looked up once per run.
    """
    texts: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []
    runs: list[tuple[str, int, float, int]] = []
    key: tuple[str, int, float] | None = None
    run = 0
    for s in spans:
        raw = s["text"]
        if not raw:
            continue
        texts.append(raw)
        n = len(raw.strip())
        if not n:
            continue
        boxes.append(s["bbox"])
        k = (s["font"], s["flags"], s["size"])
        if k == key:
            run += n
            continue
        if key is not None:
            runs.append((*key, run))
        key, run = k, n
    if key is None:
        return None
    runs.append((*key, run))
    raw_text = "".join(texts)
    text = clean_text(raw_text).strip()
    if not text:
        return None
    weights: dict[float, int] = {}
    bold = mono = total = 0
    for font, flags, size, n in runs:
        b, m = _font_traits(font, flags)
        rounded = round(float(size), 1)
        weights[rounded] = weights.get(rounded, 0) + n
        total += n
        bold += n if b else 0
        mono += n if m else 0
    x0s, y0s, x1s, y1s = zip(*boxes, strict=True)
    return Line(
        text=text,
        bbox=(min(x0s), min(y0s), max(x1s), max(y1s)),
        size=max(weights, key=lambda k: weights[k]),
        bold=bold * 2 > total,
        mono=mono * 2 > total,
        block=block,
        chars=total,
        first_bold=_font_traits(runs[0][0], runs[0][1])[0],
        indent=len(raw_text) - len(raw_text.lstrip(" ")),
    )


def _same_visual_line(a: Line, b: Line) -> bool:
    """Return True when ``b`` continues ``a`` on the same baseline, close to its right."""
    overlap = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    if overlap < 0.6 * min(a.height, b.height):
        return False
    gap = b.bbox[0] - a.bbox[2]
    # Gaps wider than a few em are column gutters or table cells, not word spaces.
    return -1.0 <= gap <= 3.0 * max(a.size, b.size)


def _merge(a: Line, b: Line) -> Line:
    gap = b.bbox[0] - a.bbox[2]
    sep = "" if gap < 0.15 * a.size or a.text.endswith(" ") else " "
    total = a.chars + b.chars or 1
    return Line(
        text=f"{a.text}{sep}{b.text}",
        bbox=union(a.bbox, b.bbox),
        size=a.size if a.chars >= b.chars else b.size,
        # A bullet or number glyph must not decide the style of the line.
        bold=(a.bold * a.chars + b.bold * b.chars) * 2 > total,
        mono=(a.mono * a.chars + b.mono * b.chars) * 2 > total,
        block=a.block,
        chars=a.chars + b.chars,
        first_bold=a.first_bold,
        indent=a.indent,
    )


class PageLines(list[Line]):
    """A page's visual lines, and how many characters of the page ran up or down.

    ``sideways`` counts the characters :func:`extract_lines` left out because their
    lines are not horizontal: a few for margin stamps and axis labels, most of the
    page's for a landscape page set on a portrait one.
    """

    sideways: int = 0


def extract_lines(page: pymupdf.Page, textpage: pymupdf.TextPage | None = None) -> PageLines:
    """Return the page's visual lines in MuPDF's block order.

    Lines that MuPDF split on one baseline are merged when they touch; far-apart
    pieces (table cells, columns) stay separate lines. ``textpage`` (e.g. from
    OCR) replaces the page's own text layer.
    """
    data = page.get_text("dict", flags=TEXT_FLAGS, textpage=textpage)
    out = PageLines()
    for block in data.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        for raw in block.get("lines", ()):
            if abs(raw.get("dir", (1.0, 0.0))[1]) > 0.2:
                # Rotated text (margin stamps, axis labels) is not part of the flow.
                out.sideways += sum(len(sp["text"].strip()) for sp in raw.get("spans", ()))
                continue
            line = _line_from_spans(raw.get("spans", ()), block.get("number", 0))
            if line is None:
                continue
            if out and out[-1].block == line.block and _same_visual_line(out[-1], line):
                out[-1] = _merge(out[-1], line)
            else:
                out.append(line)
    return out


_HYPHEN_END = re.compile(r"[A-Za-z\u00c0-\u024f]-$")


def join_lines(texts: list[str]) -> str:
    """Join the lines of one paragraph: de-hyphenate words broken at line ends.

    A trailing hyphen after a letter is dropped when the next line starts with a
    lower-case letter ("infor-" + "mation" -> "information"); otherwise lines are
    joined with one space.
    """
    out = ""
    for raw in texts:
        t = raw.strip()
        if not t:
            continue
        if not out:
            out = t
        elif _HYPHEN_END.search(out) and t[0].islower():
            out = out[:-1] + t
        else:
            out = f"{out} {t}"
    return out

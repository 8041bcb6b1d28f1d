"""Pages set sideways: a landscape table printed on a portrait page.

The visual lines (:mod:`chunkweave.parsers.pdf.text`) skip vertical text, so such
a page shows few lines. When nearly all its words run vertically, its text is
read in its own frame (:func:`sideways_pieces`: x along the reading direction, y
down the lines), cut into pieces at column gaps (:mod:`.gaps`), and its tables of
figures (:mod:`.spaced`) are returned boxed in page coordinates
(:func:`sideways_tables`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pymupdf

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.geometry import BBox, enclose
from chunkweave.parsers.pdf.tables.gaps import line_pieces
from chunkweave.parsers.pdf.tables.grid import visual_rows
from chunkweave.parsers.pdf.tables.spaced import tables_of
from chunkweave.parsers.pdf.text import TEXT_FLAGS, Line, clean_text

#: Pages with fewer (horizontal) visual lines than this are checked for sideways text.
SIDEWAYS_MAX_LINES = 6
#: ... and read sideways when at least this many words, and nearly all, run vertically.
SIDEWAYS_MIN_WORDS = 40


def sideways_pieces(
    page: pymupdf.Page,
) -> tuple[list[Line], Callable[[BBox], BBox]] | None:
    """Return a sideways page's text as pieces in its upright frame, and the way back.

    The upright frame has x along the text's reading direction and y down its
    lines; the returned function maps a box in it back to page coordinates.
    None when the page's text is not mostly vertical.
    """
    tp = page.get_textpage(flags=TEXT_FLAGS)
    dirs: dict[tuple[int, int], tuple[float, float]] = {}
    sizes: dict[tuple[int, int], float] = {}
    for block in page.get_text("dict", textpage=tp).get("blocks", ()):
        for k, raw in enumerate(block.get("lines", ())):
            ux, uy = raw.get("dir", (1.0, 0.0))
            dirs[(block.get("number", 0), k)] = (float(ux), float(uy))
            spans = raw.get("spans", ())
            sizes[(block.get("number", 0), k)] = max((sp["size"] for sp in spans), default=10.0)
    words = page.get_text("words", textpage=tp)
    vertical = [w for w in words if abs(dirs.get((w[5], w[6]), (1.0, 0.0))[1]) > 0.9]
    if len(vertical) < SIDEWAYS_MIN_WORDS or len(vertical) < 0.9 * len(words):
        return None
    # The majority direction: up the page or down it.
    up = sum(1 for w in vertical if dirs[(w[5], w[6])][1] < 0) * 2 > len(vertical)
    dx, dy = (0.0, -1.0) if up else (0.0, 1.0)
    nx, ny = -dy, dx  # the text's "down"

    def turn(b: BBox) -> BBox:
        xs = [x * dx + y * dy for x in (b[0], b[2]) for y in (b[1], b[3])]
        ys = [x * nx + y * ny for x in (b[0], b[2]) for y in (b[1], b[3])]
        return (min(xs), min(ys), max(xs), max(ys))

    def back(b: BBox) -> BBox:
        xs = [u * dx + v * nx for u in (b[0], b[2]) for v in (b[1], b[3])]
        ys = [u * dy + v * ny for u in (b[0], b[2]) for v in (b[1], b[3])]
        return (min(xs), min(ys), max(xs), max(ys))

    groups: dict[tuple[int, int], list[tuple]] = {}
    for w in vertical:
        if (dirs[(w[5], w[6])][1] < 0) == up:
            groups.setdefault((w[5], w[6]), []).append((*turn(w[:4]), *w[4:]))
    pieces: list[Line] = []
    for key, ws in groups.items():
        ws.sort(key=lambda w: w[0])
        size = sizes.get(key, 10.0)
        ln = Line(
            text=clean_text(" ".join(w[4] for w in ws)).strip(),
            bbox=enclose(ws),
            size=size,
            bold=False,
            mono=False,
            block=key[0],
            chars=sum(len(w[4]) for w in ws),
        )
        pieces.extend(line_pieces(ln, ws))
    return pieces, back


def sideways_tables(page: pymupdf.Page, page_no: int) -> list[Element] | None:
    """Return the tables of a page set sideways, boxed in page coordinates.

    None when the page's text is not mostly vertical.
    """
    turned = sideways_pieces(page)
    if turned is None:
        return None
    pieces, back = turned
    return [
        t.model_copy(update={"bbox": back(t.bbox)}) if t.bbox else t
        for t in tables_of(visual_rows(pieces), page_no)
    ]


def mostly_vertical(words: Sequence[tuple]) -> bool:
    """Tell cheaply, from word boxes, whether a page's text runs vertically."""
    long = [w for w in words if len(w[4]) >= 3]
    tall = sum(1 for w in long if w[3] - w[1] > 1.5 * (w[2] - w[0]))
    return tall >= SIDEWAYS_MIN_WORDS // 2 and tall >= 0.9 * len(long)

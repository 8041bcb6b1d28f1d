"""The header and footer bands of a page: furniture candidates, page numbers, codes.

The top and bottom ``TOP_BAND`` / ``BOTTOM_BAND`` of the page hold its running
lines. The candidates are the outermost lines there (:func:`band_candidates`),
with the lines on their rows, and the row stacked under the header
(:func:`stacked_row`); :mod:`chunkweave.parsers.pdf.furniture` decides which are
furniture.

Outside the bands, only a bare page number or a document code ("REDP-5110-00",
"SF-424") is furniture (:func:`outer_marker`): the outermost line of the page,
alone on its row, well apart from the text and within ``NUMBER_BAND`` of the edge
(a letter-size layout printed on A4 leaves a bottom margin wider than the band;
cover pages set their codes high).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from chunkweave.parsers.pdf.text import Line
from chunkweave.parsers.pdf.typography import SAME_ROW_OVERLAP, same_row, set_close

Band = Literal["top", "bottom"]
#: Fraction of the page height that counts as the header / footer band.
TOP_BAND = 0.14
BOTTOM_BAND = 0.14
#: How many outermost lines of each band are candidates, with the lines that share
#: a row with them ("Cat. No. 123 | Internal Revenue Manual | 2.3.59" is one row).
MAX_BAND_LINES = 3
#: How many bottom-most rows are candidates: footers stack more rows than headers
#: (a page label row, then a legal notice, then a form code), while the rows below
#: a page's first ones are often its headings, which must not be read as furniture.
MAX_FOOTER_ROWS = 4
#: Wider band in which a lone, set-apart page number or document code still counts.
NUMBER_BAND = 0.25
_PAGE_NUMBER = re.compile(
    r"^(?:page\s*)?[-–—(\[]?\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*[-–—)\]]?"
    r"(?:\s*(?:of|/)\s*\d{1,4})?$",
    re.IGNORECASE,
)
# A page label with a short prefix: "A-42" (appendix), "3-7" (chapter-relative), "B.12".
_PREFIXED_PAGE = re.compile(r"^(?:[A-Z]{1,2}\s?[-–.]|\d{1,2}\s?[-–])\s?\d{1,4}$")
# A document or form code: one token of capitals and digits, with a digit.
_CODE = re.compile(r"^(?=\S*\d)[A-Z0-9][A-Z0-9./\-–]{3,30}$")


def is_page_number(text: str) -> bool:
    """Return True for a bare page number: "7", "- 7 -", "Page 7", "7 of 20", "vii", "A-42"."""
    text = text.strip()
    return bool(_PAGE_NUMBER.match(text) or _PREFIXED_PAGE.match(text))


def band_candidates(lines: Sequence[Line], page_height: float) -> Iterable[tuple[int, Band]]:
    """Yield ``(index, band)`` for lines that could be furniture on this page.

    Candidates are the up-to-``MAX_BAND_LINES`` top-most lines lying entirely in
    the top band, plus the lines on the same row as one of them (overlapping it
    vertically by half), and the lines of the ``MAX_FOOTER_ROWS`` bottom-most rows
    lying entirely in the bottom band: a footer set as three pieces on one baseline
    above two more lines is seen whole.
    """
    order = sorted(range(len(lines)), key=lambda i: lines[i].bbox[1])
    top = _with_row_mates(lines, order[:MAX_BAND_LINES], order)
    for i in top:
        if lines[i].bbox[3] <= TOP_BAND * page_height:
            yield i, "top"
    bottom = [i for row in _rows(lines, order)[-MAX_FOOTER_ROWS:] for i in row]
    for i in reversed(bottom):
        if lines[i].bbox[1] >= (1 - BOTTOM_BAND) * page_height:
            yield i, "bottom"


def stacked_row(lines: Sequence[Line], page_height: float) -> list[int]:
    """Return the row right under the top-band candidates when it continues their stack.

    A header set in two or more rows ("Exhibit 3 (continued)" over the exhibit's
    title) runs below the ``MAX_BAND_LINES`` candidates. The next row counts when
    it lies in the top band and is set close under the row above it, as lines of
    one block are (:func:`~chunkweave.parsers.pdf.typography.set_close`); empty otherwise.
    """
    order = sorted(range(len(lines)), key=lambda i: lines[i].bbox[1])
    taken = set(_with_row_mates(lines, order[:MAX_BAND_LINES], order))
    rows = _rows(lines, order)
    for prev, row in zip(rows, rows[1:], strict=False):
        if any(i in taken for i in row):
            continue
        if not any(i in taken for i in prev):
            return []
        top = min(lines[i].bbox[1] for i in row)
        gap = top - max(lines[i].bbox[3] for i in prev)
        height = max(lines[i].height for i in row)
        in_band = all(lines[i].bbox[3] <= TOP_BAND * page_height for i in row)
        return row if in_band and set_close(gap, height) else []
    return []


def _rows(lines: Sequence[Line], order: list[int]) -> list[list[int]]:
    """Line indices (``order``: by top edge) grouped into rows of vertically overlapping lines."""
    rows: list[list[int]] = []
    bottom = -1e9
    for i in order:
        y0, y1 = lines[i].bbox[1], lines[i].bbox[3]
        if rows and bottom - y0 >= SAME_ROW_OVERLAP * (y1 - y0):
            rows[-1].append(i)
            bottom = max(bottom, y1)
        else:
            rows.append([i])
            bottom = y1
    return rows


def _with_row_mates(lines: Sequence[Line], picked: list[int], order: list[int]) -> list[int]:
    """Return ``picked`` plus the lines overlapping one of them vertically by half, in order."""
    chosen = set(picked)
    return [
        i
        for i in order
        if i in chosen or any(same_row(lines[i].bbox, lines[j].bbox) for j in picked)
    ]


def outer_marker(lines: Sequence[Line], page_height: float) -> tuple[int, Band] | None:
    """Return ``(index, band)`` of a page number or code at the page edge outside the band.

    The line must be the bottom-most (or top-most) of the page, within
    ``NUMBER_BAND`` of that edge, alone on its row and separated from the nearest
    text by more than 1.5 times its height: a number in running text, a table or a
    list has neighbours on its row or close above or below it.
    """
    if len(lines) < 2:
        return None
    by_top = sorted(range(len(lines)), key=lambda i: lines[i].bbox[1])
    edges: tuple[tuple[int, Band], ...] = ((by_top[-1], "bottom"), (by_top[0], "top"))
    for i, band in edges:
        line = lines[i]
        if not (is_page_number(line.text) or _CODE.match(line.text.strip())):
            continue
        if band == "bottom" and line.bbox[1] < (1 - NUMBER_BAND) * page_height:
            continue
        if band == "top" and line.bbox[3] > NUMBER_BAND * page_height:
            continue
        others = [ln for j, ln in enumerate(lines) if j != i]
        if any(ln.bbox[1] < line.bbox[3] and ln.bbox[3] > line.bbox[1] for ln in others):
            continue  # shares its row with other text
        if band == "bottom":
            gap = line.bbox[1] - max(ln.bbox[3] for ln in others)
        else:
            gap = min(ln.bbox[1] for ln in others) - line.bbox[3]
        if gap > 1.5 * line.height:
            return i, band
    return None

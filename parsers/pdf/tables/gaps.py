"""Lines whose table columns hide inside them, cut at their column gaps.

Statistical tables, survey reports, manuals and terminal listings print columns
apart by a few points of white space, by dot leaders, or by runs of spaces in a
monospaced font. Visual lines (:mod:`chunkweave.parsers.pdf.text`) join pieces
closer than a few em, so such a row arrives as one line ("Maine 13,278 13,077
12,950 ..."). This module:

1. tells cheaply, from the lines alone, whether a page may hide such a table
   (:func:`hides_columns`): ``MIN_ROWS`` lines that hold three or more numbers, a
   dot leader followed by more text, runs of spaces, or monospaced words set
   wider apart than spaces (``SPARSE_PITCH``); or enough lines that are figures
   alone (right-aligned columns, which the grid detector does not see);
2. cuts those pages' lines at column gaps found in the page's words
   (:func:`split_at_gaps`): a gap of ``WIDE_GAP`` em anywhere; of ``PIECE_GAP`` em
   between two text runs MuPDF keeps apart or between two numbers; after a dot
   leader (whose dots are dropped); between runs of rule characters.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Sequence

import pymupdf

from chunkweave.parsers.pdf.geometry import enclose
from chunkweave.parsers.pdf.tables.cells import MIN_COLS, MIN_ROWS, RULE_WORD, is_figure, is_number
from chunkweave.parsers.pdf.text import TEXT_FLAGS, Line, clean_text

#: A gap this wide (em) always separates two cells.
WIDE_GAP = 1.0
#: A gap this wide (em) separates two cells when MuPDF keeps the text runs apart
#: (separately positioned text) or both sides are numbers.
PIECE_GAP = 0.4
#: Monospaced fonts advance 0.5 to 0.6 em per character; a monospaced line wider
#: than this per character holds wider gaps than its spaces (em).
SPARSE_PITCH = 0.62

_LEADER_WORD = re.compile(r"^[.·…]+$")
_SPACED_NUMBERS = re.compile(r"(?:^|\s)[(\[]?[-+−–—]?[$€£¥]?\d[\d,.]*%?[)\]]?(?=\s|$)")
_LEADER_INSIDE = re.compile(r"(?:[.·]\s?){3,}\s*\S")


def may_hide(ln: Line) -> bool:
    """Return True when a line may hide table columns (see the module docstring)."""
    if ln.chars >= len(ln.text) + 2:  # runs of spaces, collapsed in the text
        return True
    if ln.mono and " " in ln.text and _pitch(ln) >= SPARSE_PITCH:
        return True  # monospaced words set further apart than spaces do
    text = ln.text
    if len(_SPACED_NUMBERS.findall(text)) >= 3:
        return True
    return bool(_LEADER_INSIDE.search(text))


def _pitch(ln: Line) -> float:
    """Width per character of a line, in em."""
    return (ln.bbox[2] - ln.bbox[0]) / max(len(ln.text), 1) / max(ln.size, 1.0)


def hides_columns(lines: Sequence[Line]) -> bool:
    """Return True when the page may hold a table of figures the other detectors miss.

    That is ``MIN_ROWS`` lines that may hide columns (:func:`may_hide`), or
    ``MIN_ROWS`` rows' worth of lines that are figures alone: columns of numbers
    already apart, but right-aligned, which the grid detector (aligned left
    edges) does not see.
    """
    hiding = figures = 0
    for ln in lines:
        if may_hide(ln):
            hiding += 1
            if hiding >= MIN_ROWS:
                return True
        elif is_figure(ln.text):
            figures += 1
            if figures >= MIN_ROWS * (MIN_COLS - 1):
                return True
    return False


def split_at_gaps(page: pymupdf.Page, lines: Sequence[Line]) -> list[Line]:
    """Return the lines cut at column gaps (lines without words stay whole)."""
    words = sorted(page.get_text("words", flags=TEXT_FLAGS), key=lambda w: (w[1] + w[3]) / 2)
    centres = [(w[1] + w[3]) / 2 for w in words]
    out: list[Line] = []
    for ln in lines:
        x0, y0, x1, y1 = ln.bbox
        lo = bisect.bisect_left(centres, y0)
        hi = bisect.bisect_right(centres, y1)
        mine = sorted(
            (w for w in words[lo:hi] if x0 - 1 <= (w[0] + w[2]) / 2 <= x1 + 1),
            key=lambda w: w[0],
        )
        if not mine:
            out.append(ln)
            continue
        out.extend(line_pieces(ln, mine))
    return out


def _cut(a: tuple, b: tuple, size: float) -> bool:
    gap = b[0] - a[2]
    if gap >= WIDE_GAP * size:
        return True
    if gap < PIECE_GAP * size:
        return False
    apart = (a[5], a[6]) != (b[5], b[6])  # separately positioned text runs
    return (
        apart
        or (is_number(a[4]) and is_number(b[4]))
        or bool(RULE_WORD.match(a[4]) and RULE_WORD.match(b[4]))
    )


def line_pieces(ln: Line, words: list[tuple]) -> list[Line]:
    """Return ``ln`` cut at the column gaps between its ``words`` (sorted left to right)."""
    if len(words) == 1 and not _LEADER_WORD.match(words[0][4]):
        return [ln]
    groups: list[list[tuple]] = [[]]
    i = 0
    while i < len(words):
        w = words[i]
        if _LEADER_WORD.match(w[4]) and (len(w[4]) >= 3 or _leader_run(words, i) >= 2):
            # A dot leader ends the cell before it; its dots are no cell.
            while i < len(words) and _LEADER_WORD.match(words[i][4]):
                i += 1
            groups.append([])
            continue
        if groups[-1] and _cut(groups[-1][-1], w, ln.size):
            groups.append([])
        groups[-1].append(w)
        i += 1
    groups = [g for g in groups if g]
    if len(groups) == 1 and len(groups[0]) == len(words):
        # One piece: the line's text, boxed by its words (no leading spaces).
        if abs(words[0][0] - ln.bbox[0]) < 1 and abs(words[-1][2] - ln.bbox[2]) < 1:
            return [ln]
        return [dataclasses.replace(ln, bbox=enclose(words))]
    return [_piece(ln, g) for g in groups]


def _leader_run(words: list[tuple], i: int) -> int:
    n = 0
    while i + n < len(words) and _LEADER_WORD.match(words[i + n][4]):
        n += 1
    return n


def _piece(ln: Line, words: list[tuple]) -> Line:
    text = clean_text(" ".join(w[4] for w in words)).strip()
    # A label glued to its leader ("Arson.....", "crime. . ."): the dots go.
    text = re.sub(r"(?:\s?[.·…]){2,}$", "", text).strip() or text
    return dataclasses.replace(
        ln, text=text, bbox=enclose(words), chars=sum(len(w[4]) for w in words)
    )

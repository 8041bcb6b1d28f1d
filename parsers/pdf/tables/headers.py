"""Header rows of a table of figures: above its body, or its first rows set like data.

Up to ``MAX_HEADER_ROWS`` rows right above the body are its header when they lie
within the table's width and are not prose (a title or a headnote set across the
page, or starting in the first column and running over it, is not); so are the
body's first rows when their figures are foreign to their columns ("2019" over
"13,278").
"""

from __future__ import annotations

from chunkweave.parsers.pdf.tables.cells import (
    DATA_SHARE,
    MAX_HEADER_ROWS,
    MIN_ROWS,
    is_data_row,
    is_numberish,
    row_gap,
    row_height,
)
from chunkweave.parsers.pdf.text import Line


def header_rows(rows: list[list[Line]], start: int, cols: list[tuple[float, float]]) -> int:
    """How many rows right above ``rows[start]`` are the table's header."""
    left, right = cols[0][0], cols[-1][1]
    tops = [r[0].bbox[1] for r in rows[start : start + 6]]
    steps = sorted(b - a for a, b in zip(tops, tops[1:], strict=False))
    pitch = steps[len(steps) // 2] if steps else 0.0
    n = 0
    while n < MAX_HEADER_ROWS and start - n - 1 >= 0:
        row, below = rows[start - n - 1], rows[start - n]
        em = row[0].size
        # A header is often set off from the body by a blank line or two, not
        # from its own other rows.
        reach = max(3 * row_height(row), 2 * pitch) if n == 0 else 1.5 * row_height(row)
        if row_gap(row, below) > reach:
            break
        # Labels may stick out of narrow columns ("LINE" over "14"); a title
        # or a note on its own runs further.
        reach = (2 if len(row) == 1 else 4) * em
        if is_data_row(row) or any(
            ln.bbox[0] < left - reach or ln.bbox[2] > right + reach for ln in row
        ):
            break
        # Text starting in the first column and running over its end: a title or
        # a headnote (a spanning header starts over the later columns).
        if any(ln.bbox[0] < cols[0][1] and ln.bbox[2] > cols[0][1] + 2 * em for ln in row):
            break
        # Text over no column, between the label column and the first data column:
        # the second line of a title set after its number ("Table 17.  Actual and
        # projected ... / school: Fall 1996"). A header centred over two data
        # columns may sit in the gap between them.
        if any(cols[0][1] < ln.bbox[0] and ln.bbox[2] < cols[1][0] for ln in row):
            break
        n += 1
    if n > 0 and start - n - 1 >= 0:
        # The top "header" row is the last line of the paragraph above it.
        above, top = rows[start - n - 1], rows[start - n]
        if (
            len(top) == len(above) == 1
            and abs(top[0].bbox[0] - above[0].bbox[0]) < top[0].size
            and row_gap(above, top) < 0.5 * row_height(top)
        ):
            n -= 1
    return n


def _kind(cell: str) -> tuple[bool, ...] | None:
    """Return the shape of a figure (thousands separator, decimals, percent), None for text."""
    if not is_numberish(cell):
        return None
    return ("," in cell, "." in cell, "%" in cell)


def leading_headers(rows: list[list[str]]) -> int:
    """How many leading rows are headers set like data ("2019 2020 2021" over "13,278").

    A leading row is a header when most of its cells after the first are foreign to
    their column: text over figures, or figures of a shape (separators, decimals)
    no other cell of the column has.
    """
    n = 0
    while n < min(MAX_HEADER_ROWS, len(rows) - MIN_ROWS):
        row = rows[n]
        filled = [c for c in range(1, len(row)) if row[c]]
        foreign = 0
        for c in filled:
            kinds = {_kind(r[c]) for r in rows[n + 1 :] if r[c]}
            foreign += _kind(row[c]) not in kinds and any(k is not None for k in kinds)
        if len(filled) < 2 or foreign < DATA_SHARE * len(filled):
            break
        n += 1
    return n

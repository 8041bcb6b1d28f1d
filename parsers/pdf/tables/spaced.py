"""Whitespace-aligned tables of figures whose columns hide inside visual lines.

Such a row arrives as one visual line ("Maine 13,278 13,077 12,950 ..."), so
neither the grid detector (:mod:`.grid`, which needs its columns as separate
lines, left-aligned) nor the key/value detector (:mod:`.pairs`) sees the columns.
On a page that may hide them (:func:`~.gaps.hides_columns`) the lines are cut at
their column gaps (:func:`~.gaps.split_at_gaps`), and this module:

1. finds the tables of figures among the pieces (:func:`find_spaced_tables`):

   - a table body is a run of data rows (:func:`~.cells.is_data_row`), with rule
     rows (``-----``), *stub rows* (one piece in the label column: a group label,
     the first line of a wrapped row label; the last column for right-to-left
     tables), *continuation rows* (one piece where a later column starts: a
     wrapped cell, the values listed under a field's description) and sub-header
     rows between them; it ends at a wide vertical gap, at a line of prose, or at
     a blank line (``BLANK_LINE``) followed by the header of the next table;
   - its columns come from :mod:`.columns`, its header rows from :mod:`.headers`
     (and the body's first rows when a rule row follows them);
   - it is kept when it has ``MIN_ROWS`` rows of ``MIN_COLS`` filled cells and a
     *data column*: most of the filled cells of some column after the first are
     numbers. Multi-column text (an index, a glossary) has no such column;
2. runs the grid detector on the cut pieces for tables of words in columns (the
   functions of a manual set in five columns of separately placed words), keeping
   the grids that needed the cutting.

Pages set sideways are :mod:`.sideways`'s. Leader dots and rule rows are not
cells. Panels drawn with ``|`` and ``+---+`` are not tables
(:func:`~.grid.drawn_in_text`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pymupdf

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.geometry import boxes_of, centre_inside, outside
from chunkweave.parsers.pdf.tables.cells import (
    DATA_SHARE,
    MAX_HEADER_ROWS,
    MIN_COLS,
    MIN_ROWS,
    is_data_row,
    is_figure,
    is_numberish,
    is_rule_row,
    row_gap,
    row_height,
)
from chunkweave.parsers.pdf.tables.columns import column_of, table_columns
from chunkweave.parsers.pdf.tables.element import table_from_lines
from chunkweave.parsers.pdf.tables.gaps import hides_columns, may_hide, split_at_gaps
from chunkweave.parsers.pdf.tables.grid import (
    aligned_grid,
    drawn_in_text,
    find_grid_tables,
    visual_rows,
)
from chunkweave.parsers.pdf.tables.headers import header_rows, leading_headers
from chunkweave.parsers.pdf.tables.rules import horizontal_rules
from chunkweave.parsers.pdf.tables.spanning import Rule, header_grid
from chunkweave.parsers.pdf.text import Line

#: Consecutive table rows are at most this many line heights apart.
MAX_ROW_GAP = 2.5
#: A gap between rows this many line heights wider than the body's closest rows
#: is a blank line.
BLANK_LINE = 0.5


def find_spaced_tables(page: pymupdf.Page, lines: Sequence[Line], page_no: int) -> list[Element]:
    """Return the whitespace-aligned tables hidden in a page's lines (``order`` 0).

    A page set sideways is read by :func:`~.sideways.sideways_tables` instead.
    """
    if not hides_columns(lines):
        return []
    pieces = split_at_gaps(page, lines)
    tables = tables_of(visual_rows(pieces), page_no, horizontal_rules(page))
    # Word tables set in columns of separately placed words (function names,
    # options, format letters in a manual): the grid detector on the pieces.
    rest = outside(pieces, boxes_of(tables))
    if aligned_grid(rest):
        tables += [t for t in find_grid_tables(rest, page_no) if _cut_table(t, lines)]
    return tables


def _cut_table(table: Element, lines: Sequence[Line]) -> bool:
    """Tell whether a grid found on the pieces needed the cutting.

    Otherwise the grid detector finds it on the page's own lines, as before.
    """
    box = table.bbox or (0.0, 0.0, 0.0, 0.0)
    return any(may_hide(ln) for ln in lines if centre_inside(ln.bbox, box))


def tables_of(rows: list[list[Line]], page_no: int, rules: Sequence[Rule] = ()) -> list[Element]:
    """Return the tables of figures among visual ``rows`` of pieces (``order`` 0).

    ``rules`` are the page's horizontal rules (:func:`~.rules.horizontal_rules`),
    which tell the columns a header label spans (:mod:`.spanning`).
    """
    tables: list[Element] = []
    data = [is_data_row(r) for r in rows]
    start = floor = 0
    while start < len(rows):
        end, resume = _body(rows, start, data)
        if end is None:
            # No body starts at any row of this run: go on after it.
            start = max(start + 1, resume)
            continue
        table = _table(rows, start, end, page_no, floor, rules)
        if table is not None:
            tables.append(table)
            floor = end
        start = end
    return tables


def _body(rows: list[list[Line]], start: int, data: list[bool]) -> tuple[int | None, int]:
    """Return where the table body starting at ``rows[start]`` ends, and where the scan stopped.

    The end is exclusive, None when no body starts there; ``data`` tells which rows
    are data rows.
    The body starts at a data row; it takes data rows, rule rows, stub rows (one
    piece in the first column) and sub-header rows (two or more pieces, followed by
    a data row). It stops at a wide gap, at prose, or at a blank line followed by a
    row that is neither data nor a stub (the next table's header).
    """
    first = rows[start]
    if not data[start]:
        return None, start + 1
    end = start + 1
    n_data = 1
    i = start + 1
    blank: int | None = None  # the last row after a blank line
    base: float | None = None  # the narrowest gap between rows so far
    while i < len(rows):
        row, prev = rows[i], rows[i - 1]
        gap = row_gap(prev, row)
        if gap > MAX_ROW_GAP * row_height(row):
            break
        base = gap if base is None else min(base, gap)
        if gap > base + BLANK_LINE * row_height(row):
            blank = i
        if is_rule_row(row) and blank is not None and i - blank <= MAX_HEADER_ROWS:
            # A header ruled off after a blank line: the next table starts there.
            end = min(end, blank)
            break
        stub = _stub(row, first) or _continuation(row, first)
        if data[i]:
            n_data += 1
            i += 1
            end = i
            continue
        if blank == i and not stub:
            break  # a blank line, then the next table's header or prose
        if is_rule_row(row) or stub:
            i += 1
            continue
        if len(row) >= 2 and i + 1 < len(rows) and data[i + 1]:
            i += 1  # a sub-header inside the table
            continue
        break
    return (end if n_data >= MIN_ROWS else None), i


def _stub(row: list[Line], first: list[Line]) -> bool:
    """One piece in the label column: a group label or a wrapped label's first line."""
    if len(row) != 1:
        return False
    piece, em = row[0], first[0].size
    return (
        abs(piece.bbox[0] - first[0].bbox[0]) <= 3 * em and piece.bbox[2] < first[1].bbox[0] + em
    ) or (
        # Right to left: the labels are the last column.
        abs(piece.bbox[2] - first[-1].bbox[2]) <= 3 * em and piece.bbox[0] > first[-2].bbox[2] - em
    )


def _continuation(row: list[Line], first: list[Line]) -> bool:
    """Tell whether a row is one piece starting where a later column of ``first`` starts.

    That is a wrapped cell line, or one of the values listed under a field's
    description ("0 = no penalty").
    """
    if len(row) != 1 or row[0].bold:
        return False
    x0, em = row[0].bbox[0], row[0].size
    return any(abs(x0 - p.bbox[0]) <= em for p in first[1:])


def _table(
    rows: list[list[Line]],
    start: int,
    end: int,
    page_no: int,
    floor: int = 0,
    rules: Sequence[Rule] = (),
) -> Element | None:
    """Build the table whose body runs from ``rows[start]`` to ``end``.

    Rows above ``floor`` belong to the table before it. The header's lines are
    laid out by :func:`~.spanning.header_grid` (wrapped labels joined, spanning
    labels over their columns).
    """
    body = rows[start:end]
    data = [r for r in body if is_data_row(r) or (is_rule_row(r) and len(r) >= 2)]
    cols = table_columns(data)
    if len(cols) < MIN_COLS:
        return None
    # Continuation lines right above the first data row (a row wrapped over from
    # the previous page, values listed under a description) belong to the body.
    first = rows[start]
    while (
        start > floor
        and _continuation(rows[start - 1], first)
        and row_gap(rows[start - 1], rows[start]) <= MAX_ROW_GAP * row_height(rows[start])
    ):
        start -= 1
    n_head = header_rows(rows, start, cols)
    head = [r for r in rows[start - n_head : start] if not is_rule_row(r)]
    grid = header_grid(head, cols, rules)
    n_head = len(grid)
    pieces: list[Line] = [ln for r in head for ln in r]
    for row in rows[start:end]:
        if is_rule_row(row):
            continue
        cells = [""] * len(cols)
        for ln in row:
            c = column_of(ln, cols)
            cells[c] = f"{cells[c]} {ln.text}".strip()
        grid.append(cells)
        pieces.extend(row)
    # Rows above a rule row near the top of the body are header rows too
    # ("Proportion 1.0 1.1" over "--------").
    body = rows[start:end]
    for k, row in enumerate(body[: MAX_HEADER_ROWS + 1]):
        if is_rule_row(row):
            n_head += sum(1 for r in body[:k] if not is_rule_row(r))
            break
    else:
        n_head += leading_headers(grid[n_head:])
    body_rows = grid[n_head:]
    if sum(1 for r in body_rows if sum(1 for c in r if c) >= MIN_COLS) < MIN_ROWS:
        return None
    if not _has_data_column(body_rows):
        return None
    if drawn_in_text(grid):
        return None
    return table_from_lines(pieces, tuple(tuple(r) for r in grid), n_head, page_no)


def _has_data_column(rows: list[list[str]]) -> bool:
    for c in range(1, len(rows[0])):
        filled = [r[c] for r in rows if r[c]]
        numbers = sum(1 for t in filled if is_figure(t))
        numberish = sum(1 for t in filled if is_numberish(t))
        if numbers >= MIN_ROWS and numberish >= DATA_SHARE * len(filled):
            return True
    return False

"""Unruled tables from text alignment: rows of pieces that share column starts.

Many reports print tables without rules (forms, field layouts, screen exhibits),
so neither ``find_tables``' line strategy nor its text strategy rebuilds them
well. This detector works on the page's visual lines, which keep apart pieces
separated by wide gaps:

1. rows = lines grouped by vertical centre;
2. column starts = left edges (6 pt bins) shared by at least ``MIN_ROWS`` rows
   that have ``MIN_COLS`` or more pieces;
3. a table = a run of consecutive rows whose pieces start on those columns; a
   one-piece row indented under a column continues the previous row's cell;
4. the first row is a header when it is bold or upper case.

It is cheap (pure Python over lines already extracted) and conservative: fewer
than ``MIN_ROWS`` multi-piece rows or ``MIN_COLS`` columns yield nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from parsers.elements import Element, table_text
from parsers.pdf_text import BBox, Line

MIN_ROWS = 3
MIN_COLS = 3
_BIN = 6.0


def _rows(lines: Sequence[Line]) -> list[list[Line]]:
    rows: list[list[Line]] = []
    for ln in sorted(lines, key=lambda ln: ((ln.bbox[1] + ln.bbox[3]) / 2, ln.bbox[0])):
        centre = (ln.bbox[1] + ln.bbox[3]) / 2
        if rows and abs(centre - (rows[-1][0].bbox[1] + rows[-1][0].bbox[3]) / 2) < 0.4 * ln.height:
            rows[-1].append(ln)
        else:
            rows.append([ln])
    return [sorted(r, key=lambda ln: ln.bbox[0]) for r in rows]


def _column_starts(rows: list[list[Line]]) -> list[float]:
    votes: Counter[int] = Counter()
    for row in rows:
        if len(row) >= MIN_COLS:
            votes.update({round(ln.bbox[0] / _BIN) for ln in row})
    return sorted(b * _BIN for b, n in votes.items() if n >= MIN_ROWS)


def _column_of(x: float, starts: list[float]) -> int | None:
    best = None
    for i, s in enumerate(starts):
        if x >= s - _BIN:
            best = i
    return best


def find_grid_tables(lines: Sequence[Line], page_no: int) -> list[Element]:
    """Return unruled tables found on a page's lines (``order`` 0)."""
    rows = _rows(lines)
    starts = _column_starts(rows)
    if len(starts) < MIN_COLS:
        return []
    tables: list[Element] = []
    run: list[list[Line]] = []
    for row in rows + [[]]:
        aligned = len(row) >= 2 and all(
            any(abs(ln.bbox[0] - s) <= _BIN for s in starts) for ln in row
        )
        continuation = (
            len(row) == 1
            and bool(run)
            and row[0].bbox[0] > starts[0] + _BIN
            and row[0].bbox[1] - run[-1][-1].bbox[3] < 1.5 * row[0].height
        )
        if aligned or continuation:
            run.append(row)
            continue
        table = _build(run, starts, page_no)
        if table is not None:
            tables.append(table)
        run = []
    return tables


def _build(run: list[list[Line]], starts: list[float], page_no: int) -> Element | None:
    if sum(1 for r in run if len(r) >= MIN_COLS) < MIN_ROWS:
        return None
    used = sorted({c for r in run for ln in r if (c := _column_of(ln.bbox[0], starts)) is not None})
    if len(used) < MIN_COLS:
        return None
    index = {c: i for i, c in enumerate(used)}
    grid: list[list[str]] = []
    for row in run:
        cells = [""] * len(used)
        for ln in row:
            col = _column_of(ln.bbox[0], starts)
            if col in index:
                cells[index[col]] = f"{cells[index[col]]} {ln.text}".strip()
        if len(row) == 1 and grid:
            # An indented single piece continues the cell above it.
            for i, text in enumerate(cells):
                if text:
                    grid[-1][i] = f"{grid[-1][i]} {text}".strip()
        else:
            grid.append(cells)
    rows = tuple(tuple(r) for r in grid)
    first = run[0]
    header = 1 if all(ln.bold or ln.text.isupper() for ln in first) and len(rows) > 1 else 0
    bbox: BBox = (
        min(ln.bbox[0] for r in run for ln in r),
        min(ln.bbox[1] for r in run for ln in r),
        max(ln.bbox[2] for r in run for ln in r),
        max(ln.bbox[3] for r in run for ln in r),
    )
    return Element(
        type="table",
        text=table_text(rows),
        page=page_no,
        bbox=bbox,
        rows=rows,
        header_rows=header,
        order=0,
    )

"""Unruled tables from text alignment: rows of pieces that share column starts.

Many reports print tables without rules (forms, field layouts, screen exhibits),
so neither ``find_tables``' line strategy nor its text strategy rebuilds them
well. This detector works on the page's visual lines, which keep apart pieces
separated by wide gaps:

1. rows = lines grouped by vertical centre;
2. column starts = left edges (6 pt bins) shared by at least ``MIN_ROWS`` rows
   that have ``MIN_COLS`` or more pieces;
3. a table = a run of consecutive rows whose pieces fall in distinct columns,
   all but one of them on a column start (centred or right-aligned cells start
   inside their column); a one-piece row indented under a column continues the
   previous row's cell;
4. the first row is a header when it is bold or upper case; a bold or upper-case
   row right above the run with one label per column is its header even when its
   labels are centred over the columns rather than aligned with them.

It is cheap (pure Python over lines already extracted) and conservative: fewer
than ``MIN_ROWS`` multi-piece rows or ``MIN_COLS`` columns yield nothing, and a
panel drawn with characters (``|``, ``+-----+``: :func:`drawn_in_text`) is no
table. Tables of figures whose columns the visual lines hide are
``chunkweave.parsers.pdf.tables.spaced``'s.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from statistics import median

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.tables.element import table_from_lines
from chunkweave.parsers.pdf.text import Line

MIN_ROWS = 3
MIN_COLS = 3
_BIN = 6.0


def visual_rows(lines: Sequence[Line]) -> list[list[Line]]:
    """Group lines into rows by vertical centre, top to bottom, each row left to right."""
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
    starts: list[float] = []
    for x in sorted(b * _BIN for b, n in votes.items() if n >= MIN_ROWS):
        # Starts one bin apart are one column whose cells are centred or
        # right-aligned ("06" under "01-05"), not two columns.
        if not starts or x - starts[-1] > 2 * _BIN:
            starts.append(x)
    return starts


def _column_of(x: float, starts: list[float]) -> int | None:
    best = None
    for i, s in enumerate(starts):
        if x >= s - _BIN:
            best = i
    return best


def find_grid_tables(lines: Sequence[Line], page_no: int) -> list[Element]:
    """Return unruled tables found on a page's lines (``order`` 0)."""
    rows = visual_rows(lines)
    starts = _column_starts(rows)
    if len(starts) < MIN_COLS:
        return []
    tables: list[Element] = []
    run: list[list[Line]] = []
    before: list[Line] = []  # the row just above the run: a header set apart?
    for row in rows + [[]]:
        continuation = (
            len(row) == 1
            and bool(run)
            and row[0].bbox[0] > starts[0] + _BIN
            and row[0].bbox[1] - run[-1][-1].bbox[3] < 1.5 * row[0].height
        )
        if _aligned(row, starts) or continuation:
            run.append(row)
            continue
        table = _build(run, starts, page_no, _header_above(before, run, starts))
        if table is not None:
            tables.append(table)
        run, before = [], row
    return tables


def _aligned(row: list[Line], starts: list[float]) -> bool:
    """Tell whether a row's pieces sit in distinct columns, most on a column start.

    Centred or right-aligned cells ("06" under "01-05") start inside their column
    rather than on its start; two pieces on starts are enough to anchor the row.
    """
    if len(row) < 2:
        return False
    cols = [_column_of(ln.bbox[0], starts) for ln in row]
    if None in cols or len(set(cols)) < len(cols):
        return False
    on_start = sum(1 for ln in row if any(abs(ln.bbox[0] - s) <= _BIN for s in starts))
    return on_start >= min(2, len(row)) and on_start >= len(row) - 1


def _header_above(before: list[Line], run: list[list[Line]], starts: list[float]) -> list[Line]:
    """Return the row above the run when it is the run's header (else an empty list).

    A header whose labels are centred over their columns ("LINE" over a column of
    numbers) does not align with the data: it is taken when it is bold or upper
    case, has one label per column of the run and sits right above it.
    """
    if not run or not before or _aligned(before, starts):
        return []
    cols = {_column_of(ln.bbox[0], starts) for r in run for ln in r} - {None}
    gap = run[0][0].bbox[1] - max(ln.bbox[3] for ln in before)
    tops = [r[0].bbox[1] for r in run]
    pitch = sorted(b - a for a, b in zip(tops, tops[1:], strict=False))
    # Headers are often set off by a blank line or two: allow about two row pitches.
    reach = max(3 * before[0].height, 2 * pitch[len(pitch) // 2]) if pitch else 0.0
    if (
        len(before) == len(cols)
        and all(ln.bold or ln.text.isupper() for ln in before)
        and 0 <= gap < reach
    ):
        return before
    return []


def _build(
    run: list[list[Line]], starts: list[float], page_no: int, header: list[Line]
) -> Element | None:
    """Build the table of a run of rows (``header``: a separate header row above, or empty)."""
    if sum(1 for r in run if len(r) >= MIN_COLS) < MIN_ROWS:
        return None
    used = sorted({c for r in run for ln in r if (c := _column_of(ln.bbox[0], starts)) is not None})
    if len(used) < MIN_COLS:
        return None
    index = {c: i for i, c in enumerate(used)}
    grid: list[list[str]] = []
    if len(header) == len(used):
        grid.append([ln.text for ln in header])
    wrapped = _wrapped_rows(run, starts)
    for k, row in enumerate(run):
        cells = [""] * len(used)
        for ln in row:
            col = _column_of(ln.bbox[0], starts)
            if col in index:
                cells[index[col]] = f"{cells[index[col]]} {ln.text}".strip()
        if (len(row) == 1 or k in wrapped) and len(grid) > (1 if header else 0):
            # An indented single piece, or a wrapped row's next line, continues the
            # cells above it.
            for i, text in enumerate(cells):
                if text:
                    grid[-1][i] = f"{grid[-1][i]} {text}".strip()
        else:
            grid.append(cells)
    rows = tuple(tuple(r) for r in grid)
    if drawn_in_text(rows):
        return None
    first = header or run[0]
    # Bold or capitals mark a header only where the body is set otherwise.
    body = run if header else run[1:]
    header_rows = 1 if _marked(first) and not all(map(_marked, body)) and len(rows) > 1 else 0
    pieces = [*header, *(ln for r in run for ln in r)]
    return table_from_lines(pieces, rows, header_rows, page_no)


def _marked(row: Sequence[Line]) -> bool:
    """Tell whether a row's worded pieces are all bold or capitals (figures count neither way)."""
    worded = [ln for ln in row if ln.bold or any(c.isalpha() for c in ln.text)]
    return bool(worded) and all(ln.bold or ln.text.isupper() for ln in worded)


#: A wrapped row's next line sits this many line heights closer under it than the
#: table's rows sit under each other.
WRAP_CLOSER = 0.3


def _wrapped_rows(run: list[list[Line]], starts: list[float]) -> set[int]:
    """Return the indices of the run's rows that are the next lines of wrapped rows.

    Tables whose rows are set a blank line apart wrap long cells onto lines at line
    pitch under them ("40025" over "EASTLAND", a company name over "INC."). Such a
    line leaves the first column empty and some other column that its row fills,
    and sits closer under the line above than rows sit under each other (rows that
    have the first column). Rows at one pitch throughout (a stub column filled only
    on a group's first row) join nothing.
    """
    height = median(ln.height for r in run for ln in r)
    first = min(c for r in run for ln in r if (c := _column_of(ln.bbox[0], starts)) is not None)

    def columns(row: list[Line]) -> set[int | None]:
        return {_column_of(ln.bbox[0], starts) for ln in row}

    def gap(k: int) -> float:
        return min(ln.bbox[1] for ln in run[k]) - max(ln.bbox[3] for ln in run[k - 1])

    heads = [k for k in range(1, len(run)) if first in columns(run[k])]
    if not heads:
        return set()
    spacing = median(gap(k) for k in heads)
    out: set[int] = set()
    head = 0
    for k in range(1, len(run)):
        cols = columns(run[k])
        if first in cols:
            head = k
            continue
        filled = columns(run[head]) - {first}
        if gap(k) <= spacing - WRAP_CLOSER * height and filled - cols:
            out.add(k)
    return out


#: Share of cells starting or ending in a frame character that makes a drawing.
FRAMED_SHARE = 0.25
#: Share of a column's filled cells that are frame characters when the column is a frame.
FRAME_COLUMN_SHARE = 0.8
_BOX = re.compile(r"^[|+\-=_*#]+$")
_CORNER = re.compile(r"\+-{3,}|-{3,}\+")


def drawn_in_text(rows: Sequence[Sequence[str]]) -> bool:
    """Tell whether a grid is a screen or box drawn with characters, not a table.

    Manuals show terminal panels in monospaced type, framed with ``|`` and
    ``+-----+``; their words line up in columns like a table's. A column made of
    frame characters, box corners in two cells, or a quarter of the cells
    starting or ending with a frame character gives the drawing away.
    """
    if sum(1 for r in rows for c in r if _CORNER.search(c)) >= 2:
        return True
    filled = [c for r in rows for c in r if c]
    framed = sum(1 for c in filled if c[0] in "|+" or c[-1] in "|+")
    if framed >= max(2, FRAMED_SHARE * len(filled)):
        return True
    for col in zip(*rows, strict=False):
        filled = [c for c in col if c]
        if len(filled) >= MIN_ROWS and sum(
            1 for c in filled if _BOX.match(c)
        ) >= FRAME_COLUMN_SHARE * len(filled):
            return True
    return False


def aligned_grid(lines: list[Line]) -> bool:
    """Return True when three rows of three or more pieces share three column starts."""
    rows: dict[int, list[int]] = {}
    for ln in lines:
        rows.setdefault(round((ln.bbox[1] + ln.bbox[3]) / 4), []).append(round(ln.bbox[0] / 6))
    starts = Counter(x for xs in rows.values() if len(xs) >= 3 for x in set(xs))
    return sum(1 for n in starts.values() if n >= 3) >= 3

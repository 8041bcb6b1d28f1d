"""Column x-ranges of a table of figures, from the pieces of its rows.

The columns are the x-ranges the data rows' pieces cover, split where white
space runs down the whole body (a tenth of the rows may cross it: a spanning
label). Cells spanning several columns keep their text in the first one.
"""

from __future__ import annotations

from chunkweave.parsers.pdf.text import Line


def table_columns(rows: list[list[Line]]) -> list[tuple[float, float]]:
    """Column x-ranges: the x-ranges the rows cover, cut where white space runs down."""
    # How many rows cover each x (whole points): +1 where a row's merged pieces
    # start, -1 after they end, swept left to right.
    events: dict[int, int] = {}
    for row in rows:
        spans: list[list[int]] = []
        for a, b in sorted((int(ln.bbox[0]), int(ln.bbox[2])) for ln in row):
            if spans and a <= spans[-1][1] + 1:
                spans[-1][1] = max(spans[-1][1], b)
            else:
                spans.append([a, b])
        for a, b in spans:
            events[a] = events.get(a, 0) + 1
            events[b + 1] = events.get(b + 1, 0) - 1
    stray = len(rows) // 10
    cols: list[tuple[float, float]] = []
    depth, opened = 0, None
    for x in sorted(events):
        depth += events[x]
        if depth > stray and opened is None:
            opened = x
        elif depth <= stray and opened is not None:
            cols.append((float(opened), float(x - 1)))
            opened = None
    # A few long cells (the row labels that wrap least) reach into the gap the
    # stray allowance opened: the column extends over them, short of the next one.
    wide = [list(c) for c in cols]
    for ln in (ln for row in rows for ln in row):
        i = column_of(ln, cols)
        wide[i][0] = min(wide[i][0], ln.bbox[0])
        wide[i][1] = max(wide[i][1], ln.bbox[2])
    for i in range(len(wide)):
        if i > 0:
            wide[i][0] = max(wide[i][0], wide[i - 1][1] + 1, cols[i - 1][1] + 1)
        if i + 1 < len(wide):
            wide[i][1] = min(wide[i][1], cols[i + 1][0] - 1)
    return [(a, b) for a, b in wide]


def column_of(piece: Line, cols: list[tuple[float, float]]) -> int:
    """Return the index of the first column ``piece`` overlaps, else of the nearest."""
    x0, x1 = piece.bbox[0], piece.bbox[2]
    best, best_overlap = 0, -1e9
    for i, (a, b) in enumerate(cols):
        overlap = min(x1, b) - max(x0, a)
        if overlap > 0:
            return i  # a spanning piece keeps its text in its first column
        if overlap > best_overlap:
            best, best_overlap = i, overlap
    return best

"""Merged cells of a ruled grid, filled as their spans say.

``find_tables`` gives a merged cell's box at its first (top-left) position and
``None`` at every grid position it covers. A covered position whose text is left
empty loses what the merged cell says about it: a row-spanning key ("Plan type:
GMC" over five rows) leaves four rows without their key, and a header spanning
columns ("Modern method" over seven) leaves six columns without it. So:

- a position covered from above in its own column (a row span) gets the merged
  cell's text, in every row, unless that text is a figure: a quantity spanning
  rows is one value for the rows together ("8" halt stations over two states, which
  the total counts once), and repeating it would count it once per row;
- a position of the first row covered from its left (a column span of the header)
  gets it too, unless one merged cell spans that whole row (a title, not labels);
- other column spans (a group label drawn across a data row) keep their text in
  the first cell only, so the row is not repeated across the table.

A two-level header is told by its spans too (:func:`header_depth`): a first-row
label spanning several columns over a second row that names them, with the
first row's other labels reaching down through that second row.
"""

from __future__ import annotations

from collections.abc import Sequence

from chunkweave.parsers.pdf.tables.cells import is_figure

Position = tuple[int, int]


def covering_cells(grid: object) -> dict[Position, Position]:
    """Map each covered grid position ``(row, col)`` to the position of its merged cell.

    ``grid`` is a PyMuPDF ``Table``: ``rows[i].cells`` holds each position's box, or
    ``None`` where a merged cell covers it; ``rows[i].bbox`` the row's box. A covered
    position's centre is found inside the box of the nearest cell up and to its left.
    Positions whose column has no cell of its own anywhere are left out.
    """
    rows = grid.rows  # type: ignore[attr-defined]
    lefts: dict[int, float] = {}
    for row in rows:
        for col, cell in enumerate(row.cells):
            if cell is not None and col not in lefts:
                lefts[col] = float(cell[0])
    right = max((float(c[2]) for row in rows for c in row.cells if c is not None), default=0.0)
    owners: dict[Position, Position] = {}
    for r, row in enumerate(rows):
        y = (float(row.bbox[1]) + float(row.bbox[3])) / 2
        for c, cell in enumerate(row.cells):
            if cell is not None or c not in lefts:
                continue
            x = (lefts[c] + lefts.get(c + 1, right)) / 2
            owner = _owner(rows, r, c, x, y)
            if owner is not None:
                owners[(r, c)] = owner
    return owners


def _owner(rows: Sequence[object], r: int, c: int, x: float, y: float) -> Position | None:
    for q in range(r, -1, -1):
        cells = rows[q].cells  # type: ignore[attr-defined]
        for k in range(min(c, len(cells) - 1), -1, -1):
            box = cells[k]
            if box is not None and box[0] <= x <= box[2] and box[1] <= y <= box[3]:
                return (q, k)
    return None


def fill_spans(
    rows: Sequence[Sequence[str]], owners: dict[Position, Position]
) -> tuple[tuple[str, ...], ...]:
    """Return ``rows`` with covered positions filled as the module says.

    ``rows[r][c]`` is the text at grid position ``(r, c)`` (empty where covered);
    ``owners`` comes from :func:`covering_cells` for the same grid.
    """
    out = [list(row) for row in rows]
    # A first row that is one merged cell across the whole width is a title, not labels.
    width = len(out[0]) if out else 0
    title = width > 1 and all(owners.get((0, c)) == (0, 0) for c in range(1, width))
    for (r, c), (q, k) in sorted(owners.items()):
        if r >= len(out) or c >= len(out[r]) or out[r][c] or q >= len(out) or k >= len(out[q]):
            continue
        row_span = k == c and q < r and not is_figure(out[q][k])
        header_span = r == 0 and q == 0 and not title
        if row_span or header_span:
            out[r][c] = out[q][k]
    return tuple(tuple(row) for row in out)


def header_depth(owners: dict[Position, Position], n_rows: int, n_cols: int) -> int:
    """Return how many leading rows are header: 2 for a two-level header, else 1.

    The second row is header when every position of it is either covered from the
    first row (a label spanning both rows) or sits under a first-row label spanning
    columns (a group label, the second row naming its columns), and there is at
    least one such group label. A row-spanning key in a data row (no group label
    above) changes nothing; at least one data row is always left.
    """
    if n_rows < 3 or n_cols < 2:
        return 1
    grouped: set[int] = set()  # first-row columns under a label spanning columns
    for (r, c), (q, k) in owners.items():
        if r == 0 and q == 0 and k < c:
            grouped.update((k, c))
    if not grouped or len(grouped) >= n_cols:  # none, or one title across the row
        return 1
    for c in range(n_cols):
        owner = owners.get((1, c))
        spans_down = owner is not None and owner[0] == 0 and owner[1] == c
        if not spans_down and c not in grouped:
            return 1
    return 2


def join_wrapped_header(rows: Sequence[Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    """Return ``rows`` with a header label wrapped around a centred sibling joined.

    ``find_tables`` may cut a header into one grid row per text line where no rule
    parts them: "Read &" and "Write" land two rows apart with "Illiterate",
    centred beside them, in the row between. Among the leading rows (before the
    first with two figures), a run of rows is one row when some column's label
    resumes after a row where only its siblings have text, no column has text in
    two consecutive rows of the run, and no row of it repeats a spanning label.
    """
    out = [tuple(r) for r in rows]
    zone = 0
    while zone < len(out) and sum(1 for c in out[zone] if is_figure(c)) < 2:
        zone += 1
    i = 0
    while i < zone:
        j = _wrapped_run(out, i, zone)
        if j is None:
            i += 1
            continue
        # Rows below repeating the run's last texts (a row span filled) join it too.
        while j + 1 < zone and all(
            not t or (c < len(out[j]) and out[j][c] == t) for c, t in enumerate(out[j + 1])
        ):
            j += 1
        width = max(len(r) for r in out[i : j + 1])
        joined = tuple(
            " ".join(dict.fromkeys(r[c] for r in out[i : j + 1] if c < len(r) and r[c]))
            for c in range(width)
        )
        out[i : j + 1] = [joined]
        zone -= j - i
        i += 1
    return tuple(out)


def _wrapped_run(rows: list[tuple[str, ...]], i: int, zone: int) -> int | None:
    """Return the last row of a wrapped header run starting at ``rows[i]``, or None."""

    def spanned(r: tuple[str, ...]) -> bool:
        filled = [c for c in r if c]
        return len(filled) != len(set(filled))

    for j in range(i + 2, zone):
        run = rows[i : j + 1]
        if any(spanned(r) for r in run):
            return None
        width = max(len(r) for r in run)
        cols = [[k for k, r in enumerate(run) if c < len(r) and r[c]] for c in range(width)]
        if any(b - a == 1 for ks in cols for a, b in zip(ks, ks[1:], strict=False)):
            return None
        if any(len(ks) >= 2 for ks in cols):
            return j
    return None

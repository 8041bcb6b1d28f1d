"""Header rows of a text-grid table: labels spanning columns, labels wrapped over lines.

A spanning label ("Actual" over six year columns) sits in a header line above the
columns it groups. Put in the one column its left edge falls in, it names that
column alone and leaves the others without it. Report generators underline it with
a rule that runs exactly under its columns (one segment per column, joined by
:func:`~.rules.horizontal_rules`): :func:`label_spans` gives the label the columns
whose middle lies on that rule. Without a rule the label keeps the column its text
starts in: a label centred over three columns is also centred over the middle
one, and which it names cannot be told. A rule over every column, or one reaching
into the first column (the stub of row labels), marks no group. As for ruled
tables (:mod:`.spans`), a spanning label's text is written in each column it covers.

Header labels also wrap over lines. :func:`header_grid` joins a header's lines
into one row where some column's label runs over them as a *wrapped cell*: a run
of its pieces stacked closely, with a line among them on which no sibling column
has a piece (its first line alone: "Actual 2003–04" over "to 2008–09"), or on
which siblings have pieces but it has none (a sibling centred between its lines:
"Read &" and "Write" around "Illiterate"). Where every line of a column's stack
is shared with its siblings, the lines are rows of their own, as in a body
(stacked values, or labels set in parallel lines). A rule between two lines always
parts them.
"""

from __future__ import annotations

from collections.abc import Sequence

from chunkweave.parsers.pdf.tables.columns import column_of
from chunkweave.parsers.pdf.text import Line

Rule = tuple[float, float, float]  # x0, x1, y

#: A rule under a label lies within this many label heights below its bottom.
RULE_REACH = 1.2
#: A label spans a rule's columns only when it is at most this share of the rule wide.
FILL_SHARE = 0.75
#: Two pieces of one column this close (line heights between them) are one stack.
STACK_GAP = 1.5


def label_spans(
    row: Sequence[Line], cols: Sequence[tuple[float, float]], rules: Sequence[Rule] = ()
) -> list[tuple[int, int]]:
    """Return the first and last column of each label of a header ``row`` (left to right)."""
    pieces = sorted(row, key=lambda ln: ln.bbox[0])
    out: list[tuple[int, int]] = []
    for ln in pieces:
        home = column_of(ln, list(cols))
        span = _under_rule(ln, cols, rules)
        if span is None or span[0] == 0 or (span[0], span[1]) == (0, len(cols) - 1):
            span = (home, home)
        out.append(span)
    return out


def _under_rule(
    ln: Line, cols: Sequence[tuple[float, float]], rules: Sequence[Rule]
) -> tuple[int, int] | None:
    """Return the columns of a rule drawn right under the label (two or more), or None."""
    mid = (ln.bbox[0] + ln.bbox[2]) / 2
    for x0, x1, y in rules:
        below = 0 <= y - ln.bbox[3] <= RULE_REACH * ln.height
        if not below or not x0 <= mid <= x1 or x1 - x0 < ln.bbox[2] - ln.bbox[0]:
            continue
        covered = [c for c, (a, b) in enumerate(cols) if x0 - 1 <= (a + b) / 2 <= x1 + 1]
        # A piece filling its rule is labels glued together ("Total Male Female"),
        # not one label set over the columns.
        narrow = ln.bbox[2] - ln.bbox[0] <= FILL_SHARE * (x1 - x0)
        if narrow and len(covered) >= 2 and covered == list(range(covered[0], covered[-1] + 1)):
            return covered[0], covered[-1]
    return None


def header_grid(
    head: Sequence[Sequence[Line]],
    cols: Sequence[tuple[float, float]],
    rules: Sequence[Rule] = (),
) -> list[list[str]]:
    """Lay a table's header lines (top to bottom) out as rows of cell texts.

    Lines are joined into rows as the module says; each line's labels go to the
    columns :func:`label_spans` gives them (where the line has fewer labels than
    there are columns), a cell's lines joined by spaces.
    """
    lines = [sorted(line, key=lambda ln: ln.bbox[0]) for line in head]
    placed: list[list[tuple[Line, int, int]]] = []
    for line in lines:
        if len(line) < len(cols):
            spans = label_spans(line, cols, rules)
        else:
            spans = [(column_of(ln, list(cols)),) * 2 for ln in line]
        placed.append([(ln, a, b) for ln, (a, b) in zip(line, spans, strict=True)])
    rows: list[list[str]] = []
    for group in _row_groups(placed, cols, rules):
        cells = [""] * len(cols)
        for i in group:
            for ln, first, last in placed[i]:
                for c in range(first, last + 1):
                    cells[c] = f"{cells[c]} {ln.text}".strip()
        rows.append(cells)
    return rows


def _row_groups(
    placed: Sequence[Sequence[tuple[Line, int, int]]],
    cols: Sequence[tuple[float, float]],
    rules: Sequence[Rule],
) -> list[list[int]]:
    """Group consecutive header lines (indices) into rows: wrapped cells bind lines.

    A line alone is the first or last line of a wrapped label only when its one
    piece lies over one column: a label over several (a group label set without a
    rule) is a level of the header of its own.
    """
    n = len(placed)

    def lone(k: int) -> bool:
        if len(placed[k]) != 1:
            return False
        ln = placed[k][0][0]
        over = [1 for a, b in cols if min(b, ln.bbox[2]) - max(a, ln.bbox[0]) > 0]
        return len(over) == 1

    bound = [False] * max(n - 1, 0)  # bound[i]: lines i and i + 1 are one row
    width = max((last for line in placed for _, _, last in line), default=0) + 1
    for c in range(width):
        stack = [i for i, line in enumerate(placed) if any(a <= c <= b for _, a, b in line)]
        for run in _stacks(stack, placed, c, rules):
            if len(run) < 2:
                continue
            inside = range(run[0], run[-1] + 1)
            alone = any(lone(k) for k in run)
            skipped = any(k not in run and placed[k] for k in inside)
            if alone or skipped:
                for k in inside[:-1]:
                    bound[k] = True
    groups: list[list[int]] = []
    for i in range(n):
        if i and bound[i - 1]:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _stacks(
    stack: list[int],
    placed: Sequence[Sequence[tuple[Line, int, int]]],
    c: int,
    rules: Sequence[Rule],
) -> list[list[int]]:
    """Split the lines holding a piece in column ``c`` into runs of close pieces."""

    def piece(i: int) -> Line:
        return next(ln for ln, a, b in placed[i] if a <= c <= b)

    runs: list[list[int]] = []
    for i in stack:
        if runs:
            upper, lower = piece(runs[-1][-1]), piece(i)
            gap = lower.bbox[1] - upper.bbox[3]
            ruled = any(
                upper.bbox[3] - 1 <= y <= lower.bbox[1] + 1
                and min(b, lower.bbox[2]) - max(a, lower.bbox[0]) > 0
                for a, b, y in rules
            )
            if gap <= STACK_GAP * upper.height and not ruled:
                runs[-1].append(i)
                continue
        runs.append([i])
    return runs

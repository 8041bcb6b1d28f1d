"""Tables of contents and indexes: entries joined to page references by dot leaders.

A contents page ("1.2 Scope . . . . . 7") or a back-of-book index ("cbind . . . 26,
31") is a two-column table (entry, page reference) that neither ruled nor aligned
table detection sees: it has no rules and one long text piece per row. Left as
text, its entries become paragraphs full of dots that match every query about
their titles. This module finds them on a page's visual lines:

1. a *leader line* ends in two or more leader dots followed by a page reference
   (arabic or roman numbers, a list of them, or a range), possibly as a separate
   piece on the same row;
2. leader lines are grouped by their right edge (the references are right-aligned
   in a column); each group of ``MIN_ENTRIES`` or more is a column;
3. the column's lines are read top to bottom: a leader line is a row, a line of the
   same size just above a leader line is the first part of a wrapped entry, and
   anything else (a letter group heading, a wide gap, body text) ends the table.

Each table has rows ``(entry, reference)`` with the dots removed and no header row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from chunkweave.parsers.elements import Element, table_element
from chunkweave.parsers.pdf.geometry import BBox, enclose, union
from chunkweave.parsers.pdf.text import Line
from chunkweave.parsers.pdf.typography import set_close

#: Fewest entries a table of contents or index column must have.
MIN_ENTRIES = 3
#: A vertical gap wider than this many line heights ends a table.
MAX_GAP_LINES = 2.5

_REF = r"(?:[0-9]{1,5}|[ivxlcdm]{1,7})(?:\s*[,–-]\s*(?:[0-9]{1,5}|[ivxlcdm]{1,7}))*"
_DOTS = r"(?:(?:[.·]\s*){2,}|(?:…\s*)+)"
_LEADER = re.compile(rf"^(?P<entry>.*?\S)\s*{_DOTS}(?P<ref>{_REF})?$", re.IGNORECASE)
_REF_ONLY = re.compile(rf"^{_REF}$", re.IGNORECASE)
# A piece of figures: "9,739", "0.9", "– 14.1", "(X)".
_NUMBERS = re.compile(r"^[-–—(X)\s]*\d[\d.,%\s–-]*$")


@dataclass
class _Row:
    """One entry being built: its text, reference, box and the lines it used."""

    entry: str
    ref: str
    bbox: BBox
    size: float
    lines: list[int] = field(default_factory=list)


def _leader_rows(lines: Sequence[Line]) -> dict[int, _Row]:
    """Return the leader lines of a page by line index (reference pieces attached)."""
    rows: dict[int, _Row] = {}
    for i, ln in enumerate(lines):
        if ln.text.count(".") + ln.text.count("·") + ln.text.count("…") < 2:
            continue
        m = _LEADER.match(ln.text.strip())
        if m is None:
            continue
        rows[i] = _Row(m["entry"].rstrip(" .·…"), m["ref"] or "", ln.bbox, ln.size, [i])
    for row in rows.values():
        if row.ref:
            continue
        # The reference printed as its own piece to the right, on the same row.
        y0, y1 = row.bbox[1], row.bbox[3]
        for j, ln in enumerate(lines):
            if j in rows or ln.bbox[0] < row.bbox[2] - 1 or not _REF_ONLY.match(ln.text.strip()):
                continue
            if ln.bbox[1] < y1 and ln.bbox[3] > y0 and ln.bbox[0] - row.bbox[2] < 6 * ln.height:
                row.ref = ln.text.strip()
                row.bbox = union(row.bbox, ln.bbox)
                row.lines.append(j)
                break
    return {i: r for i, r in rows.items() if r.ref and r.entry and not _more_numbers(r, lines)}


def _more_numbers(row: _Row, lines: Sequence[Line]) -> bool:
    """Tell whether another number follows the reference on its row: a table of figures.

    A statistical table sets its row labels with leaders too ("Robbery . . . 726
    989"); a page reference is the last thing on its row (a second column of
    contents entries to its right starts with text).
    """
    y0, y1 = row.bbox[1], row.bbox[3]
    return any(
        j not in row.lines
        and ln.bbox[0] >= row.bbox[2] - 1
        and ln.bbox[1] < y1
        and ln.bbox[3] > y0
        and _NUMBERS.match(ln.text.strip())
        for j, ln in enumerate(lines)
    )


def find_leader_tables(lines: Sequence[Line], page_no: int) -> list[Element]:
    """Return the contents/index tables of a page (``order`` 0), top to bottom per column."""
    rows = _leader_rows(lines)
    if len(rows) < MIN_ENTRIES:
        return []
    pieces = {j for row in rows.values() for j in row.lines}  # incl. separate references
    tables: list[Element] = []
    used: set[int] = set()
    for members in _edge_groups(rows):
        if len(members) < MIN_ENTRIES:
            continue
        x0 = min(rows[i].bbox[0] for i in members)
        x1 = max(rows[i].bbox[2] for i in members)
        column = [
            j
            for j, ln in enumerate(lines)
            if j not in used
            and (j in rows or j not in pieces)
            and x0 - 1 <= (ln.bbox[0] + ln.bbox[2]) / 2 <= x1 + 1
        ]
        column.sort(key=lambda j: lines[j].bbox[1])
        for run in _runs(column, lines, rows, x0, x1):
            if len(run) >= MIN_ENTRIES:
                tables.append(_element(run, page_no))
                used.update(j for r in run for j in r.lines)
    tables.sort(key=lambda t: (t.bbox or (0, 0, 0, 0))[1])
    return tables


def _runs(
    column: list[int], lines: Sequence[Line], rows: dict[int, _Row], x0: float, x1: float
) -> list[list[_Row]]:
    """Split a column's lines (top to bottom) into runs of entries.

    A line that is not an entry either starts a wrapped entry (a long line of the
    entries' size, chained to a leader line right below it) or ends the run; a
    non-entry line never ends up inside a run, so no text is lost under a table box.
    """
    runs: list[list[_Row]] = [[]]
    pending: list[int] = []  # lines that may start a wrapped entry

    def chained(upper: int, lower: Line) -> bool:
        # Same size, and less than a blank line between them.
        above = lines[upper]
        return abs(above.size - lower.size) < 0.5 and set_close(
            lower.bbox[1] - above.bbox[3], lower.height
        )

    last_bottom: float | None = None
    for j in column:
        ln = lines[j]
        if last_bottom is not None and ln.bbox[1] - last_bottom > MAX_GAP_LINES * ln.height:
            runs.append([])
            pending = []
        last_bottom = ln.bbox[3]
        if j in rows:
            row = rows[j]
            if pending and chained(pending[-1], ln):
                row.entry = " ".join([*(lines[k].text.strip() for k in pending), row.entry])
                for k in pending:
                    row.bbox = union(row.bbox, lines[k].bbox)
                row.lines[:0] = pending
            elif pending:
                runs.append([])  # the pending lines stay text, between two runs
            runs[-1].append(row)
            pending = []
            continue
        wraps = ln.bbox[2] >= x0 + 0.5 * (x1 - x0) and (not pending or chained(pending[-1], ln))
        if wraps:
            pending.append(j)
            continue
        # A letter group heading, a short note, body text: the run ends here.
        runs.append([])
        pending = [j] if ln.bbox[2] >= x0 + 0.5 * (x1 - x0) else []
    return runs


def _edge_groups(rows: dict[int, _Row]) -> list[list[int]]:
    """Group leader lines whose right edges lie within 4 pt of the previous one's."""
    groups: list[list[int]] = []
    last = None
    for i in sorted(rows, key=lambda i: rows[i].bbox[2]):
        if last is None or rows[i].bbox[2] - last > 4:
            groups.append([])
        groups[-1].append(i)
        last = rows[i].bbox[2]
    return groups


def _element(run: list[_Row], page_no: int) -> Element:
    bbox = enclose([row.bbox for row in run])
    return table_element(tuple((row.entry, row.ref) for row in run), 0, page=page_no, bbox=bbox)

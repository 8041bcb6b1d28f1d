"""Two-column unruled tables: a short key column beside a value column.

Manuals print option lists, key bindings, glossaries and small lookup tables as
two aligned columns without rules ("binomial    logit, probit, log"). The grid
detector (``chunkweave.parsers.pdf.tables.grid``) needs three columns, so these stay text: every
key becomes a paragraph or code line apart from its value. A two-column layout
is, however, also what a page of prose with a margin heading column or a
two-column paper looks like, so the test is strict:

1. a run of at least ``MIN_ROWS`` consecutive rows of exactly two pieces whose
   left edges align (within 6 pt) with the first row's, at most two line heights
   apart; a single piece under the value column continues the value above;
2. the keys are short next to the distance between the columns (median width at
   most ``MAX_KEY_SHARE`` of it) and clear of the values by a wide gap;
3. the values are not running prose: justified prose fills its measure on most
   lines, so a wide value column whose lines mostly reach its full width is
   rejected (a margin heading column beside body text);
4. no key is a list marker or footnote number, and the values are not code
   comments (``# ...``, ``// ...``) beside code;
5. the rows are not a panel drawn with ``|`` and ``+---+`` (``grid.drawn_in_text``).

The first row is a header when it is bold or upper case, or set in another font
kind (plain above monospaced keys).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.tables.element import table_from_lines
from chunkweave.parsers.pdf.tables.grid import drawn_in_text, visual_rows
from chunkweave.parsers.pdf.text import Line

MIN_ROWS = 3
#: Keys wider than this share of the key-to-value distance are text, not keys.
MAX_KEY_SHARE = 0.6
#: Value columns narrower than this (points) are never taken for running prose.
PROSE_WIDTH = 200.0
_ALIGN = 6.0
_MARKER = re.compile(r"^[\W\d]{1,3}$")
_COMMENT = re.compile(r"^(?:#|//|--|;|%)")


def find_pair_tables(lines: Sequence[Line], page_no: int) -> list[Element]:
    """Return the two-column key/value tables among a page's lines (``order`` 0)."""
    tables: list[Element] = []
    run: list[list[Line]] = []  # each entry: [key, value, value continuation...]
    for row in visual_rows(lines):
        if run and _continues(row, run):
            run[-1].append(row[0])
            continue
        if run and _extends(row, run):
            run.append(list(row))
            continue
        table = _build(run, page_no)
        if table is not None:
            tables.append(table)
        run = [list(row)] if _pair(row) else []
    table = _build(run, page_no)
    if table is not None:
        tables.append(table)
    return tables


def _pair(row: list[Line]) -> bool:
    return (
        len(row) == 2
        and not _MARKER.match(row[0].text.strip())
        and not _COMMENT.match(row[1].text.strip())
    )


def _extends(row: list[Line], run: list[list[Line]]) -> bool:
    first, last = run[0], run[-1]
    return (
        _pair(row)
        and abs(row[0].bbox[0] - first[0].bbox[0]) <= _ALIGN
        and abs(row[1].bbox[0] - first[1].bbox[0]) <= _ALIGN
        and row[0].bbox[1] - max(ln.bbox[3] for ln in last) < 2 * row[0].height
    )


def _continues(row: list[Line], run: list[list[Line]]) -> bool:
    """Tell whether a single piece right under the value column wraps the value above."""
    value, last = run[0][1], run[-1]
    return (
        len(row) == 1
        and row[0].bbox[0] >= value.bbox[0] - _ALIGN
        and row[0].bbox[1] - last[-1].bbox[3] < 1.5 * row[0].height
    )


def _prose(values: list[Line], value_x: float) -> bool:
    """Tell whether the value lines are running prose (full, equally wide lines).

    Justified prose beside a margin column fills its measure on every line but
    the last of a paragraph; table values end where their text ends. Only wide
    values (a measure of ``PROSE_WIDTH`` or more) can be prose.
    """
    full = max(v.bbox[2] for v in values) - value_x
    if full < PROSE_WIDTH:
        return False
    filled = sum(1 for v in values if v.bbox[2] - value_x >= 0.9 * full)
    return filled >= 2 * len(values) / 3


def _build(run: list[list[Line]], page_no: int) -> Element | None:
    if len(run) < MIN_ROWS:
        return None
    keys = [r[0] for r in run]
    values = [ln for r in run for ln in r[1:]]
    key_x = min(k.bbox[0] for k in keys)
    value_x = min(v.bbox[0] for v in values)
    span = value_x - key_x
    widths = sorted(k.bbox[2] - k.bbox[0] for k in keys)
    if span <= 0 or widths[len(widths) // 2] > MAX_KEY_SHARE * span:
        return None
    if value_x - max(k.bbox[2] for k in keys) < 1.5 * keys[0].height:
        return None
    if _prose(values, value_x):
        return None
    rows = tuple((r[0].text.strip(), " ".join(v.text.strip() for v in r[1:])) for r in run)
    if drawn_in_text(rows):
        return None
    head = run[0][:2]
    body = [ln for r in run[1:] for ln in r[:1]]
    header = int(
        all(ln.bold or ln.text.isupper() for ln in head)
        or (all(not ln.mono for ln in head) and all(ln.mono for ln in body))
    )
    return table_from_lines([ln for r in run for ln in r], rows, header, page_no)

"""A table's data rows serialised one per line: ``Column: value; Column: value``.

What a table chunk embeds with ``ChunkOptions.table_embed`` ``rows`` or ``both``
(see :mod:`chunkweave.chunking.tables`): each row self-contained, every value next
to its column's label, the labels taken from the header rows as the Markdown header
line joins them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Between a column's label and its value, and between the cells of a serialised row.
LABEL_SEPARATOR = ": "
CELL_SEPARATOR = "; "


def _one_line(cell: str) -> str:
    return " ".join(cell.split())


#: A cell drawn with rule characters only ("------", "====="): a ruling, not a value.
_RULE_CELL = re.compile(r"^[-=_–—~+|.:\s]{3,}$")


def _value(cell: str) -> str:
    """Return the cell on one line, or "" when it is only a drawn rule."""
    text = _one_line(cell)
    return "" if _RULE_CELL.match(text) else text


def column_labels(rows: Sequence[Sequence[str]], header_rows: int) -> tuple[str, ...]:
    """Return each column's label: its header cells, distinct, joined with `` / ``.

    As the Markdown header line joins several header rows (a spanning "2011-12" over
    "Men" gives "2011-12 / Men"). Empty labels for a table without header rows.
    """
    width = max((len(r) for r in rows), default=0)
    labels: list[str] = []
    for col in range(width):
        parts: list[str] = []
        for row in rows[:header_rows]:
            cell = _one_line(row[col]) if col < len(row) else ""
            if cell and cell not in parts:
                parts.append(cell)
        labels.append(" / ".join(parts))
    return tuple(labels)


def row_line(labels: Sequence[str], row: Sequence[str]) -> str:
    """Serialise one data row as ``Label: value; Label: value`` (empty cells left out).

    Cells that are only a drawn rule ("------" under a header) count as empty.

    A cell under an empty label is its value alone. Without any labels (a table with
    no header rows) the row's first filled cell is the label of the rest
    (``key: value; value``), as in a two-column key/value table.
    """
    cells = [_value(c) for c in row]
    if not any(labels):
        filled = [c for c in cells if c]
        if len(filled) < 2:
            return "".join(filled)
        return filled[0] + LABEL_SEPARATOR + CELL_SEPARATOR.join(filled[1:])
    parts = []
    for col, cell in enumerate(cells):
        if not cell:
            continue
        label = labels[col] if col < len(labels) else ""
        parts.append(f"{label}{LABEL_SEPARATOR}{cell}" if label and label != cell else cell)
    return CELL_SEPARATOR.join(parts)


def row_lines(rows: Sequence[Sequence[str]], header_rows: int) -> tuple[str, ...]:
    """Return one :func:`row_line` per data row (after the ``header_rows``), in order.

    An empty row gives an empty line (kept, so line ``i`` is data row ``i``). A table
    with no header rows whose first row reads as one (:func:`_header_like`) takes
    its labels from that row, as its Markdown does; that row is then serialised
    plainly, its cells joined.
    """
    labels = column_labels(rows, header_rows)
    if not header_rows and rows and _header_like(rows[0]):
        labels = column_labels(rows, 1)
        first = CELL_SEPARATOR.join(_one_line(c) for c in rows[0])
        return (first, *(row_line(labels, row) for row in rows[1:]))
    return tuple(row_line(labels, row) for row in rows[header_rows:])


_NUMERIC = re.compile(r"^[\W\d_]*\d[\W\d_]*$")


def _header_like(row: Sequence[str]) -> bool:
    """Tell whether an unlabelled first row reads as column labels.

    Three or more cells, every one filled and none a number or mark: a two-column
    table without a header is a key/value list (see :func:`row_line`).
    """
    cells = [_one_line(c) for c in row]
    return len(cells) >= 3 and all(
        c and not _NUMERIC.match(c) and any(ch.isalpha() for ch in c) for c in cells
    )


def join_rows(lines: Sequence[str]) -> str:
    """Join serialised rows one per line, leaving out empty ones."""
    return "\n".join(line for line in lines if line)

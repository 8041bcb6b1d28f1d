"""The table contract, shared by every strategy.

A table is one chunk when it fits the budget; otherwise it is split into groups of
consecutive data rows, each repeating the header row(s). The caption is part of the
first piece's text and of every piece's embed text (see :mod:`chunking.context`).
Table chunks never contain prose.

Row groups never cut a row. Only a single data row that alone (with the header
rows and caption) exceeds the hard limit is cut between words, by
:mod:`chunking.emit`; those fragments share the row's ``table_row_start``/``end``
and only the first carries the header. Nothing ever exceeds ``max_tokens``.
"""

from __future__ import annotations

from collections.abc import Iterator

from chunking.ids import sha1_hex
from chunking.models import TableFormat
from chunking.tokens import Meter
from chunking.units import Draft, TablePart, TableUnit
from parsers.elements import table_to_html, table_to_markdown


def table_id(unit: TableUnit) -> str:
    """Identity of a table within its document: SHA1 of its cell text (16 hex).

    Content-derived, so it survives edits elsewhere in the document; two identical
    tables in one document share it (their row ranges and chunk IDs still differ).
    """
    return sha1_hex(_rows_text(unit.rows))[:16]


def iter_table_drafts(
    unit: TableUnit, budget: int, fmt: TableFormat, meter: Meter
) -> Iterator[Draft]:
    """Yield the drafts of one table: whole if it fits ``budget``, else row groups.

    ``budget`` is the token allowance for the chunk text (the caller has already
    taken off the context line and caption). Yields nothing for a table with no
    rows.
    """
    if not unit.rows:
        return
    data_count = len(unit.rows) - unit.header_rows
    whole_text = render_part(TablePart(unit, 0, data_count, True, True), fmt)[0]
    if data_count <= 1 or meter.cost(whole_text) <= budget:
        yield Draft(part=TablePart(unit, 0, data_count, first=True, whole=True))
        return
    header = unit.rows[: unit.header_rows]
    width = max(len(r) for r in unit.rows)
    fixed = sum(_row_cost(r, fmt, meter) for r in header) + _frame_cost(fmt, width, meter)
    caption_cost = meter.cost(unit.caption) if unit.caption else 0
    start = 0
    used = fixed + caption_cost
    for index in range(data_count):
        cost = _row_cost(unit.rows[unit.header_rows + index], fmt, meter)
        if index > start and used + cost > budget:
            yield Draft(part=TablePart(unit, start, index, first=start == 0, whole=False))
            start, used = index, fixed
        used += cost
    yield Draft(part=TablePart(unit, start, data_count, first=start == 0, whole=False))


def split_part(part: TablePart) -> tuple[TablePart, TablePart] | None:
    """Halve a table part's row range (``None`` for a single row: unsplittable)."""
    if part.row_end - part.row_start <= 1:
        return None
    middle = (part.row_start + part.row_end) // 2
    return (
        TablePart(part.table, part.row_start, middle, first=part.first, whole=False),
        TablePart(part.table, middle, part.row_end, first=False, whole=False),
    )


def render_part(part: TablePart, fmt: TableFormat) -> tuple[str, str, str]:
    """``(text, markdown, html)`` of a table part; ``text`` uses ``fmt``.

    The part's rows are the header rows followed by its data rows; ``text`` starts
    with the caption on its own line in the table's first piece.
    """
    unit = part.table
    header = unit.rows[: unit.header_rows]
    data = unit.rows[unit.header_rows + part.row_start : unit.header_rows + part.row_end]
    rows = header + data
    markdown = table_to_markdown(rows, unit.header_rows)
    html = table_to_html(rows, unit.header_rows)
    body = markdown if fmt == "markdown" else html
    text = f"{unit.caption}\n{body}" if part.first and unit.caption else body
    return text, markdown, html


def _row_cost(row: tuple[str, ...], fmt: TableFormat, meter: Meter) -> int:
    if fmt == "markdown":
        return meter.cost("| " + " | ".join(row) + " |")
    return meter.cost("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")


def _frame_cost(fmt: TableFormat, width: int, meter: Meter) -> int:
    # The Markdown header separator line, or the <table></table> wrapper.
    if fmt == "markdown":
        return meter.cost("|" + "---|" * width)
    return meter.cost("<table></table>")


def _rows_text(rows: tuple[tuple[str, ...], ...]) -> str:
    return "\n".join("\t".join(row) for row in rows)

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

from collections.abc import Iterable, Iterator

from chunking.budget import Budget
from chunking.context import context_lines
from chunking.ids import sha1_hex
from chunking.models import TableFormat
from chunking.tokens import Meter
from chunking.units import Draft, TablePart, TableUnit, Unit
from parsers.elements import table_to_html, table_to_markdown


def table_id(unit: TableUnit) -> str:
    """Identity of a table within its document: SHA1 of its cell text (16 hex).

    Content-derived, so it survives edits elsewhere in the document; two identical
    tables in one document share it (their row ranges and chunk IDs still differ).
    """
    return sha1_hex(_rows_text(unit.rows))[:16]


def iter_tables_drafts(tables: Iterable[Unit], budget: Budget) -> Iterator[Draft]:
    """Drafts of a run of table units, each table within its hard budget (context included)."""
    for table in tables:
        assert isinstance(table, TableUnit)
        text_budget = budget.hard(table.path, table.caption)
        yield from iter_table_drafts(table, text_budget, budget.opts.table_format, budget.meter)


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
    costs = [_row_cost(unit.rows[unit.header_rows + i], fmt, meter) for i in range(data_count)]
    # First room: data-row tokens a piece can hold (the first piece also holds the caption).
    rooms = (budget - fixed - caption_cost, budget - fixed)
    starts = balanced_row_groups(costs, rooms)
    for start, end in zip(starts, [*starts[1:], data_count], strict=True):
        yield Draft(part=TablePart(unit, start, end, first=start == 0, whole=False))


def balanced_row_groups(costs: list[int], rooms: tuple[int, int]) -> list[int]:
    """Return the first row index of each row group, as even in size as possible.

    ``costs`` are the data rows' token costs; ``rooms`` the tokens of data rows the
    first and every later group may hold. Greedy filling gives the fewest groups
    but can leave a runt (two rows of a twenty-row table) whose embedding is mostly
    the repeated header; instead, the per-group cap is lowered as far as it goes
    without needing more groups than greedy filling, so the groups come out even.
    A row costlier than its room still gets a group of its own (cut later).
    """
    fewest = _greedy_starts(costs, rooms, cap=max(rooms))
    low, high = max(costs, default=0), max(rooms)
    while low < high:
        middle = (low + high) // 2
        if len(_greedy_starts(costs, rooms, cap=middle)) <= len(fewest):
            high = middle
        else:
            low = middle + 1
    return _greedy_starts(costs, rooms, cap=low) if low < max(rooms) else fewest


def _greedy_starts(costs: list[int], rooms: tuple[int, int], cap: int) -> list[int]:
    starts = [0]
    used = 0
    for index, cost in enumerate(costs):
        room = min(rooms[0] if len(starts) == 1 else rooms[1], cap)
        if index > starts[-1] and used + cost > room:
            starts.append(index)
            used = 0
        used += cost
    return starts


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
    markdown = _body(unit, part.row_start, part.row_end, "markdown")
    html = _body(unit, part.row_start, part.row_end, "html")
    body = markdown if fmt == "markdown" else html
    text = f"{unit.caption}\n{body}" if part.first and unit.caption else body
    return text, markdown, html


def prefill_tables(units: Iterable[Unit], budget: Budget) -> None:
    """Count, in one batch, what sizing the tables of ``units`` will cost.

    Each table's whole text, its row lines, its frame and its context line with
    the caption; only a speed-up (see :meth:`chunking.tokens.Meter.prefill`).
    """
    fmt = budget.opts.table_format
    texts: list[str] = []
    for unit in units:
        if not isinstance(unit, TableUnit) or not unit.rows:
            continue
        whole = TablePart(unit, 0, len(unit.rows) - unit.header_rows, True, True)
        texts.append(render_part(whole, fmt)[0])
        texts.extend(_row_text(row, fmt) for row in unit.rows)
        texts.append(_frame_text(fmt, max(len(r) for r in unit.rows)))
        if unit.caption:
            texts.append(unit.caption)
            texts.append("\n".join(context_lines(budget.title, unit.path, unit.caption)))
    budget.meter.prefill(texts)


def _body(unit: TableUnit, row_start: int, row_end: int, fmt: TableFormat) -> str:
    key = (row_start, row_end, fmt)
    body = unit.renders.get(key)
    if body is None:
        header = unit.rows[: unit.header_rows]
        rows = header + unit.rows[unit.header_rows + row_start : unit.header_rows + row_end]
        render = table_to_markdown if fmt == "markdown" else table_to_html
        body = unit.renders[key] = render(rows, unit.header_rows)
    return body


def _row_cost(row: tuple[str, ...], fmt: TableFormat, meter: Meter) -> int:
    return meter.cost(_row_text(row, fmt))


def _row_text(row: tuple[str, ...], fmt: TableFormat) -> str:
    if fmt == "markdown":
        return "| " + " | ".join(row) + " |"
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>"


def _frame_cost(fmt: TableFormat, width: int, meter: Meter) -> int:
    return meter.cost(_frame_text(fmt, width))


def _frame_text(fmt: TableFormat, width: int) -> str:
    # The Markdown header separator line, or the <table></table> wrapper.
    return "|" + "---|" * width if fmt == "markdown" else "<table></table>"


def _rows_text(rows: tuple[tuple[str, ...], ...]) -> str:
    return "\n".join("\t".join(row) for row in rows)

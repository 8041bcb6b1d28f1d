"""The table contract, shared by every strategy.

A table is one chunk when it fits the budget; otherwise it is split into groups of
consecutive data rows, each repeating the header row(s). The caption is part of the
first piece's text and of every piece's embed text (see :mod:`chunkweave.chunking.context`).
Table chunks never contain prose.

Row groups never cut a row. Only a single data row that alone (with the header
rows and caption) exceeds the hard limit is cut between words, by
:mod:`chunkweave.chunking.emit`; those fragments share the row's ``table_row_start``/``end``
and only the first carries the header. Nothing ever exceeds ``max_tokens``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from chunkweave.chunking.budget import Budget
from chunkweave.chunking.context import context_lines
from chunkweave.chunking.ids import sha1_hex
from chunkweave.chunking.models import TableFormat
from chunkweave.chunking.tokens import Meter
from chunkweave.chunking.units import Draft, TablePart, TableUnit, Unit
from chunkweave.parsers.elements import table_to_html, table_to_markdown


def table_id(unit: TableUnit) -> str:
    """Identity of a table within its document: SHA1 of its cell text (16 hex).

    Content-derived, so it survives edits elsewhere in the document; two identical
    tables in one document share it (their row ranges and chunk IDs still differ).
    """
    found = unit.memo.get("table_id")
    if found is None:
        found = unit.memo["table_id"] = sha1_hex(_rows_text(unit.rows))[:16]
    return str(found)


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
    whole = TablePart(unit, 0, data_count, first=True, whole=True)
    lines = _markdown_lines(unit) if fmt == "markdown" and meter.additive else None
    caption_cost = meter.cost(unit.caption) if unit.caption else 0
    if lines is not None:
        # Additive counter: the body's cost is the sum of its lines' costs (exact),
        # and the data rows are costed as they are rendered.
        fixed, costs = _line_costs(unit, lines, meter)
        whole_cost = caption_cost + fixed + sum(costs)
    else:
        whole_cost = meter.cost(part_text(whole, fmt))
    if data_count <= 1 or whole_cost <= budget:
        yield Draft(part=whole)
        return
    if lines is None:
        header = unit.rows[: unit.header_rows]
        width = max(len(r) for r in unit.rows)
        fixed = sum(_row_cost(r, fmt, meter) for r in header) + _frame_cost(fmt, width, meter)
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
    # No group holds more than the cap, so the cap is at least the average group.
    low = max(max(costs, default=0), -(-sum(costs) // len(fewest)))
    high = max(rooms)
    while low < high:
        middle = (low + high) // 2
        if len(_greedy_starts(costs, rooms, cap=middle, most=len(fewest))) <= len(fewest):
            high = middle
        else:
            low = middle + 1
    return _greedy_starts(costs, rooms, cap=low) if low < max(rooms) else fewest


def _greedy_starts(
    costs: list[int], rooms: tuple[int, int], cap: int, most: int | None = None
) -> list[int]:
    """Return each group's first row index, filling groups greedily under ``cap``.

    With ``most``, stop at the first group beyond ``most`` (the binary search in
    :func:`balanced_row_groups` only asks whether a cap fits in so many groups).
    """
    starts = [0]
    used = 0
    room = min(rooms[0], cap)  # the first group's room; later groups get rooms[1]
    for index, cost in enumerate(costs):
        if index > starts[-1] and used + cost > room:
            starts.append(index)
            if most is not None and len(starts) > most:
                return starts
            used = 0
            room = min(rooms[1], cap)
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
    markdown = _body(part.table, part.row_start, part.row_end, "markdown")
    html = _body(part.table, part.row_start, part.row_end, "html")
    return _with_caption(part, markdown if fmt == "markdown" else html), markdown, html


def part_text(part: TablePart, fmt: TableFormat) -> str:
    """Return ``render_part(part, fmt)[0]``, the part's chunk text, rendering ``fmt`` only."""
    return _with_caption(part, _body(part.table, part.row_start, part.row_end, fmt))


def _with_caption(part: TablePart, body: str) -> str:
    caption = part.table.caption
    return f"{caption}\n{body}" if part.first and caption else body


def prefill_tables(units: Iterable[Unit], budget: Budget) -> None:
    """Count, in one batch, what sizing the tables of ``units`` will cost.

    Each table's body (its lines, for an additive counter), its row lines and
    frame otherwise, and its context line with the caption; only a speed-up (see
    :meth:`chunkweave.chunking.tokens.Meter.prefill`).
    """
    fmt = budget.opts.table_format
    meter = budget.meter
    texts: list[str] = []
    for unit in units:
        if not isinstance(unit, TableUnit) or not unit.rows:
            continue
        lines = _markdown_lines(unit) if fmt == "markdown" and meter.additive else None
        if lines is not None:
            texts.extend([*lines.head, lines.frame, *lines.data])
        else:
            whole = TablePart(unit, 0, len(unit.rows) - unit.header_rows, True, True)
            texts.append(part_text(whole, fmt))
            texts.extend(_row_text(row, fmt) for row in unit.rows)
            texts.append(_frame_text(fmt, max(len(r) for r in unit.rows)))
        if unit.caption:
            texts.append(unit.caption)
            texts.append("\n".join(context_lines(budget.title, unit.path, unit.caption)))
    meter.prefill(texts)


def _body(unit: TableUnit, row_start: int, row_end: int, fmt: TableFormat) -> str:
    # Rendered once per (rows, format). A part of a table is cut from the whole
    # table's rendering where that is byte-identical to rendering the part: HTML
    # rows are independent of each other; Markdown rows are too when the table is
    # rectangular and has a header row (else the part's first row or its width
    # would differ).
    key = (row_start, row_end, fmt)
    body = unit.renders.get(key)
    if body is not None:
        return body
    data_count = len(unit.rows) - unit.header_rows
    h = unit.header_rows
    if fmt == "markdown" and (row_start, row_end) != (0, data_count):
        lines = _markdown_lines(unit)
        if lines is not None:
            body = lines.part(row_start, row_end)
    elif fmt == "html" and (row_start, row_end) != (0, data_count):
        rows = unit.memo.get("html_rows")
        if rows is None:
            # Cut into rows once per table, not once per part.
            whole = _body(unit, 0, data_count, "html")
            cut = whole[len("<table>") : -len("</table>")].split("</tr>")[:-1]
            rows = unit.memo["html_rows"] = [r + "</tr>" for r in cut]
        if len(rows) == len(unit.rows):
            kept = rows[:h] + rows[h + row_start : h + row_end]
            body = "<table>" + "".join(kept) + "</table>"
    if body is None:
        rows_of_part = unit.rows[:h] + unit.rows[h + row_start : h + row_end]
        render = table_to_markdown if fmt == "markdown" else table_to_html
        body = render(rows_of_part, h)
    unit.renders[key] = body
    return body


@dataclass(frozen=True, slots=True)
class MarkdownLines:
    """A rectangular table's Markdown, line by line: any part is a selection of lines.

    ``head`` is the header line (empty without header rows: then each part's first
    row is rendered as its header, and that line reads the same as the row's own);
    ``data`` holds one line per data row.
    """

    head: tuple[str, ...]
    frame: str
    data: tuple[str, ...]

    def part(self, row_start: int, row_end: int) -> str:
        """Return the Markdown of data rows ``[row_start, row_end)`` under the header."""
        if self.head:
            lines = [*self.head, self.frame, *self.data[row_start:row_end]]
        else:
            lines = [self.data[row_start], self.frame, *self.data[row_start + 1 : row_end]]
        return "\n".join(lines)


def _markdown_lines(unit: TableUnit) -> MarkdownLines | None:
    """Return the whole table's Markdown as :class:`MarkdownLines` (cached on the unit).

    ``None`` for ragged rows (a part's column count, and so its padding, may
    differ from the whole table's) or when the lines do not come out one per row.
    """
    if "markdown" not in unit.memo:
        found: MarkdownLines | None = None
        if len({len(r) for r in unit.rows}) == 1:
            data_count = len(unit.rows) - unit.header_rows
            lines = _body(unit, 0, data_count, "markdown").split("\n")
            if len(lines) == len(unit.rows) + 1 - max(unit.header_rows - 1, 0):
                if unit.header_rows:
                    found = MarkdownLines((lines[0],), lines[1], tuple(lines[2:]))
                else:
                    found = MarkdownLines((), lines[1], (lines[0], *lines[2:]))
                if len(found.data) != data_count:
                    found = None
        unit.memo["markdown"] = found
    return unit.memo["markdown"]


def part_cost(part: TablePart, fmt: TableFormat, meter: Meter) -> int:
    """Tokens of :func:`part_text` (summed from cached line costs when that is exact)."""
    lines = _markdown_lines(part.table) if fmt == "markdown" and meter.additive else None
    if lines is None:
        return meter.cost(part_text(part, fmt))
    caption = part.table.caption
    fixed, costs = _line_costs(part.table, lines, meter)
    total = meter.cost(caption) if part.first and caption else 0
    return total + fixed + sum(costs[part.row_start : part.row_end])


def _line_costs(unit: TableUnit, lines: MarkdownLines, meter: Meter) -> tuple[int, list[int]]:
    """Cost of the header and frame lines, and of each data line (cached on the unit).

    ``lines`` is ``_markdown_lines(unit)``; sizing and every part's cost read these.
    """
    found = unit.memo.get("line_costs")
    if found is None:
        fixed = sum(meter.cost(line) for line in lines.head) + meter.cost(lines.frame)
        found = unit.memo["line_costs"] = (fixed, [meter.cost(line) for line in lines.data])
    return found


def prefill_parts(parts: Iterable[TablePart], budget: Budget) -> None:
    """Count, in one batch, the texts :func:`part_cost` will need for ``parts``."""
    fmt, meter = budget.opts.table_format, budget.meter
    meter.prefill(
        part_text(p, fmt)
        for p in parts
        if not (fmt == "markdown" and meter.additive and _markdown_lines(p.table) is not None)
    )


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

"""The table contract, shared by every strategy.

A table is one chunk when it fits the budget; otherwise it is split into groups of
consecutive data rows, each repeating the header row(s) (:mod:`chunkweave.chunking.row_groups`).
The caption is part of the first piece's text and of every piece's embed text (see
:mod:`chunkweave.chunking.context`). Table chunks never contain prose.

What a piece embeds after its context line is ``ChunkOptions.table_embed``: its
stored text (Markdown or HTML), its rows serialised one per line as
``Column: value; Column: value`` (:mod:`chunkweave.chunking.table_rows`), or both. A
piece is sized so that its embed text fits the embedder's limit and its stored text
alone would too: each as large as that allows, never one row when more fit.

Row groups never cut a row. Only a single data row that alone (with the header
rows and caption) exceeds the hard limit is cut between words, by
:mod:`chunkweave.chunking.emit`; those fragments share the row's ``table_row_start``/``end``
and only the first carries the header. Nothing ever exceeds ``max_tokens``.

What is derived from a table (its ID, its lines, their costs, its parts' renderings)
is derived once per chunking run, by that run's :class:`Tables`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from chunkweave.chunking.context import context_lines
from chunkweave.chunking.ids import sha1_hex
from chunkweave.chunking.models import TableEmbed, TableFormat
from chunkweave.chunking.row_groups import row_groups
from chunkweave.chunking.table_rows import join_rows, row_lines
from chunkweave.chunking.tokens import Meter
from chunkweave.chunking.units import Draft, TablePart, TableUnit, Unit
from chunkweave.parsers.elements import html_rows, markdown_lines, table_text, table_to_markdown


def _with_caption(part: TablePart, body: str) -> str:
    caption = part.table.caption
    return f"{caption}\n{body}" if part.first and caption else body


@dataclass(frozen=True, slots=True)
class TableLines:
    """A table's rendering in one format, one line per row: a part is a selection.

    The lines are those of :func:`chunkweave.parsers.elements.markdown_lines` or
    :func:`~chunkweave.parsers.elements.html_rows`, which render the stored text.
    ``head`` holds the header lines (Markdown: the one header line, or none without
    header rows, as each part's first row is then its header and reads the same;
    HTML: the header rows), ``frame`` what surrounds the rows (the Markdown
    separator line; ``<table></table>``) and ``data`` one line per data row.

    ``exact``: :meth:`part` equals rendering the part's rows alone. Always for HTML
    (rows render independently); for Markdown only when the table is rectangular
    (a ragged part may be narrower, so padded differently). Otherwise the lines
    still give each row's cost, as an estimate.
    """

    fmt: TableFormat
    head: tuple[str, ...]
    frame: str
    data: tuple[str, ...]
    exact: bool

    def part(self, row_start: int, row_end: int) -> str:
        """Return the rendering of data rows ``[row_start, row_end)`` under the header."""
        if self.fmt == "html":
            return "<table>" + "".join((*self.head, *self.data[row_start:row_end])) + "</table>"
        if self.head:
            lines = [*self.head, self.frame, *self.data[row_start:row_end]]
        else:
            lines = [self.data[row_start], self.frame, *self.data[row_start + 1 : row_end]]
        return "\n".join(lines)


def _split_lines(
    rows: tuple[tuple[str, ...], ...], header_rows: int, fmt: TableFormat
) -> TableLines:
    if fmt == "html":
        cut = html_rows(rows, header_rows)
        return TableLines(
            fmt, tuple(cut[:header_rows]), "<table></table>", tuple(cut[header_rows:]), True
        )
    lines = markdown_lines(rows, header_rows)
    if not lines:
        return TableLines(fmt, (), "", (), exact=False)
    rectangular = len({len(r) for r in rows}) == 1
    if header_rows:
        return TableLines(fmt, (lines[0],), lines[1], tuple(lines[2:]), rectangular)
    return TableLines(fmt, (), lines[1], (lines[0], *lines[2:]), rectangular)


def _summable(lines: TableLines, meter: Meter) -> bool:
    # A part's cost is the sum of its lines' costs: Markdown lines are joined by
    # newlines, and an additive counter's costs add up over whitespace.
    return lines.exact and lines.fmt == "markdown" and meter.additive


@dataclass(slots=True)
class _Memo:
    """What is derived from one table."""

    table_id: str | None = None
    #: The whole table's lines, by format.
    lines: dict[TableFormat, TableLines] = field(default_factory=dict)
    #: Cost of the header and frame lines, and of each data line, by format.
    line_costs: dict[TableFormat, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    #: Rendered bodies by ``(row_start, row_end, format)``: every stage that needs a
    #: part's text (fit check, costs, chunk fields) renders it only once.
    renders: dict[tuple[int, int, TableFormat], str] = field(default_factory=dict)
    #: The serialised data rows (:func:`row_lines`) and each one's cost.
    rows: tuple[str, ...] | None = None
    row_costs: tuple[int, ...] | None = None


class Tables:
    """The tables of one chunking run: each one's derived values, computed once.

    Values are kept by table unit (by identity: a run builds each unit once and
    hands the same object from stage to stage; the units are kept alive with their
    values, so an identity is never reused within the run). Costs use ``meter``.
    """

    def __init__(
        self, meter: Meter, embed: TableEmbed = "text", text_limit: int | None = None
    ) -> None:
        """Start a run's tables, costed with ``meter``; pieces embed ``embed``.

        ``text_limit``: most tokens of a piece's stored text (by default, no more
        than the ``budget`` :meth:`drafts` is given for the embed text).
        """
        self.meter = meter
        self.embed = embed
        self.text_limit = text_limit
        self._memos: dict[int, tuple[TableUnit, _Memo]] = {}

    def _memo(self, unit: TableUnit) -> _Memo:
        found = self._memos.get(id(unit))
        if found is None:
            found = self._memos[id(unit)] = (unit, _Memo())
        return found[1]

    def table_id(self, unit: TableUnit) -> str:
        """Identity of a table within its document: SHA1 of its cell text (16 hex).

        Content-derived, so it survives edits elsewhere in the document; two identical
        tables in one document share it (their row ranges and chunk IDs still differ).
        """
        memo = self._memo(unit)
        if memo.table_id is None:
            memo.table_id = sha1_hex(table_text(unit.rows))[:16]
        return memo.table_id

    def drafts(self, unit: TableUnit, budget: int, fmt: TableFormat) -> Iterator[Draft]:
        """Yield the drafts of one table: whole if it fits, else row groups.

        ``budget`` is the token allowance for what a piece embeds after its context
        line (the caller has taken off the context line, caption included); the
        stored text gets ``text_limit`` (caption included). Row groups are as large
        as both allow (:func:`~chunkweave.chunking.row_groups.row_groups`). Yields
        nothing for a table with no rows.
        """
        if not unit.rows:
            return
        data_count = len(unit.rows) - unit.header_rows
        whole = TablePart(unit, 0, data_count, first=True, whole=True)
        text_limit = budget if self.text_limit is None else self.text_limit
        if data_count <= 1 or (
            self.fit_cost(whole, fmt) <= budget and self.part_cost(whole, fmt) <= text_limit
        ):
            yield Draft(part=whole)
            return
        # Each data row is costed as it is rendered (exact when the counter is
        # additive and parts are selections of the lines; else an estimate, and a
        # piece that turns out too large is halved later).
        fixed, text_costs = self._line_costs(unit, self.lines(unit, fmt))
        caption = self.meter.cost(unit.caption) if unit.caption else 0
        embed_fixed, embed_costs = self._embed_costs(unit, fmt)
        costs = list(zip(embed_costs, text_costs, strict=True))
        text_room = text_limit - fixed
        first = (budget - embed_fixed, text_room - caption)
        starts = row_groups(costs, first, (budget - embed_fixed, text_room))
        for start, end in zip(starts, [*starts[1:], data_count], strict=True):
            yield Draft(part=TablePart(unit, start, end, first=start == 0, whole=False))

    def render_part(self, part: TablePart, fmt: TableFormat) -> tuple[str, str, str]:
        """``(text, markdown, html)`` of a table part; ``text`` uses ``fmt``.

        The part's rows are the header rows followed by its data rows; ``text`` starts
        with the caption on its own line in the table's first piece.
        """
        markdown = self.body(part.table, part.row_start, part.row_end, "markdown")
        html = self.body(part.table, part.row_start, part.row_end, "html")
        return _with_caption(part, markdown if fmt == "markdown" else html), markdown, html

    def part_text(self, part: TablePart, fmt: TableFormat) -> str:
        """Return ``render_part(part, fmt)[0]``, the part's chunk text, rendering ``fmt`` only."""
        return _with_caption(part, self.body(part.table, part.row_start, part.row_end, fmt))

    def body(self, unit: TableUnit, row_start: int, row_end: int, fmt: TableFormat) -> str:
        """Return the rendering of data rows ``[row_start, row_end)`` under the header rows."""
        # Rendered once per (rows, format), as a selection of the whole table's lines
        # where that is byte-identical to rendering the part's rows alone.
        key = (row_start, row_end, fmt)
        renders = self._memo(unit).renders
        body = renders.get(key)
        if body is None:
            lines = self.lines(unit, fmt)
            if lines.exact:
                body = lines.part(row_start, row_end)
            else:
                h = unit.header_rows
                body = table_to_markdown(unit.rows[:h] + unit.rows[h + row_start : h + row_end], h)
            renders[key] = body
        return body

    def lines(self, unit: TableUnit, fmt: TableFormat) -> TableLines:
        """Return the whole table's :class:`TableLines` in ``fmt``."""
        memo = self._memo(unit)
        found = memo.lines.get(fmt)
        if found is None:
            found = memo.lines[fmt] = _split_lines(unit.rows, unit.header_rows, fmt)
        return found

    def part_cost(self, part: TablePart, fmt: TableFormat) -> int:
        """Tokens of :meth:`part_text` (summed from cached line costs when that is exact)."""
        meter = self.meter
        lines = self.lines(part.table, fmt)
        if not _summable(lines, meter):
            return meter.cost(self.part_text(part, fmt))
        caption = part.table.caption
        fixed, costs = self._line_costs(part.table, lines)
        total = meter.cost(caption) if part.first and caption else 0
        return total + fixed + sum(costs[part.row_start : part.row_end])

    def _line_costs(self, unit: TableUnit, lines: TableLines) -> tuple[int, tuple[int, ...]]:
        """Cost of the header and frame lines, and of each data line.

        ``lines`` is ``self.lines(unit, fmt)``; sizing and every part's cost read these.
        """
        memo = self._memo(unit)
        found = memo.line_costs.get(lines.fmt)
        if found is None:
            meter = self.meter
            fixed = sum(meter.cost(line) for line in lines.head) + meter.cost(lines.frame)
            found = (fixed, tuple(meter.cost(line) for line in lines.data))
            memo.line_costs[lines.fmt] = found
        return found

    def row_texts(self, unit: TableUnit) -> tuple[str, ...]:
        """Return the table's :func:`row_lines` (computed once)."""
        memo = self._memo(unit)
        if memo.rows is None:
            memo.rows = row_lines(unit.rows, unit.header_rows)
        return memo.rows

    def _row_costs(self, unit: TableUnit) -> tuple[int, ...]:
        memo = self._memo(unit)
        if memo.row_costs is None:
            memo.row_costs = tuple(self.meter.cost(line) for line in self.row_texts(unit))
        return memo.row_costs

    def embed_body(self, part: TablePart, fmt: TableFormat) -> str:
        """Return what the part embeds after its context line (see ``table_embed``)."""
        if self.embed == "text":
            return self.part_text(part, fmt)
        rows = join_rows(self.row_texts(part.table)[part.row_start : part.row_end])
        if self.embed == "rows":
            return rows
        return f"{self.part_text(part, fmt)}\n{rows}" if rows else self.part_text(part, fmt)

    def embed_cost(self, part: TablePart, fmt: TableFormat) -> int:
        """Tokens of :meth:`embed_body` (summed from cached costs when that is exact)."""
        if self.embed == "text":
            return self.part_cost(part, fmt)
        if not self.meter.additive:
            return self.meter.cost(self.embed_body(part, fmt))
        rows = sum(self._row_costs(part.table)[part.row_start : part.row_end])
        return rows if self.embed == "rows" else rows + self.part_cost(part, fmt)

    def fit_cost(self, part: TablePart, fmt: TableFormat) -> int:
        """Tokens of :meth:`embed_body` beyond a context line that names the caption.

        A first piece's body that opens with the caption (``text``, ``both``) has
        the caption dropped from its context line (see
        :func:`~chunkweave.chunking.context.build_embed_text`): it is not paid twice.
        """
        cost = self.embed_cost(part, fmt)
        caption = part.table.caption
        if part.first and caption and self.embed != "rows":
            cost -= self.meter.cost(caption)
        return cost

    def _embed_costs(self, unit: TableUnit, fmt: TableFormat) -> tuple[int, tuple[int, ...]]:
        """Return the fixed and per-data-row costs of what a piece embeds."""
        fixed, costs = self._line_costs(unit, self.lines(unit, fmt))
        if self.embed == "text":
            return fixed, costs
        rows = self._row_costs(unit)
        if self.embed == "rows":
            return 0, rows
        return fixed, tuple(a + b for a, b in zip(costs, rows, strict=True))

    def prefill(self, units: Iterable[Unit], fmt: TableFormat, title: str | None) -> None:
        """Count, in one batch, what sizing the tables of ``units`` will cost.

        Each table's lines (see :meth:`lines`), its whole text when its cost is not
        the sum of its lines', and its context line (document ``title``) with the
        caption; only a speed-up (see :meth:`chunkweave.chunking.tokens.Meter.prefill`).
        """
        meter = self.meter
        texts: list[str] = []
        for unit in units:
            if not isinstance(unit, TableUnit) or not unit.rows:
                continue
            lines = self.lines(unit, fmt)
            texts.extend([*lines.head, lines.frame, *lines.data])
            if self.embed != "text":
                texts.extend(self.row_texts(unit))
            if not _summable(lines, meter):
                whole = TablePart(unit, 0, len(unit.rows) - unit.header_rows, True, True)
                texts.append(self.part_text(whole, fmt))
            if unit.caption:
                texts.append(unit.caption)
                texts.append("\n".join(context_lines(title, unit.path, unit.caption)))
        meter.prefill(texts)

    def prefill_parts(self, parts: Iterable[TablePart], fmt: TableFormat) -> None:
        """Count, in one batch, the texts :meth:`part_cost` will need for ``parts``."""
        meter = self.meter
        todo = list(parts)
        texts = [
            self.part_text(p, fmt) for p in todo if not _summable(self.lines(p.table, fmt), meter)
        ]
        if self.embed != "text" and not meter.additive:
            texts += [self.embed_body(p, fmt) for p in todo]
        meter.prefill(texts)

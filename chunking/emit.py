"""The last stages: render drafts to chunk fields, enforce the hard limit, assign IDs.

:func:`iter_fitted` renders each draft and measures the finished ``embed_text``
(with the real token counter, or its proven-exact additive estimate: see
:meth:`chunkweave.chunking.tokens.Meter.measure`); a draft over ``max_tokens`` (a
non-WordPiece tokenizer may exceed the packing estimate slightly) is split again:
prose between its pieces or inside its single piece, tables between row groups.
A single table row too large for one chunk is cut between words (see
:func:`_split_row`): every chunk fits ``max_tokens`` as the counter counts it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from chunkweave.chunking.budget import Budget, common_path
from chunkweave.chunking.ids import content_key, sha1_hex
from chunkweave.chunking.models import ChunkType
from chunkweave.chunking.row_groups import split_part
from chunkweave.chunking.split import split_piece, split_span
from chunkweave.chunking.tokens import Meter
from chunkweave.chunking.units import Draft, Piece, TablePart


# Not frozen: one is built per chunk and none is changed after (``replace`` makes a
# new one); a frozen dataclass's ``__init__`` costs four times as much.
@dataclass(slots=True)
class Rendered:
    """A chunk's fields before identity (``id``, ``chunk_index``) is assigned."""

    text: str
    embed_text: str
    type: ChunkType
    heading_path: tuple[str, ...]
    pages: tuple[int, ...]
    element_orders: tuple[int, ...]
    token_count: int
    sections: tuple[int, ...]
    section_headings: tuple[str, ...] = ()
    #: The heading paths of its pieces, each once in reading order (its section numbers).
    paths: tuple[tuple[str, ...], ...] = ()
    table_id: str | None = None
    table_row_start: int | None = None
    table_row_end: int | None = None
    table_markdown: str | None = None
    table_html: str | None = None
    caption: str | None = None

    def key(self, parent_id: str | None, text_sha1: str | None = None) -> str:
        """Return the content key (see :func:`chunkweave.chunking.ids.content_key`).

        ``text_sha1``: this chunk's :attr:`content_sha1`, when the caller has it.
        """
        table = None
        if self.table_id is not None:
            assert self.table_row_start is not None and self.table_row_end is not None
            table = (self.table_id, self.table_row_start, self.table_row_end)
        return content_key(
            text=self.text,
            embed_text=self.embed_text,
            type=self.type,
            heading_path=self.heading_path,
            pages=self.pages,
            table=table,
            parent_id=parent_id,
            text_sha1=text_sha1,
        )

    @property
    def content_sha1(self) -> str:
        """SHA1 of the stored ``text``."""
        return sha1_hex(self.text)


def iter_fitted(drafts: Iterable[Draft], budget: Budget) -> Iterator[Rendered]:
    """Render every draft, splitting any whose ``embed_text`` exceeds ``max_tokens``.

    The size of a finished ``embed_text`` is the sum of its counted parts when the
    counter is additive (exact, see ``TokenCounter``); otherwise all of them are
    counted in one call with a batching counter, or one by one as they are rendered.
    A draft over the limit is re-fitted (split) one by one.
    """
    meter = budget.meter
    if not meter.additive and not meter.batched:
        for draft in drafts:
            yield from _fit(draft, budget)
        return
    items = list(drafts)
    # Table parts are the only texts not counted yet: one batch for all of them.
    budget.tables.prefill_parts(
        (d.part for d in items if d.part is not None), budget.opts.table_format
    )
    if meter.additive:
        # Estimates are exact sums of counted parts (see ``TokenCounter.additive``).
        for draft in items:
            rendered = render(draft, budget, measure=False)
            if rendered.token_count <= budget.max_tokens:
                yield rendered
            else:
                yield from _fit(draft, budget)
        return
    batch = [render(draft, budget, measure=False) for draft in items]
    counts = meter.exact_many([r.embed_text for r in batch])
    for draft, one, count in zip(items, batch, counts, strict=True):
        if count <= budget.max_tokens:
            yield replace(one, token_count=count)
        else:
            yield from _fit(draft, budget)


def _fit(draft: Draft, budget: Budget) -> Iterator[Rendered]:
    rendered = render(draft, budget)
    if rendered.token_count <= budget.max_tokens:
        yield rendered
        return
    halves = _halve(draft, budget)
    if halves is None:
        yield from _split_row(rendered, budget)
        return
    for half in halves:
        yield from _fit(half, budget)


def _halve(draft: Draft, budget: Budget) -> tuple[Draft, ...] | None:
    if draft.part is not None:
        parts = split_part(draft.part)
        return None if parts is None else tuple(Draft(part=p) for p in parts)
    pieces = draft.pieces
    if len(pieces) > 1:
        middle = len(pieces) // 2
        return Draft(pieces=pieces[:middle]), Draft(pieces=pieces[middle:])
    piece = pieces[0]
    limit = max(budget.piece_cost(piece) // 2, 1)
    fragments = split_piece(piece, limit, budget.meter)
    if len(fragments) <= 1:
        # One word the estimate thinks fits but the tokenizer does not: halve it.
        if piece.end - piece.start <= 1:
            return None
        cut = (piece.start + piece.end) // 2
        fragments = [piece.span(piece.start, cut), piece.span(cut, piece.end)]
    return tuple(Draft(pieces=(f,)) for f in fragments)


def _split_row(rendered: Rendered, budget: Budget) -> Iterator[Rendered]:
    # One table row (with its header and caption) over the limit: cut the rendered
    # text between words into table chunks that each fit. They keep the table ID,
    # row range and the full row's Markdown/HTML; only the first has the header.
    limit = budget.hard(rendered.heading_path, rendered.caption)
    text = rendered.text
    while True:
        spans = split_span(text, 0, len(text), limit, budget.meter)
        pieces = [_with_text(rendered, text[a:b], budget) for a, b in spans]
        if all(p.token_count <= budget.max_tokens for p in pieces) or limit == 1:
            yield from pieces
            return
        limit = max(limit * 3 // 4, 1)


def _with_text(rendered: Rendered, text: str, budget: Budget) -> Rendered:
    embed_text = budget.embed_text(text, rendered.heading_path, rendered.caption)
    return replace(
        rendered, text=text, embed_text=embed_text, token_count=budget.meter.exact(embed_text)
    )


def render(draft: Draft, budget: Budget, *, measure: bool = True) -> Rendered:
    """Render the chunk fields of one draft.

    ``token_count`` is measured (see :meth:`chunkweave.chunking.tokens.Meter.measure`), or with
    ``measure`` off the additive estimate, for the caller to replace with a count.
    """
    if draft.part is not None:
        return _render_table(draft.part, budget, measure)
    pieces = draft.pieces
    text = join_pieces(pieces)
    path = common_path(pieces)
    meter = budget.meter
    # One pass over the pieces collects what the fields need.
    cost_of = meter.cost
    text_cost = 0
    pages: set[int] = set()
    orders: set[int] = set()
    sections: set[int] = set()
    paths: dict[tuple[str, ...], None] = {}
    for piece in pieces:
        text_cost += cost_of(piece.text)
        if piece.page is not None:
            pages.add(piece.page)
        orders.add(piece.order)
        sections.add(piece.section)
        paths[piece.path] = None
    listed: tuple[str, ...] = ()
    context_path = path
    if len(sections) > 1 and budget.opts.merge_sections == "listed":
        # Merged sections stay addressable: their headings follow the common path.
        listed = merged_headings(pieces, path)
        if listed:
            context_path = (*path, LISTED_SEPARATOR.join(listed))
    embed_text = budget.embed_text(text, context_path)
    # The context line in front of prose is the one ``context_cost`` has costed.
    estimate = meter.base + budget.context_cost(context_path) + text_cost
    return Rendered(
        text=text,
        embed_text=embed_text,
        type=_prose_type(pieces),
        heading_path=path,
        pages=tuple(sorted(pages)),
        element_orders=tuple(sorted(orders)),
        token_count=meter.measure(embed_text, estimate, budget.max_tokens) if measure else estimate,
        sections=tuple(sorted(sections)),
        section_headings=listed,
        paths=tuple(paths),
    )


#: Joins the headings of merged sections in the context line ("Doc > FAQ > Q1; Q2").
LISTED_SEPARATOR = "; "


def merged_headings(pieces: tuple[Piece, ...], path: tuple[str, ...]) -> tuple[str, ...]:
    """Return the headings of the sections directly under ``path`` that ``pieces`` cover.

    In reading order, each once: the path component right below the common
    ``path`` of every piece that sits deeper than it.
    """
    depth = len(path)
    out: list[str] = []
    for piece in pieces:
        if len(piece.path) > depth:
            name = piece.path[depth]
            if name not in out:
                out.append(name)
    return tuple(out)


def _estimate(meter: Meter, embed_text: str, text: str, text_cost: int) -> int:
    """Additive token estimate of ``embed_text``, given the cost of its ``text`` part."""
    # The context lines end with the newline before ``text``: cost them without it
    # (the cached form; whitespace is free for an additive counter, and for others
    # this is only the estimate the final count checks).
    prefix = embed_text[: len(embed_text) - len(text)].removesuffix("\n")
    return meter.base + meter.cost(prefix) + text_cost


def join_pieces(pieces: tuple[Piece, ...]) -> str:
    """Chunk text of prose pieces: list items one per line, other elements by blank lines."""
    if len(pieces) == 1:
        return pieces[0].text
    out: list[str] = []
    for i, piece in enumerate(pieces):
        if i:
            prev = pieces[i - 1]
            same_list = prev.kind == "list_item" and piece.kind == "list_item"
            out.append("\n" if same_list else "\n\n")
        out.append(piece.text)
    return "".join(out)


def _render_table(part: TablePart, budget: Budget, measure: bool) -> Rendered:
    unit = part.table
    tables = budget.tables
    fmt = budget.opts.table_format
    text, markdown, html = tables.render_part(part, fmt)
    body = tables.embed_body(part, fmt)  # ``text`` itself unless ``table_embed`` says rows
    embed_text = budget.embed_text(body, unit.path, unit.caption)
    meter = budget.meter
    estimate = _estimate(meter, embed_text, body, tables.embed_cost(part, fmt))
    orders = {unit.element.order}
    if unit.caption_order is not None:
        orders.add(unit.caption_order)
    return Rendered(
        text=text,
        embed_text=embed_text,
        type="table",
        heading_path=unit.path,
        pages=(unit.element.page,) if unit.element.page is not None else (),
        element_orders=tuple(sorted(orders)),
        token_count=meter.measure(embed_text, estimate, budget.max_tokens) if measure else estimate,
        sections=(unit.section,),
        table_id=tables.table_id(unit),
        table_row_start=part.row_start,
        table_row_end=part.row_end,
        table_markdown=markdown,
        table_html=html,
        caption=unit.caption,
    )


_TYPE_BY_KIND: dict[str, ChunkType] = {
    "list_item": "list",
    "code": "code",
    "formula": "formula",
    "figure": "figure",
}


def _prose_type(pieces: tuple[Piece, ...]) -> ChunkType:
    # A chunk of one kind of element says so (ignoring the heading that opens it);
    # anything mixed is plain text.
    kinds = {p.kind for p in pieces if p.kind != "heading"}
    if len(kinds) == 1:
        return _TYPE_BY_KIND.get(next(iter(kinds)), "text")
    return "text"

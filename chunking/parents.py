"""Parent chunks: one per section, for small-to-find / large-to-read retrieval.

With ``parent_chunks`` on, every section (as cut by ``section_level``) also yields a
``section`` chunk holding the section's whole text (tables in full); each child
chunk carries its section's ``parent_id``. A parent is fetched by ID, not found by
vector: its ``text`` may exceed the embedder's limit, so its ``embed_text`` is the
context line plus only the leading part of the text that fits ``max_tokens``
(deliberately cut between sentences or words, never by the embedder).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from chunkweave.chunking.boundaries import heading_at_most
from chunkweave.chunking.budget import Budget, common_path
from chunkweave.chunking.emit import Rendered, join_pieces
from chunkweave.chunking.split import split_span
from chunkweave.chunking.units import (
    Piece,
    TablePart,
    TableUnit,
    Unit,
    fold_heading_only_sections,
    iter_units,
)
from chunkweave.parsers.elements import Element


def parent_groups(children: list[Rendered]) -> list[int]:
    """For each child, the index of its parent group.

    A group is a run of consecutive children whose sections overlap (a merged tiny
    section joins its neighbour's group), so a parent always contains its children.
    """
    groups: list[int] = []
    current: set[int] = set()
    for child in children:
        if groups and current.intersection(child.sections):
            current.update(child.sections)
        else:
            current = set(child.sections)
            groups.append(groups[-1] + 1 if groups else 0)
            continue
        groups.append(groups[-1])
    return groups


def section_parents(
    elements: Iterable[Element], children: list[Rendered], budget: Budget, *, fold: bool
) -> list[Rendered]:
    """Build the parent chunk of every group of :func:`parent_groups`, in group order.

    Parents are cut at ``section_level``; with ``fold``, heading-only sections fold
    into the next one (:func:`chunkweave.chunking.units.fold_heading_only_sections`).
    """
    group_of = parent_groups(children)
    sections_of: dict[int, set[int]] = {}
    for child, group in zip(children, group_of, strict=True):
        sections_of.setdefault(group, set()).update(child.sections)
    section_group = {s: g for g, secs in sections_of.items() for s in secs}
    opts = budget.opts
    starts = heading_at_most(opts.section_level)
    units = list(iter_units(elements, starts, include_furniture=opts.include_furniture))
    if fold:
        units = fold_heading_only_sections(units)
    by_group: dict[int, list[Unit]] = {}
    for unit in units:
        if unit.section in section_group:
            by_group.setdefault(section_group[unit.section], []).append(unit)
    return [_parent(by_group.get(g, []), g, budget) for g in sorted(sections_of)]


def _parent(units: list[Unit], group: int, budget: Budget) -> Rendered:
    blocks: list[str] = []
    pieces: list[Piece] = []
    pages: set[int] = set()
    orders: set[int] = set()
    for is_table, run in itertools.groupby(units, key=lambda u: isinstance(u, TableUnit)):
        if is_table:
            for table in run:
                assert isinstance(table, TableUnit)
                n = len(table.rows) - table.header_rows
                whole = TablePart(table, 0, n, True, True)
                blocks.append(budget.tables.render_part(whole, "markdown")[0])
                orders.add(table.element.order)
                if table.caption is not None and table.caption_order is not None:
                    orders.add(table.caption_order)  # its text opens the table's block
                if table.element.page is not None:
                    pages.add(table.element.page)
        else:
            prose = tuple(u for u in run if isinstance(u, Piece))
            blocks.append(join_pieces(prose))
            pieces.extend(prose)
            orders.update(p.order for p in prose)
            pages.update(p.page for p in prose if p.page is not None)
    text = "\n\n".join(b for b in blocks if b)
    path = common_path(pieces)
    return _render_parent(text, path, tuple(sorted(pages)), orders, group, budget)


def _render_parent(
    text: str,
    path: tuple[str, ...],
    pages: tuple[int, ...],
    orders: set[int],
    section: int,
    budget: Budget,
) -> Rendered:
    limit = budget.hard(path)
    lead = text
    while True:
        embed_text = budget.embed_text(lead, path)
        tokens = budget.meter.exact(embed_text)
        if tokens <= budget.max_tokens or len(lead) <= 1:
            break
        spans = split_span(lead, 0, len(lead), limit, budget.meter)
        lead = lead[: spans[0][1]] if len(spans) > 1 else lead[: len(lead) // 2]
        limit = max(limit * 3 // 4, 1)
    return Rendered(
        text=text,
        embed_text=embed_text,
        type="section",
        heading_path=path,
        pages=pages,
        element_orders=tuple(sorted(orders)),
        token_count=tokens,
        sections=(section,),
    )

"""Structure-aware strategies: ``elements`` (the default) and ``headings``.

``elements``: a chunk never crosses a section boundary (a title or a heading of
level <= ``section_level``) except where sections merge, and then only inside one
parent section. A section holding nothing but its heading (a chapter heading
right before its first subsection) is folded into that subsection and packed as
its opening lines. Within a section, paragraphs and list items are packed up to
the target size, balanced; a list is kept together where it fits a chunk; a
heading or a lead-in ending with a colon stays with what follows it; a piece over
the hard budget is split between sentences, then words. Afterwards whole
sections merge with a neighbour inside the same parent section: a tiny one (under
``min_tokens``), and runs of short siblings (one of each pair at most half the
target) while they fit the target, so short subsections do not each make a small
chunk. An empty section (a heading with nothing under it, such as a contents page
whose entries are left out) joins a neighbour, even at the top level. A merged
chunk is labelled with the common path (never with a heading that does not cover
all of it).

``headings``: one chunk per section at a chosen heading level (auto: the deepest
level used at least twice), sub-split over the hard budget; a chunk under
``min_tokens`` merges into its predecessor while it fits (a heading with nothing
under it joins what follows instead).

``faq``: one chunk per heading (any level: each question) with its answer, sub-split
only over the hard budget and never merged with another question; a heading with
nothing of its own (the group heading above the first question) opens the next
chunk.

How merged sections stay addressable is ``ChunkOptions.merge_sections``: ``listed``
(the default) keeps the common path as the chunk's heading path and names every
merged section's heading in the context line (see
:func:`chunkweave.chunking.emit.render`); ``never`` does not merge sections that
have a heading of their own.

All hand tables to :mod:`chunkweave.chunking.tables`; tables are never packed with prose.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from chunkweave.chunking.budget import Budget, common_path
from chunkweave.chunking.split import split_piece
from chunkweave.chunking.units import Draft, Piece, TableUnit, Unit, iter_units
from chunkweave.parsers.elements import Element


def elements_drafts(elements: Iterable[Element], budget: Budget) -> Iterator[Draft]:
    """Drafts of the ``elements`` strategy, in reading order."""
    units = fold_heading_only_sections(list(iter_units(elements, budget.opts)))
    budget.tables.prefill(units, budget.opts.table_format, budget.title)
    drafts = itertools.chain.from_iterable(
        _section_drafts(list(group), budget, pack=True)
        for _, group in itertools.groupby(units, key=lambda u: u.section)
    )
    return _merge_tiny(list(drafts), budget, mode="elements")


def headings_drafts(elements: Iterable[Element], budget: Budget) -> Iterator[Draft]:
    """Drafts of the ``headings`` strategy, in reading order."""
    items = list(elements)
    level = budget.opts.heading_level or auto_heading_level(items)
    opts = budget.opts.model_copy(update={"section_level": level})
    units = list(iter_units(items, opts))
    budget.tables.prefill(units, budget.opts.table_format, budget.title)
    drafts = itertools.chain.from_iterable(
        _section_drafts(list(group), budget, pack=False)
        for _, group in itertools.groupby(units, key=lambda u: u.section)
    )
    return _merge_tiny(list(drafts), budget, mode="headings")


def faq_drafts(elements: Iterable[Element], budget: Budget) -> Iterator[Draft]:
    """Drafts of the ``faq`` strategy, in reading order: one (or more) per question."""
    opts = budget.opts.model_copy(update={"section_level": FAQ_SECTION_LEVEL})
    units = fold_heading_only_sections(list(iter_units(elements, opts)))
    budget.tables.prefill(units, budget.opts.table_format, budget.title)
    drafts = itertools.chain.from_iterable(
        _section_drafts(list(group), budget, pack=False)
        for _, group in itertools.groupby(units, key=lambda u: u.section)
    )
    return _merge_tiny(list(drafts), budget, mode="faq")


#: Every heading starts a section under ``faq`` (parsers emit levels 1-9).
FAQ_SECTION_LEVEL = 99


def fold_heading_only_sections(units: list[Unit]) -> list[Unit]:
    """Move each section that holds only headings into the section right after it.

    A chapter heading followed directly by its first subsection ("1 Intro", then
    "1.1 Scope" and its text) is not a chunk of its own: it is packed with the
    subsection's text (as its opening lines), so the packing accounts for it
    instead of leaving a heading-only chunk when the subsection fills a chunk
    alone. Only into a section of its own subtree (the next section's heading path
    extends the folded heading's), and only when that section opens with prose.
    """
    out: list[Unit] = []
    groups: list[list[Unit]] = [
        list(g) for _, g in itertools.groupby(units, key=lambda u: u.section)
    ]
    carried: list[Unit] = []
    for index, group in enumerate(groups):
        section = group[0].section
        moved: list[Unit] = [p._replace(section=section) for p in carried if isinstance(p, Piece)]
        group = moved + group
        carried = []
        nxt = groups[index + 1][0] if index + 1 < len(groups) else None
        last = group[-1]
        if (
            isinstance(nxt, Piece)
            and isinstance(last, Piece)
            and all(isinstance(u, Piece) and u.kind == "heading" for u in group)
            and nxt.path[: len(last.path)] == last.path
        ):
            carried = group
            continue
        out.extend(group)
    return out


def auto_heading_level(elements: list[Element]) -> int:
    """Pick the finest heading level used consistently: the deepest seen twice (else 1)."""
    counts: dict[int, int] = {}
    for el in elements:
        if el.type == "heading":
            counts[el.level or 1] = counts.get(el.level or 1, 0) + 1
    repeated = [level for level, n in counts.items() if n >= 2]
    return max(repeated, default=1)


def _section_drafts(units: list[Unit], budget: Budget, *, pack: bool) -> Iterator[Draft]:
    # Prose runs between tables are packed; each table takes its own path.
    for is_table, run in itertools.groupby(units, key=lambda u: isinstance(u, TableUnit)):
        if is_table:
            yield from table_drafts(run, budget)
        else:
            pieces = [u for u in run if isinstance(u, Piece)]
            yield from (Draft(pieces=p) for p in pack_pieces(pieces, budget, soft=pack))


def table_drafts(tables: Iterable[Unit], budget: Budget) -> Iterator[Draft]:
    """Drafts of a run of table units, each table within its hard budget (context included)."""
    for table in tables:
        assert isinstance(table, TableUnit)
        text_budget = budget.hard(table.path, table.caption)
        yield from budget.tables.drafts(table, text_budget, budget.opts.table_format)


def pack_pieces(pieces: list[Piece], budget: Budget, *, soft: bool) -> Iterator[tuple[Piece, ...]]:
    """Pack consecutive prose pieces into chunks, keeping lists together where they fit.

    With ``soft`` the packing limit is the target size, otherwise the hard budget;
    a piece over the hard budget is split into fragments first. Packing is
    balanced: the run gets as few chunks as greedy packing to the limit needs, with
    the largest chunk as small as possible, so a section does not end in a tiny
    tail chunk that has lost the context of the rest.
    """
    bound = list(_bind_lead_ins(list(_atoms(pieces, budget)), budget))
    if not bound:
        return
    atoms = [atom for atom, _ in bound]
    costs = [cost for _, cost in bound]
    cap = budget.soft(_content_path(atoms[0])) if soft else budget.hard(_content_path(atoms[0]))
    groups = _greedy(costs, cap)
    if soft and groups > 1:
        cap = _balanced_cap(costs, cap, groups)
    packed: list[list[Piece]] = []
    current: list[Piece] = []
    used = 0
    for atom, cost in zip(atoms, costs, strict=True):
        path = _content_path(current or atom)
        limit = min(cap, budget.soft(path) if soft else budget.hard(path))
        if current and used + cost > limit:
            # Headings that would end the chunk open the next one instead.
            keep = len(current)
            while keep > 0 and current[keep - 1].kind == "heading":
                keep -= 1
            keep = keep or len(current)
            packed.append(current[:keep])
            current = current[keep:]
            used = sum(budget.piece_cost(p) for p in current)
        current.extend(atom)
        used += cost
    if current:
        packed.append(current)
    yield from _join_heading_only(packed, budget)


def _join_heading_only(packed: list[list[Piece]], budget: Budget) -> Iterator[tuple[Piece, ...]]:
    # Headings with nothing of their own before the next chunk's text (the next
    # atom did not fit the target with them) join that chunk where the hard limit
    # allows: a chunk of headings alone says nothing.
    i = 0
    while i < len(packed):
        chunk = packed[i]
        if i + 1 < len(packed) and all(p.kind == "heading" for p in chunk):
            joined = chunk + packed[i + 1]
            cost = sum(budget.piece_cost(p) for p in joined)
            if cost <= budget.hard(common_path(joined)):
                packed[i + 1] = joined
                i += 1
                continue
        yield tuple(chunk)
        i += 1


def _content_path(pieces: tuple[Piece, ...] | list[Piece]) -> tuple[str, ...]:
    # The path budgets are taken for: that of the first non-heading piece (a
    # chunk's context line names the content's headings, which may be deeper than
    # the heading it opens with), else of the first piece.
    for piece in pieces:
        if piece.kind != "heading":
            return piece.path
    return pieces[0].path


def _greedy(costs: list[int], limit: int) -> int:
    """Count the chunks greedy packing of ``costs`` up to ``limit`` makes."""
    groups, used = 0, 0
    for cost in costs:
        if groups == 0 or used + cost > limit:
            groups, used = groups + 1, 0
        used += cost
    return groups


def _balanced_cap(costs: list[int], limit: int, groups: int) -> int:
    """Find the smallest cap <= ``limit`` with which greedy packing needs ``groups`` chunks."""
    low, high = max(max(costs), -(-sum(costs) // groups)), limit
    while low < high:
        middle = (low + high) // 2
        if _greedy(costs, middle) <= groups:
            high = middle
        else:
            low = middle + 1
    return high


Atom = tuple[tuple[Piece, ...], int]  # pieces packed as a whole, and their cost


def _atoms(pieces: list[Piece], budget: Budget) -> Iterator[Atom]:
    # An atom is packed as a whole: a list run that fits one chunk, or one piece
    # (split into fragments when it alone exceeds the hard budget).
    meter = budget.meter
    for is_list, run in itertools.groupby(pieces, key=lambda p: p.kind == "list_item"):
        items = list(run)
        if is_list and len(items) > 1:
            cost = sum(budget.piece_cost(p) for p in items)
            if cost <= budget.soft(common_path(items)):
                yield tuple(items), cost
                continue
        for piece in items:
            cost = meter.cost(piece.text)
            limit = budget.hard(piece.path)
            if cost <= limit:
                yield (piece,), cost
                continue
            for fragment in split_piece(piece, limit, meter):
                yield (fragment,), meter.cost(fragment.text)


def _bind_lead_ins(atoms: list[Atom], budget: Budget) -> Iterator[Atom]:
    # A heading, or a paragraph ending with a colon, introduces what follows ("...
    # as follows:" then code or a list): it is packed with the next atom, where
    # both fit, so the lead-in never ends one chunk while its subject opens the next.
    i = 0
    while i < len(atoms):
        atom, cost = atoms[i]
        while i + 1 < len(atoms) and _introduces(atom[-1]):
            joined = atom + atoms[i + 1][0]
            joined_cost = cost + atoms[i + 1][1]
            if joined_cost > budget.soft(common_path(joined)):
                break
            atom, cost, i = joined, joined_cost, i + 1
        yield atom, cost
        i += 1


def _introduces(piece: Piece) -> bool:
    kind = piece.kind
    if kind == "heading":
        return True
    if kind != "text":
        return False
    # A piece ending where its element's trimmed text ends: its last character is
    # that of the element (no slice of the piece's text is needed).
    end = len(piece.source.rstrip())
    return piece.end == end and piece.source[end - 1 : end] == ":"


MergeMode = Literal["elements", "headings", "faq"]


def _merge_tiny(drafts: list[Draft], budget: Budget, *, mode: MergeMode) -> Iterator[Draft]:
    # ``elements``: a draft is "tiny" when it is a whole section (the only draft of
    # its section) and costs under min_tokens: it merges with a neighbour. Whole
    # sections are also packed together with a sibling when one of the two is
    # "small" (at most half the packing target): a run of short subsections
    # becomes one chunk of normal size rather than several small ones.
    # ``headings``: any draft under min_tokens merges into its predecessor.
    # Every mode: an empty section (a heading alone) joins a neighbour; with
    # ``merge_sections="never"`` and under ``faq`` that is the only merge. Merges
    # need ``_can_merge`` (same parent for ``elements``, fits the budget).
    related_only = mode == "elements"
    only_empty = mode == "faq" or budget.opts.merge_sections == "never"
    per_section: dict[int, int] = {}
    for draft in drafts:
        per_section[_section(draft)] = per_section.get(_section(draft), 0) + 1
    out: list[_Merging] = []
    for draft in drafts:
        whole = draft.part is None and per_section[_section(draft)] == 1
        here = _Merging(
            draft,
            tiny=_is_tiny(draft, budget, per_section, related_only),
            whole=whole,
            small=related_only and whole and _is_small(draft, budget),
            empty=_is_empty(draft),
        )
        prev = out[-1] if out else None
        if prev is None:
            wanted = False
        elif only_empty:
            wanted = here.empty or prev.empty
        elif mode == "headings":
            wanted = here.tiny or here.empty or prev.empty
        else:
            wanted = (
                here.tiny
                or prev.tiny
                or here.empty
                or prev.empty
                or (here.small and prev.whole)
                or (prev.small and here.whole)
            )
        if prev is not None and wanted and _can_merge(prev.draft, draft, budget, related_only):
            merged = Draft(pieces=prev.draft.pieces + draft.pieces)
            both = prev.whole and here.whole
            out[-1] = _Merging(
                merged,
                tiny=_is_tiny_cost(merged, budget),
                whole=both,
                small=related_only and both and _is_small(merged, budget),
                empty=_is_empty(merged),
            )
        else:
            out.append(here)
    return (m.draft for m in out)


@dataclass(frozen=True, slots=True)
class _Merging:
    draft: Draft
    tiny: bool
    whole: bool
    small: bool
    empty: bool


def _is_empty(draft: Draft) -> bool:
    # A section with a heading and nothing under it (no text, no subsection: those
    # were folded in by ``fold_heading_only_sections``), such as a contents page
    # whose entries are left out, or a stray line the parser took for a heading.
    return bool(draft.pieces) and all(p.kind == "heading" for p in draft.pieces)


def _is_small(draft: Draft, budget: Budget) -> bool:
    cost = sum(budget.piece_cost(p) for p in draft.pieces)
    return cost <= budget.soft(common_path(draft.pieces)) // 2


def _section(draft: Draft) -> int:
    if draft.part is not None:
        return draft.part.table.section
    return draft.pieces[0].section


def _is_tiny(draft: Draft, budget: Budget, per_section: dict[int, int], related: bool) -> bool:
    if draft.part is not None:
        return False
    if related and per_section[_section(draft)] != 1:
        return False
    return _is_tiny_cost(draft, budget)


def _is_tiny_cost(draft: Draft, budget: Budget) -> bool:
    return sum(budget.piece_cost(p) for p in draft.pieces) < budget.opts.min_tokens


def _can_merge(left: Draft, right: Draft, budget: Budget, related_only: bool) -> bool:
    if left.part is not None or right.part is not None:
        return False
    pieces = left.pieces + right.pieces
    merged_path = common_path(pieces)
    heading_only = all(p.kind == "heading" for p in left.pieces)
    if (
        related_only
        and not (_is_empty(left) or _is_empty(right))
        and not _same_parent(
            common_path(left.pieces),
            common_path(right.pieces),
            merged_path,
            budget.root_depth,
            heading_only=heading_only,
        )
    ):
        return False
    cost = sum(budget.piece_cost(p) for p in pieces)
    # A heading with nothing under it but subsections is no chunk of its own: it
    # joins its first child as long as the hard limit allows; an empty section
    # joins a neighbour likewise.
    empty = heading_only or _is_empty(right)
    soft_limit = related_only and not empty
    limit = budget.soft(merged_path) if soft_limit else budget.hard(merged_path)
    return cost <= limit


def _same_parent(
    left: tuple[str, ...],
    right: tuple[str, ...],
    merged: tuple[str, ...],
    root: int,
    *,
    heading_only: bool,
) -> bool:
    # A heading-only parent section merges into its first child (the child's path
    # names the parent, so no heading is lost); otherwise the two must share a
    # parent heading below the document root (``root`` = 1 when paths start with
    # the document title), losing at most one heading level.
    if heading_only and right[: len(left)] == left:
        return True
    return len(merged) > root and len(merged) >= min(len(left), len(right)) - 1

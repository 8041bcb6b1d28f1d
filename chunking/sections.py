"""Structure-aware strategies: ``elements`` (the default) and ``headings``.

``elements``: a chunk never crosses a section boundary (a title or a heading of
level <= ``section_level``). Within a section, paragraphs and list items are packed
up to the target size; a list is kept together where it fits a chunk; a piece over
the hard budget is split between sentences, then words. Afterwards a tiny section
(one chunk under ``min_tokens``) merges with a neighbour only inside the same
parent section: a heading-only section into its first child, or sections sharing a
parent heading below the document title. The merged chunk is labelled with their
common path (never with a heading that does not cover all of it).

``headings``: one chunk per section at a chosen heading level (auto: the deepest
level used at least twice), sub-split over the hard budget, then consecutive
chunks under ``min_tokens`` merged while they fit.

Both hand tables to :mod:`chunking.tables`; tables are never packed with prose.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from chunking.budget import Budget, common_path
from chunking.split import split_piece
from chunking.tables import iter_tables_drafts, prefill_tables
from chunking.units import Draft, Piece, TableUnit, Unit, iter_units
from parsers.elements import Element


def elements_drafts(elements: Iterable[Element], budget: Budget) -> Iterator[Draft]:
    """Drafts of the ``elements`` strategy, in reading order."""
    units = list(iter_units(elements, budget.opts))
    prefill_tables(units, budget)
    drafts = itertools.chain.from_iterable(
        _section_drafts(list(group), budget, pack=True)
        for _, group in itertools.groupby(units, key=lambda u: u.section)
    )
    return _merge_tiny(list(drafts), budget, related_only=True)


def headings_drafts(elements: Iterable[Element], budget: Budget) -> Iterator[Draft]:
    """Drafts of the ``headings`` strategy, in reading order."""
    items = list(elements)
    level = budget.opts.heading_level or auto_heading_level(items)
    opts = budget.opts.model_copy(update={"section_level": level})
    units = list(iter_units(items, opts))
    prefill_tables(units, budget)
    drafts = itertools.chain.from_iterable(
        _section_drafts(list(group), budget, pack=False)
        for _, group in itertools.groupby(units, key=lambda u: u.section)
    )
    return _merge_tiny(list(drafts), budget, related_only=False)


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
            yield from iter_tables_drafts(run, budget)
        else:
            pieces = [u for u in run if isinstance(u, Piece)]
            yield from (Draft(pieces=p) for p in pack_pieces(pieces, budget, soft=pack))


def pack_pieces(pieces: list[Piece], budget: Budget, *, soft: bool) -> Iterator[tuple[Piece, ...]]:
    """Pack consecutive prose pieces into chunks, keeping lists together where they fit.

    With ``soft`` the packing limit is the target size, otherwise the hard budget;
    a piece over the hard budget is split into fragments first. Packing is
    balanced: the run gets as few chunks as greedy packing to the limit needs, with
    the largest chunk as small as possible, so a section does not end in a tiny
    tail chunk that has lost the context of the rest.
    """
    atoms = list(_bind_lead_ins(list(_atoms(pieces, budget)), budget))
    if not atoms:
        return
    costs = [sum(budget.piece_cost(p) for p in atom) for atom in atoms]
    cap = budget.soft(atoms[0][0].path) if soft else budget.hard(atoms[0][0].path)
    groups = _greedy(costs, cap)
    if soft and groups > 1:
        cap = _balanced_cap(costs, cap, groups)
    current: list[Piece] = []
    used = 0
    for atom, cost in zip(atoms, costs, strict=True):
        path = current[0].path if current else atom[0].path
        limit = min(cap, budget.soft(path) if soft else budget.hard(path))
        if current and used + cost > limit:
            yield tuple(current)
            current, used = [], 0
        current.extend(atom)
        used += cost
    if current:
        yield tuple(current)


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


def _atoms(pieces: list[Piece], budget: Budget) -> Iterator[tuple[Piece, ...]]:
    # An atom is packed as a whole: a list run that fits one chunk, or one piece
    # (split into fragments when it alone exceeds the hard budget).
    for is_list, run in itertools.groupby(pieces, key=lambda p: p.kind == "list_item"):
        items = list(run)
        if is_list and len(items) > 1:
            cost = sum(budget.piece_cost(p) for p in items)
            if cost <= budget.soft(common_path(items)):
                yield tuple(items)
                continue
        for piece in items:
            for fragment in split_piece(piece, budget.hard(piece.path), budget.meter):
                yield (fragment,)


def _bind_lead_ins(atoms: list[tuple[Piece, ...]], budget: Budget) -> Iterator[tuple[Piece, ...]]:
    # A paragraph ending with a colon introduces what follows ("... as follows:"
    # then code or a list): it is packed with the next atom, where both fit, so
    # the lead-in never ends one chunk while its subject opens the next.
    i = 0
    while i < len(atoms):
        atom = atoms[i]
        while (
            i + 1 < len(atoms)
            and atom[-1].kind == "text"
            and atom[-1].text.rstrip().endswith(":")
            and atom[-1].end == len(atom[-1].source.rstrip())
        ):
            joined = atom + atoms[i + 1]
            if sum(budget.piece_cost(p) for p in joined) > budget.soft(common_path(joined)):
                break
            atom, i = joined, i + 1
        yield atom
        i += 1


def _merge_tiny(drafts: list[Draft], budget: Budget, *, related_only: bool) -> Iterator[Draft]:
    # A draft is "tiny" when it is a whole section (the only draft of its section;
    # with ``related_only`` off, any draft) and costs under min_tokens.
    per_section: dict[int, int] = {}
    for draft in drafts:
        per_section[_section(draft)] = per_section.get(_section(draft), 0) + 1
    out: list[tuple[Draft, bool]] = []
    for draft in drafts:
        tiny = _is_tiny(draft, budget, per_section, related_only)
        if out and (tiny or out[-1][1]) and _can_merge(out[-1][0], draft, budget, related_only):
            merged = Draft(pieces=out[-1][0].pieces + draft.pieces)
            out[-1] = (merged, _is_tiny_cost(merged, budget))
        else:
            out.append((draft, tiny))
    return (draft for draft, _ in out)


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
    if related_only and not _same_parent(
        common_path(left.pieces),
        common_path(right.pieces),
        merged_path,
        budget.root_depth,
        heading_only=heading_only,
    ):
        return False
    cost = sum(budget.piece_cost(p) for p in pieces)
    # A heading with nothing under it but subsections is no chunk of its own: it
    # joins its first child as long as the hard limit allows.
    soft_limit = related_only and not heading_only
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

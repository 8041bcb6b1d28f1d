"""Packing: a prose run of one section -> the groups of pieces that become chunks.

Paragraphs and list items are packed up to a limit, balanced; a list is kept
together where it fits a chunk; a heading or a lead-in ending with a colon stays
with what follows it; a piece over the hard budget is split between sentences,
then words (:mod:`chunkweave.chunking.split`). :func:`pack_to_target` packs up to the
target size (``elements``), :func:`pack_to_limit` up to the hard budget (``headings``,
``faq``: a section is one chunk unless it does not fit).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from chunkweave.chunking.budget import Budget, common_path
from chunkweave.chunking.split import split_piece
from chunkweave.chunking.units import Piece

#: Packs one prose run (the pieces between two tables, within one section for the
#: structure-aware strategies) into the groups of pieces that become chunks.
ProseChunker = Callable[[list[Piece], Budget], Iterator[tuple[Piece, ...]]]


def pack_to_target(pieces: list[Piece], budget: Budget) -> Iterator[tuple[Piece, ...]]:
    """Pack ``pieces`` up to the target size (see :func:`pack_pieces`)."""
    return pack_pieces(pieces, budget, soft=True)


def pack_to_limit(pieces: list[Piece], budget: Budget) -> Iterator[tuple[Piece, ...]]:
    """Pack ``pieces`` up to the hard budget (see :func:`pack_pieces`)."""
    return pack_pieces(pieces, budget, soft=False)


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

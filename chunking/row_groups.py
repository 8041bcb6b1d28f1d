"""Row groups: which consecutive data rows of a table go into one chunk.

A table that does not fit one chunk is cut into groups of consecutive data rows,
each repeating the header. A group has to fit two allowances at once: what its
chunk embeds (the embed text) and what it stores (the Markdown or HTML), which
cost different tokens per row (``table_embed="rows"`` embeds each row as labelled
cells, stores it as a Markdown line). :func:`row_groups` makes as few groups as
greedy filling to both allowances does (so never one row when more fit), even in
size, so no group is a runt of two rows whose embedding is mostly the header.
"""

from __future__ import annotations

from collections.abc import Sequence

from chunkweave.chunking.units import TablePart

#: Per data row, its cost in each allowance (embed text, stored text).
Costs = Sequence[Sequence[int]]


def row_groups(costs: Costs, first: Sequence[int], rest: Sequence[int]) -> list[int]:
    """Return the first row index of each row group.

    ``costs[i][k]`` is data row ``i``'s cost in allowance ``k``; a group holds rows
    whose costs sum to at most ``first[k]`` in every allowance (the table's first
    group: it also holds the caption), ``rest[k]`` for every later group. Greedy
    filling gives the fewest groups; then every room is scaled down as far as it
    goes without needing more groups, and rows move from each group into a lighter
    next one, so the groups come out even. A row over its room alone still gets a
    group of its own (cut later).
    """
    if not costs:
        return [0]
    fewest = _greedy_starts(costs, first, rest, 1.0)
    if len(fewest) == 1:
        return fewest
    low, high = 0.0, 1.0
    for _ in range(_SEARCH_STEPS):
        middle = (low + high) / 2
        if len(_greedy_starts(costs, first, rest, middle, most=len(fewest))) <= len(fewest):
            high = middle
        else:
            low = middle
    return _even_tail(costs, first, rest, _greedy_starts(costs, first, rest, high))


#: Halvings of the room scale in :func:`row_groups` (to within a millionth).
_SEARCH_STEPS = 20


def balanced_row_groups(costs: Sequence[int], rooms: tuple[int, int]) -> list[int]:
    """:func:`row_groups` with one allowance: ``rooms`` are the first and later groups' rooms."""
    return row_groups([(c,) for c in costs], (rooms[0],), (rooms[1],))


def _greedy_starts(
    costs: Costs,
    first: Sequence[int],
    rest: Sequence[int],
    scale: float,
    most: int | None = None,
) -> list[int]:
    """Return each group's first row index, filling groups greedily.

    A group takes rows while they fit its rooms times ``scale``. With ``most``,
    stop at the first group beyond ``most`` (the search in :func:`row_groups` only
    asks whether so many groups suffice).
    """
    starts = [0]
    used = [0] * len(first)
    room = [r * scale for r in first]
    for index, cost in enumerate(costs):
        if index > starts[-1] and any(u + c > r for u, c, r in zip(used, cost, room, strict=True)):
            starts.append(index)
            if most is not None and len(starts) > most:
                return starts
            used = [0] * len(first)
            room = [r * scale for r in rest]
        used = [u + c for u, c in zip(used, cost, strict=True)]
    return starts


def _even_tail(
    costs: Costs, first: Sequence[int], rest: Sequence[int], starts: list[int]
) -> list[int]:
    # Greedy filling leaves the lightest group last (14, 14, 12 rows): from the end,
    # a group's last row moves into the next group while that one stays lighter
    # and within its rooms (14, 13, 13).
    def load(start: int, end: int, rooms: Sequence[int]) -> float:
        return max(
            sum(costs[i][k] for i in range(start, end)) / max(rooms[k], 1)
            for k in range(len(rooms))
        )

    starts = list(starts)
    ends = [*starts[1:], len(costs)]
    for g in range(len(starts) - 1, 0, -1):
        while starts[g] - starts[g - 1] > 1:
            moved = starts[g] - 1
            prev_rooms = first if g == 1 else rest
            after = load(moved, ends[g], rest)
            if after > 1.0 or after >= load(starts[g - 1], starts[g], prev_rooms):
                break
            starts[g] = moved
            ends[g - 1] = moved
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

"""Baseline strategies, for comparing chunkings on one's own data.

They ignore document structure on purpose (that is what they are baselines for),
except that tables still follow the table contract (:mod:`chunkweave.chunking.tables`):
prose runs between tables are chunked by the baseline, tables on their own (see
:mod:`chunkweave.chunking.strategies`). Each is a :data:`~chunkweave.chunking.packing.ProseChunker`
whose chunks hold adjacent fragments of one element as one span (:func:`coalesce`).

- ``fixed``: windows of ``target_tokens`` tokens, consecutive windows sharing
  ``overlap_tokens``. Windows end between words (a token-exact cut would need the
  tokenizer's offsets; a word costs a few tokens at most).
- ``sliding``: windows of ``target_tokens`` advancing by ``stride_tokens`` (default
  half a window).
- ``sentences``: whole sentences packed up to ``target_tokens``, repeating trailing
  sentences worth up to ``overlap_tokens`` at the start of the next chunk.
- ``recursive``: split by a separator hierarchy (elements, lines, sentences, words)
  only as far as needed to fit, then pack the parts up to ``target_tokens``.
- ``pages``: one chunk per page (sub-split when a page exceeds the hard budget).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from chunkweave.chunking.budget import Budget
from chunkweave.chunking.split import line_spans, sentence_spans, split_piece
from chunkweave.chunking.units import Piece


def fixed(pieces: list[Piece], budget: Budget) -> Iterator[tuple[Piece, ...]]:
    """Token windows with ``overlap_tokens`` overlap, cut between words."""
    return _windows(_words(pieces, budget), budget, overlap=budget.opts.overlap_tokens)


def sliding(pieces: list[Piece], budget: Budget) -> Iterator[tuple[Piece, ...]]:
    """Token windows advancing by ``stride_tokens`` (default: half the window)."""
    words = _words(pieces, budget)
    stride = budget.opts.stride_tokens or max(budget.target_tokens // 2, 1)
    return _windows(words, budget, stride=stride)


def sentences(pieces: list[Piece], budget: Budget) -> Iterator[tuple[Piece, ...]]:
    """Sentences packed up to the target, with ``overlap_tokens`` of trailing sentences."""
    units = [
        fragment
        for piece in pieces
        for start, end in sentence_spans(piece.source, piece.start, piece.end)
        for fragment in split_piece(piece.span(start, end), budget.hard(piece.path), budget.meter)
    ]
    return _windows(units, budget, overlap=budget.opts.overlap_tokens)


def recursive(pieces: list[Piece], budget: Budget) -> Iterator[tuple[Piece, ...]]:
    """Split by elements, then lines, then sentences, then words, only where needed."""
    units = [part for piece in pieces for part in _recurse(piece, budget, level=0)]
    return _windows(units, budget, overlap=budget.opts.overlap_tokens)


def pages(pieces: list[Piece], budget: Budget) -> Iterator[tuple[Piece, ...]]:
    """One chunk per page; a page over the hard budget is packed into several."""
    for _, group in itertools.groupby(pieces, key=lambda p: p.page):
        units = [
            fragment
            for piece in group
            for fragment in split_piece(piece, budget.hard(piece.path), budget.meter)
        ]
        yield from _windows(units, budget, overlap=0, hard=True)


def coalesce(pieces: tuple[Piece, ...]) -> tuple[Piece, ...]:
    """Join adjacent fragments of the same element into one span."""
    out: list[Piece] = []
    for piece in pieces:
        if out and out[-1].order == piece.order and out[-1].end <= piece.start:
            out[-1] = out[-1].span(out[-1].start, piece.end)
        else:
            out.append(piece)
    return tuple(out)


def _words(pieces: list[Piece], budget: Budget) -> list[Piece]:
    # Every word as its own fragment (words over the budget already cut).
    return [
        fragment.span(start, end)
        for piece in pieces
        for fragment in split_piece(piece, budget.hard(piece.path), budget.meter)
        for start, end, _ in budget.meter.words(fragment.source, fragment.start, fragment.end)
    ]


_SEPARATORS: tuple[Callable[[str, int, int], list[tuple[int, int]]], ...] = (
    line_spans,
    sentence_spans,
)


def _recurse(piece: Piece, budget: Budget, level: int) -> list[Piece]:
    limit = budget.soft(piece.path)
    if budget.piece_cost(piece) <= limit:
        return [piece]
    if level >= len(_SEPARATORS):
        return split_piece(piece, limit, budget.meter)
    spans = _SEPARATORS[level](piece.source, piece.start, piece.end)
    parts = [piece.span(start, end) for start, end in spans]
    if len(parts) <= 1:
        return _recurse(piece, budget, level + 1)
    return [sub for part in parts for sub in _recurse(part, budget, level + 1)]


def _windows(
    units: list[Piece],
    budget: Budget,
    *,
    overlap: int = 0,
    stride: int | None = None,
    hard: bool = False,
) -> Iterator[tuple[Piece, ...]]:
    # Greedy windows over units, each coalesced. The next window starts ``stride``
    # tokens after the current start, or else where the trailing ``overlap`` tokens
    # begin; it always moves forward by at least one unit.
    costs = [budget.piece_cost(u) for u in units]
    i, n = 0, len(units)
    while i < n:
        limit = budget.hard(units[i].path) if hard else budget.soft(units[i].path)
        j, used = i, 0
        while j < n and (j == i or used + costs[j] <= limit):
            used += costs[j]
            j += 1
        yield coalesce(tuple(units[i:j]))
        if j >= n:
            return
        k = j
        if stride is not None:
            k, advanced = i + 1, costs[i]
            while k < j and advanced < stride:
                advanced += costs[k]
                k += 1
        else:
            back = 0
            while k - 1 > i and back + costs[k - 1] <= overlap:
                k -= 1
                back += costs[k]
        i = k

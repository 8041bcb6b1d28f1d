"""The ``semantic`` strategy: split where adjacent sentences stop being similar.

Every sentence of a prose run is embedded with the configured embedder; a boundary
falls between two sentences whose cosine distance (1 - cosine similarity) exceeds
``semantic_threshold``, the one knob of its options family
(:class:`~chunkweave.chunking.models.SemanticOptions`). Each resulting segment is then
packed to the target size like the ``sentences`` baseline (a long topical run becomes
several chunks, a short one stays one). Tables follow the table contract.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from chunkweave.chunking.baselines import coalesce
from chunkweave.chunking.budget import Budget
from chunkweave.chunking.models import Embed, SemanticOptions
from chunkweave.chunking.packing import ProseChunker
from chunkweave.chunking.split import sentence_spans, split_piece
from chunkweave.chunking.units import Piece

#: Sentences embedded per call (keeps memory bounded on long documents).
BATCH = 64


def semantic_chunker(embed: Embed) -> ProseChunker:
    """Build a prose chunker using ``embed`` (chunks coalesced as the baselines' are)."""

    def chunk(pieces: list[Piece], budget: Budget) -> Iterator[tuple[Piece, ...]]:
        units = [
            fragment
            for piece in pieces
            for start, end in sentence_spans(piece.source, piece.start, piece.end)
            for fragment in split_piece(
                piece.span(start, end), budget.hard(piece.path), budget.meter
            )
        ]
        if not units:
            return
        vectors: list[list[float]] = []
        for offset in range(0, len(units), BATCH):
            batch = [u.text for u in units[offset : offset + BATCH]]
            got = embed(batch)
            if len(got) != len(batch):
                raise ValueError(f"embedder returned {len(got)} vectors for {len(batch)} texts")
            vectors.extend(got)
        threshold = budget.opts.family(SemanticOptions).semantic_threshold
        segment: list[Piece] = [units[0]]
        for prev, vec, unit in zip(vectors, vectors[1:], units[1:], strict=False):
            if 1.0 - _cosine(prev, vec) > threshold:
                yield from _pack(segment, budget)
                segment = []
            segment.append(unit)
        yield from _pack(segment, budget)

    return chunk


def _pack(units: list[Piece], budget: Budget) -> Iterator[tuple[Piece, ...]]:
    current: list[Piece] = []
    used = 0
    for unit in units:
        cost = budget.piece_cost(unit)
        limit = budget.soft(current[0].path if current else unit.path)
        if current and used + cost > limit:
            yield coalesce(tuple(current))
            current, used = [], 0
        current.append(unit)
        used += cost
    if current:
        yield coalesce(tuple(current))


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0

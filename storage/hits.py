"""Search results, whatever the store: one :class:`Hit` per chunk, best first."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chunkweave.chunking.models import Region


@dataclass(frozen=True)
class UnitMatch:
    """A match unit that brought its chunk into a small-to-big search's results.

    ``kind`` ``row``: the table row ``row`` (its index in the table); ``sentences``:
    the characters ``span`` of the hit's ``text``. ``text`` is the unit's text,
    ``rank`` its place among the units the search matched (1 best).
    """

    kind: str
    text: str
    rank: int
    score: float | None = None
    row: int | None = None
    span: tuple[int, int] | None = None


@dataclass(frozen=True)
class Hit:
    """One search result.

    ``score`` is always "higher is better" (see :func:`relevance`); ``distance`` is
    the vector distance when the store reported one (cosine: 0 same direction, 2
    opposite), else ``None``. ``regions`` say where the chunk's text is on its pages
    (:attr:`chunkweave.chunking.models.Chunk.regions`; empty for formats without
    coordinates and in collections older than chunk schema version 3).
    """

    uuid: str
    score: float | None
    text: str
    heading_path: tuple[str, ...]
    pages: tuple[int, ...]
    source: str
    doc_id: str
    type: str
    distance: float | None = None
    regions: tuple[Region, ...] = ()
    #: The caller metadata the chunk carries (declared keys with a value, ``acl`` too).
    metadata: dict[str, Any] = field(default_factory=dict)
    #: As :attr:`chunkweave.chunking.models.Chunk.section_number` / ``section_numbers``.
    section_number: str | None = None
    section_numbers: tuple[str, ...] = ()
    #: Small-to-big search: the units of this chunk that matched, best first.
    matched: tuple[UnitMatch, ...] = ()


def relevance(score: float | None, distance: float | None, *, by_distance: bool) -> float | None:
    """Return a "higher is better" score for one result.

    A vector-only search ranks by cosine ``distance``: its score is the cosine
    similarity ``1 - distance`` (1 best, -1 worst). Hybrid and keyword searches
    already report a higher-is-better ``score`` (fusion or BM25), returned as is.
    ``None`` when the needed value is missing.
    """
    if by_distance:
        return None if distance is None else 1.0 - distance
    return score

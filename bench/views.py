"""The normalised views every system under test is reduced to before it is scored.

Every system under test (chunkweave in each mode and every peer) is reduced to the same
plain views, so one set of scoring functions (:mod:`bench.scoring`) serves all of them:

- :class:`Item`: one parsed element (``kind`` heading/text/table/furniture, text, level,
  page, table rows).
- :class:`ChunkView`: one chunk (text, heading path, pages, kind text/table).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    """One element of a system's parse, normalised for scoring.

    ``kind`` is ``heading``, ``text``, ``table`` or ``furniture``. ``level`` is the
    heading level (0 for a document title where the system distinguishes one).
    ``rows`` holds table cells for ``table`` items.
    """

    kind: str
    text: str
    level: int | None = None
    page: int | None = None
    rows: tuple[tuple[str, ...], ...] | None = None


@dataclass(frozen=True)
class ChunkView:
    """One chunk of a system, normalised for scoring (``kind`` is ``text`` or ``table``)."""

    text: str
    heading_path: tuple[str, ...] = ()
    pages: tuple[int, ...] = ()
    kind: str = "text"

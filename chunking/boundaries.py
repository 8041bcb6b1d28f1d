"""Section boundaries: plain predicates saying which element starts a new section.

A strategy names a :data:`SectionRule`: given the document's elements and the
options, it returns the :data:`IsBoundary` predicate :func:`chunkweave.chunking.units.iter_units`
numbers sections with. A title always starts a section.

- :func:`by_section_level`: a heading of level <= ``section_level`` (``elements``, the baselines).
- :func:`by_heading_level`: a heading of level <= ``heading_level``, or when unset the
  deepest level used at least twice (``headings``).
- :func:`by_every_heading`: every heading, whatever its level (``faq``: each question).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from chunkweave.chunking.models import ChunkOptions
from chunkweave.parsers.elements import Element

#: True when the element opens a new section.
IsBoundary = Callable[[Element], bool]
#: Builds a document's boundary predicate from its elements and the options.
SectionRule = Callable[[Sequence[Element], ChunkOptions], IsBoundary]


def heading_at_most(level: int) -> IsBoundary:
    """Return the predicate: a title, or a heading of level <= ``level`` (unset: 1)."""

    def starts(el: Element) -> bool:
        kind = el.type
        return kind == "title" or (kind == "heading" and (el.level or 1) <= level)

    return starts


def any_heading(el: Element) -> bool:
    """Return True for a title or a heading of any level."""
    return el.is_heading


def by_section_level(elements: Sequence[Element], opts: ChunkOptions) -> IsBoundary:
    """Sections start at headings of level <= ``opts.section_level``."""
    return heading_at_most(opts.section_level)


def by_heading_level(elements: Sequence[Element], opts: ChunkOptions) -> IsBoundary:
    """Sections start at ``opts.heading_level``, else at :func:`auto_heading_level`."""
    return heading_at_most(opts.heading_level or auto_heading_level(elements))


def by_every_heading(elements: Sequence[Element], opts: ChunkOptions) -> IsBoundary:
    """Every heading starts a section."""
    return any_heading


def auto_heading_level(elements: Sequence[Element]) -> int:
    """Pick the finest heading level used consistently: the deepest seen twice (else 1)."""
    counts: dict[int, int] = {}
    for el in elements:
        if el.type == "heading":
            counts[el.level or 1] = counts.get(el.level or 1, 0) + 1
    repeated = [level for level, n in counts.items() if n >= 2]
    return max(repeated, default=1)

"""Pure functions of boxes ``(x0, y0, x1, y1)`` in PDF points, origin top-left.

What the PDF heuristics ask of boxes, stated once: the box covering several, how
much of one another covers, whether a box's centre lies inside another, which
items lie outside a set of boxes (table text taken out of the flow).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from chunkweave.parsers.elements import BBox

__all__ = [
    "BBox",
    "HasBBox",
    "MayHaveBBox",
    "boxes_of",
    "centre_inside",
    "enclose",
    "inside_any",
    "intersects",
    "outside",
    "overlap_share",
    "union",
]


class HasBBox(Protocol):
    """Anything with a ``bbox`` ``(x0, y0, x1, y1)``."""

    @property
    def bbox(self) -> BBox:
        """Bounding box in PDF points, origin top-left."""
        ...


class MayHaveBBox(Protocol):
    """Anything with an optional ``bbox`` (an element)."""

    @property
    def bbox(self) -> BBox | None:
        """Bounding box in PDF points, or None."""
        ...


T = TypeVar("T", bound=HasBBox)


def union(a: BBox, b: BBox) -> BBox:
    """Return the smallest box covering ``a`` and ``b``."""
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def enclose(boxes: Sequence[Sequence[float]]) -> BBox:
    """Return the smallest box covering ``boxes`` (not empty).

    Items past the fourth (a word's text, its block number) are ignored.
    """
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def overlap_share(a: Sequence[float], b: Sequence[float]) -> float:
    """Return the share of ``a``'s area that ``b`` covers (0 to 1)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    area = max((a[2] - a[0]) * (a[3] - a[1]), 1e-6)
    return max(w, 0) * max(h, 0) / area


def intersects(a: BBox, b: BBox) -> bool:
    """Return True when ``a`` and ``b`` share some area."""
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def centre_inside(bbox: BBox, box: Sequence[float]) -> bool:
    """Return True when the centre of ``bbox`` lies in ``box`` (edges included)."""
    cx, cy = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]


def inside_any(bbox: BBox, boxes: Iterable[Sequence[float]]) -> bool:
    """Return True when the centre of ``bbox`` lies in one of ``boxes``."""
    cx, cy = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
    return any(b[0] <= cx <= b[2] and b[1] <= cy <= b[3] for b in boxes)


def boxes_of(items: Iterable[MayHaveBBox]) -> list[BBox]:
    """Return the boxes of the items that have one, in order."""
    return [item.bbox for item in items if item.bbox is not None]


def outside(items: list[T], boxes: Sequence[BBox]) -> list[T]:
    """Return the items whose centre lies in none of ``boxes`` (``items`` itself when none)."""
    return [it for it in items if not inside_any(it.bbox, boxes)] if boxes else items

"""Reading order of page regions: column detection by gutters, then bands.

Regions (text blocks, tables, figures) are ordered as a reader would: the page is
cut into horizontal *bands* by regions that span a column gutter (titles, wide
figures); inside a band, columns are read left to right, each top to bottom.
A gutter is a vertical strip, inside the text area, that no narrow region
crosses while both sides hold text *side by side*: regions on its left and on
its right share at least :data:`MIN_SIDE_BY_SIDE` points of height. A
centred title above a left-aligned heading leaves an empty strip between them
too, but one sits above the other, so that strip is not a gutter and the page
reads top to bottom. A region with nothing beside it does not hide a gutter
either (an address block centred under the authors of a paper).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from chunkweave.parsers.pdf.geometry import BBox, HasBBox

#: Regions narrower than this share of the text width take part in gutter finding.
NARROW = 0.6
#: Regions lower than this (one line) do not hide a gutter.
MIN_COLUMN_HEIGHT = 15.0
#: Minimum gutter width in points.
MIN_GUTTER = 6.0
#: Columns must run side by side over at least this height (points).
MIN_SIDE_BY_SIDE = MIN_COLUMN_HEIGHT

T = TypeVar("T", bound=HasBBox)


def find_gutters(regions: Sequence[HasBBox]) -> list[float]:
    """Return the x positions of column gutters (empty for single-column pages)."""
    return _gutters([r.bbox for r in regions])


def _gutters(boxes: Sequence[BBox]) -> list[float]:
    if len(boxes) < 4:
        return []
    left = min(b[0] for b in boxes)
    right = max(b[2] for b in boxes)
    width = right - left
    if width <= 0:
        return []
    # One-line regions (centred names, dates, short headings) may cross a gutter
    # without hiding it; they become band separators below.
    narrow = sorted(
        b for b in boxes if b[2] - b[0] < NARROW * width and b[3] - b[1] >= MIN_COLUMN_HEIGHT
    )
    if len(narrow) < 4:
        return []
    # Nor does a region with no other narrow region beside it (an address block
    # centred under the authors): it sits above or below the columns.
    blocking = [b for b in narrow if _has_neighbour(b, narrow)]
    gutters: list[float] = []
    reach = blocking[0][2] if blocking else 0.0
    for b in blocking[1:]:
        if b[0] - reach >= MIN_GUTTER:
            gutters.append((reach + b[0]) / 2)
        reach = max(reach, b[2])
    # Both sides of a gutter must hold a real share of the narrow regions, so a
    # stray label or margin note does not split the page; and text on the two
    # sides (one-line regions too) must run side by side.
    out = []
    for g in gutters:
        fewer = min(sum(1 for b in narrow if b[2] <= g), sum(1 for b in narrow if b[0] >= g))
        if fewer < 2 or fewer < 0.15 * len(narrow):
            continue
        lefts = [b for b in boxes if b[2] <= g]
        rights = [b for b in boxes if b[0] >= g]
        if _shared_height(lefts, rights) >= MIN_SIDE_BY_SIDE:
            out.append(g)
    return out


def _has_neighbour(box: BBox, boxes: Sequence[BBox]) -> bool:
    """Return True when another box shares some of ``box``'s rows."""
    return any(o is not box and min(box[3], o[3]) > max(box[1], o[1]) for o in boxes)


def _shared_height(a: Sequence[BBox], b: Sequence[BBox]) -> float:
    """Height (points) over which both sets of boxes hold some box."""
    total = 0.0
    spans_b = _merged_spans(b)
    for y0, y1 in _merged_spans(a):
        for v0, v1 in spans_b:
            total += max(0.0, min(y1, v1) - max(y0, v0))
    return total


def _merged_spans(boxes: Sequence[BBox]) -> list[tuple[float, float]]:
    """Merge the vertical extents of ``boxes`` into disjoint spans, top first."""
    spans: list[tuple[float, float]] = []
    for y0, y1 in sorted((b[1], b[3]) for b in boxes):
        if spans and y0 <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], y1))
        else:
            spans.append((y0, y1))
    return spans


def reading_order(regions: Sequence[T]) -> list[T]:
    """Return ``regions`` in reading order (see the module docstring)."""
    # A region's box may be derived on every access (a union of lines): read once.
    boxes = {id(r): r.bbox for r in regions}
    gutters = _gutters(list(boxes.values()))
    by_top = sorted(regions, key=lambda r: (boxes[id(r)][1], boxes[id(r)][0]))
    if not gutters:
        return _single_column(by_top, boxes)
    out: list[T] = []
    band: list[T] = []
    for region in by_top:
        if _spans(boxes[id(region)], gutters):
            out.extend(_columns(band, gutters, boxes))
            band = []
            out.append(region)
        else:
            band.append(region)
    out.extend(_columns(band, gutters, boxes))
    return out


def column_count(regions: Sequence[HasBBox]) -> int:
    """Return the number of text columns detected on a page (1 when no gutter)."""
    return len(find_gutters(regions)) + 1


def _spans(box: BBox, gutters: list[float]) -> bool:
    x0, _, x1, _ = box
    return any(x0 < g - 2 and x1 > g + 2 for g in gutters)


def _columns(band: list[T], gutters: list[float], boxes: dict[int, BBox]) -> list[T]:
    def key(r: T) -> tuple[int, float, float]:
        x0, y0, x1, _ = boxes[id(r)]
        centre = (x0 + x1) / 2
        return (sum(1 for g in gutters if centre > g), y0, x0)

    return sorted(band, key=key)


def _single_column(by_top: list[T], boxes: dict[int, BBox]) -> list[T]:
    # Regions side by side on one row (within a few points) read left to right.
    return sorted(by_top, key=lambda r: (round(boxes[id(r)][1] / 4), boxes[id(r)][0]))

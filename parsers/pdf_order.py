"""Reading order of page regions: column detection by gutters, then bands.

Regions (text blocks, tables, figures) are ordered as a reader would: the page is
cut into horizontal *bands* by regions that span a column gutter (titles, wide
figures); inside a band, columns are read left to right, each top to bottom.
A gutter is a vertical strip, inside the text area, that no narrow region
crosses while both sides hold text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

#: Regions narrower than this share of the text width take part in gutter finding.
NARROW = 0.6
#: Regions lower than this (one line) do not hide a gutter.
MIN_COLUMN_HEIGHT = 15.0
#: Minimum gutter width in points.
MIN_GUTTER = 6.0


class HasBBox(Protocol):
    """Anything with a ``bbox`` ``(x0, y0, x1, y1)``."""

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        """Bounding box in PDF points, origin top-left."""
        ...


T = TypeVar("T", bound=HasBBox)


def find_gutters(regions: Sequence[HasBBox]) -> list[float]:
    """Return the x positions of column gutters (empty for single-column pages)."""
    if len(regions) < 4:
        return []
    left = min(r.bbox[0] for r in regions)
    right = max(r.bbox[2] for r in regions)
    width = right - left
    if width <= 0:
        return []
    # One-line regions (centred names, dates, short headings) may cross a gutter
    # without hiding it; they become band separators below.
    narrow = sorted(
        (r.bbox[0], r.bbox[2])
        for r in regions
        if r.bbox[2] - r.bbox[0] < NARROW * width and r.bbox[3] - r.bbox[1] >= MIN_COLUMN_HEIGHT
    )
    if len(narrow) < 4:
        return []
    gutters: list[float] = []
    reach = narrow[0][1]
    for x0, x1 in narrow[1:]:
        if x0 - reach >= MIN_GUTTER:
            gutters.append((reach + x0) / 2)
        reach = max(reach, x1)
    # Both sides of a gutter must hold a real share of the narrow regions, so a
    # stray label or margin note does not split the page.
    out = []
    for g in gutters:
        n_left = sum(1 for x0, x1 in narrow if x1 <= g)
        n_right = sum(1 for x0, x1 in narrow if x0 >= g)
        if min(n_left, n_right) >= 2 and min(n_left, n_right) >= 0.15 * len(narrow):
            out.append(g)
    return out


def reading_order(regions: Sequence[T]) -> list[T]:
    """Return ``regions`` in reading order (see the module docstring)."""
    gutters = find_gutters(regions)
    by_top = sorted(regions, key=lambda r: (r.bbox[1], r.bbox[0]))
    if not gutters:
        return _single_column(by_top)
    out: list[T] = []
    band: list[T] = []
    for region in by_top:
        if _spans(region, gutters):
            out.extend(_columns(band, gutters))
            band = []
            out.append(region)
        else:
            band.append(region)
    out.extend(_columns(band, gutters))
    return out


def column_count(regions: Sequence[HasBBox]) -> int:
    """Return the number of text columns detected on a page (1 when no gutter)."""
    return len(find_gutters(regions)) + 1


def _spans(region: HasBBox, gutters: list[float]) -> bool:
    x0, _, x1, _ = region.bbox
    return any(x0 < g - 2 and x1 > g + 2 for g in gutters)


def _columns(band: list[T], gutters: list[float]) -> list[T]:
    def column(r: T) -> int:
        centre = (r.bbox[0] + r.bbox[2]) / 2
        return sum(1 for g in gutters if centre > g)

    return sorted(band, key=lambda r: (column(r), r.bbox[1], r.bbox[0]))


def _single_column(by_top: list[T]) -> list[T]:
    # Regions side by side on one row (within a few points) read left to right.
    return sorted(by_top, key=lambda r: (round(r.bbox[1] / 4), r.bbox[0]))

"""Source regions: where on its pages a chunk's text is, to highlight a search hit.

A chunk's regions come from the boxes of the elements it holds
(``Chunk.element_orders``), merged per page. On each page the boxes are taken in
reading order and each is merged into the region before it (their union) as long as
that union overlaps no *other* element of the page; otherwise it opens a new region.
So a chunk in one column is one box per page, and a chunk that runs from the foot of
one column to the head of the next (or around a figure, or a table chunked on its
own) gets one box per run: a single union box per page would cover the unrelated
text between them, and an app would highlight it as the evidence.

A paragraph the parser joined across a column or page break carries the box of
each part (``Element.continued``); every part is placed on its own page like an
element of its own, so its continuation is highlighted too and the chunk's pages
include the continuation's (:meth:`RegionIndex.pages`).

What a region cannot narrow: an element split over several chunks (a long
paragraph, a table's row groups) shows its whole box (all its parts) in each of
them, as elements carry no line or row positions; a table chunk also shows its
caption.
Elements without a page or a box (DOCX, the docling/unstructured backends) add no
region, so their chunks have none. Regions are positional, not part of a chunk's ID:
when an edit only moves a chunk, the store writes its new regions (and
``chunk_index``) again with its stored vector (``storage.write.ChunkWriter``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from chunkweave.chunking.models import Region
from chunkweave.parsers.elements import BBox, Element

#: Points by which another element must reach into a merged box to block the merge:
#: line boxes of neighbouring elements touch or overlap by a fraction of a line.
TOUCH_TOLERANCE = 2.0

_Box = tuple[int, BBox]  # (element order, box)


class RegionIndex:
    """The boxes of one document's elements, by order and by page (built once)."""

    def __init__(self, elements: Iterable[Element]) -> None:
        #: Each element's parts: (page, box), the first part first.
        self.parts_of: dict[int, tuple[tuple[int, BBox], ...]] = {}
        #: Orders of the elements with parts on more than one page (joined texts).
        self.spread: set[int] = set()
        #: Per page, each element's box shrunk by the tolerance (see :func:`merge_boxes`).
        self.cores: dict[int, list[_Box]] = {}
        t = TOUCH_TOLERANCE
        for el in elements:
            page, bbox = el.page, el.bbox
            if page is None or bbox is None:
                continue
            parts = ((page, bbox), *el.continued)
            self.parts_of[el.order] = parts
            if el.continued and any(p != page for p, _ in el.continued):
                self.spread.add(el.order)
            for part_page, (x0, y0, x1, y1) in parts:
                if x1 - x0 > 2 * t and y1 - y0 > 2 * t:
                    core = (x0 + t, y0 + t, x1 - t, y1 - t)
                    self.cores.setdefault(part_page, []).append((el.order, core))

    def pages(self, orders: Sequence[int], pages: tuple[int, ...]) -> tuple[int, ...]:
        """Return ``pages`` (a chunk's, sorted) with the pages of its joined texts' parts."""
        spread = self.spread
        if not spread or spread.isdisjoint(orders):
            return pages
        more = {p for o in orders if o in spread for p, _ in self.parts_of[o]}
        return tuple(sorted(more.union(pages)))

    def regions(self, orders: Sequence[int]) -> tuple[Region, ...]:
        """Return the regions of the elements ``orders`` (a chunk's, in reading order).

        Per page (pages in order of first appearance), each region is the union of a
        run of consecutive boxes that reaches into no other element of the page (see
        :func:`merge_boxes`); coordinates are rounded outwards to 0.01 pt. Empty when
        none of the elements has a box.
        """
        by_page: dict[int, list[BBox]] = {}
        parts_of = self.parts_of
        for order in orders:
            for page, box in parts_of.get(order, ()):
                by_page.setdefault(page, []).append(box)
        held = set(orders) if len(orders) > 1 else ()
        out: list[Region] = []
        for page, boxes in by_page.items():
            if len(boxes) > 1:
                cores = [core for order, core in self.cores.get(page, ()) if order not in held]
                boxes = _merge(boxes, cores)
            out.extend(Region(page=page, bbox=_outward(b)) for b in boxes)
        return tuple(out)


def merge_boxes(boxes: Sequence[BBox], others: Sequence[BBox]) -> list[BBox]:
    """Merge ``boxes`` (one page, reading order) into runs that cover none of ``others``.

    Each box joins the current run when the union of the two reaches into no box of
    ``others`` (by more than :data:`TOUCH_TOLERANCE` on every side) that neither
    reached into already (sloppy, overlapping element boxes from the parser do not
    split a run); else it starts the next run.
    """
    t = TOUCH_TOLERANCE
    cores = [(x0 + t, y0 + t, x1 - t, y1 - t) for x0, y0, x1, y1 in others]
    return _merge(boxes, [c for c in cores if c[0] < c[2] and c[1] < c[3]])


def _merge(boxes: Sequence[BBox], cores: Sequence[BBox]) -> list[BBox]:
    # ``cores``: the other elements' boxes shrunk by the tolerance, so "reaches
    # into" is a plain overlap test.
    out: list[BBox] = []
    current = boxes[0]
    for box in boxes[1:]:
        union = _union(current, box)
        if union == current or _clear(union, current, box, cores):
            current = union
        else:
            out.append(current)
            current = box
    out.append(current)
    return out


def _union(a: BBox, b: BBox) -> BBox:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _overlap(a: BBox, b: BBox) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _clear(union: BBox, current: BBox, box: BBox, cores: Sequence[BBox]) -> bool:
    ux0, uy0, ux1, uy1 = union
    for core in cores:
        # Most cores lie elsewhere on the page: rejected by the first comparisons.
        if core[2] <= ux0 or core[0] >= ux1 or core[3] <= uy0 or core[1] >= uy1:
            continue
        if not _overlap(current, core) and not _overlap(box, core):
            return False
    return True


def _outward(bbox: BBox) -> BBox:
    # Rounded so stored regions stay short, outwards so they still contain the text.
    return (
        math.floor(bbox[0] * 100) / 100,
        math.floor(bbox[1] * 100) / 100,
        math.ceil(bbox[2] * 100) / 100,
        math.ceil(bbox[3] * 100) / 100,
    )

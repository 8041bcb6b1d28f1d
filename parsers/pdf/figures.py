"""Figures of a PDF page: images and the layout model's pictures, as ``figure`` elements."""

from __future__ import annotations

import pymupdf

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.geometry import overlap_share
from chunkweave.parsers.pdf.layout_model import LayoutBox

#: Images smaller than this share of the page are icons or bullets, not figures.
MIN_FIGURE_SHARE = 0.02
#: Images larger than this share of the page are the page itself (a scan, a
#: background), not a figure on it.
MAX_FIGURE_SHARE = 0.9


def page_figures(
    page: pymupdf.Page, page_no: int, boxes: list[LayoutBox] | None, has_text: bool
) -> list[Element]:
    """Return the figures of a page: its images and the model's pictures (``order`` 0).

    ``boxes`` are the layout model's regions (None on the heuristic route); with
    ``has_text`` a near full-page image is the background of the text, not a figure.
    Overlapping figures are kept once.
    """
    area = abs(page.rect) or 1.0
    rects = [pymupdf.Rect(i["bbox"]) & page.rect for i in page.get_image_info()]
    if boxes is not None:
        rects += [pymupdf.Rect(b.bbox) for b in boxes if b.label == "picture"]
    out: list[Element] = []
    for r in rects:
        share = abs(r) / area
        # A full-page image under a text layer is a scanned page, not a figure.
        if share < MIN_FIGURE_SHARE or (has_text and share > MAX_FIGURE_SHARE):
            continue
        if any(overlap_share(tuple(r), e.bbox or (0, 0, 0, 0)) > 0.5 for e in out):
            continue
        bbox = (float(r.x0), float(r.y0), float(r.x1), float(r.y1))
        out.append(Element(type="figure", text="", page=page_no, bbox=bbox, order=0))
    return out

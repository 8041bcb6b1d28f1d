"""One PDF page to elements: OCR gate, tables, route, furniture, figures, regions, order.

Two routes share every classifier:

- heuristic: MuPDF blocks as regions, reading order from gutter detection
  (:mod:`chunkweave.parsers.pdf.order`);
- model: the pymupdf-layout boxes as regions (with their classes as hints) in the
  model's reading order (:func:`chunkweave.parsers.pdf.model.model_order`).

Tables come first on both routes (:mod:`chunkweave.parsers.pdf.tables`); the model
route adds tables the model saw that no detector found. Which route a page takes
in ``auto`` mode is :mod:`chunkweave.parsers.pdf.route`'s decision, recorded in
:attr:`PageResult.route` and :attr:`PageResult.reason`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pymupdf

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.blocks import PageContext, Placed, block_regions, classify_region
from chunkweave.parsers.pdf.figures import page_figures
from chunkweave.parsers.pdf.geometry import boxes_of, inside_any, outside
from chunkweave.parsers.pdf.headings import demote_figure_labels, demote_label_runs
from chunkweave.parsers.pdf.model import layout_boxes, model_order
from chunkweave.parsers.pdf.ocr import looks_scanned, ocr_page, tessdata_dir, text_layer
from chunkweave.parsers.pdf.order import reading_order
from chunkweave.parsers.pdf.orientation import ReadingFrame
from chunkweave.parsers.pdf.profile import PdfProfile
from chunkweave.parsers.pdf.route import Decision, Route, decide_route
from chunkweave.parsers.pdf.tables import find_tables, model_tables
from chunkweave.parsers.pdf.text import Line, extract_lines


@dataclass
class PageResult:
    """Elements of one page in reading order, its warnings, and how it was parsed.

    ``route`` is ``model`` when the layout model's regions were used; ``reason``
    says why (``accurate``, ``complex``, ``unsure headings``) or, on the heuristic
    route, why not (``fast``, ``plain``, ``model unavailable``).
    """

    elements: list[Element] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    route: Decision = "heuristic"
    reason: str = ""


def parse_page(
    page: pymupdf.Page,
    profile: PdfProfile,
    ctx: PageContext,
    *,
    route: Route,
    ocr: bool,
    ocr_language: str,
) -> PageResult:
    """Turn one page into elements (``order`` 0, true page numbers).

    ``route``: ``heuristic``, ``model`` (layout model; heuristics if it fails) or
    ``auto`` (model only when :func:`~chunkweave.parsers.pdf.route.page_is_complex` or
    the heuristics are unsure of the page's headings,
    :func:`~chunkweave.parsers.pdf.route.unsure_heading_lines`). The result records the
    route taken and why.
    """
    result = PageResult()
    lines = extract_lines(page) if ctx.lines is None else ctx.lines
    scanned = looks_scanned(page, sum(ln.chars for ln in lines))
    frame = None  # OCR lines are in the page turned upright, boxes mapped back at the end
    if scanned:
        lines, frame = _ocr_lines(page, ctx.page, ocr, ocr_language, result.warnings)
        if not lines:
            return result
        if frame is not None:  # the page as it reads (its list indents carry on)
            ctx = replace(ctx, page_height=frame.rect.height)
    tables, unexplained_rules = find_tables(page, lines, ctx.page)
    result.route, result.reason = decide_route(
        page, profile, lines, tables, route, unexplained_rules
    )
    if frame is not None and not frame.is_page and result.route == "model":
        # The model reads the page's own frame, where a turned scan's lines are not.
        result.route, result.reason = "heuristic", "turned scan"
    boxes = layout_boxes(page, light=route == "auto") if result.route == "model" else None
    if boxes is None and result.route == "model":
        result.route, result.reason = "heuristic", "model unavailable"
    if boxes is not None:
        regions = [b.bbox for b in boxes if b.label == "table"]
        tables += model_tables(page, ctx.page, regions, tables)
    # Table cells near the page edge are not running headers or footers.
    lines = outside(lines, boxes_of(tables))
    height = (frame.rect if frame else page.rect).height
    furniture = profile.furniture.classify(
        lines, height, profile.body_size, page=ctx.page - 1, outline=profile.outline
    )
    body = [ln for i, ln in enumerate(lines) if i not in furniture]
    # On a scanned page the images are the text just read, not figures.
    figures = [] if scanned else page_figures(page, ctx.page, boxes, bool(body))
    if boxes is not None:
        fig_boxes = [f.bbox or (0, 0, 0, 0) for f in figures]
        body = [ln for ln in body if not inside_any(ln.bbox, fig_boxes)]

    head = [_furniture_element(lines[i], band, ctx.page) for i, band in sorted(furniture.items())]
    result.elements.extend(e for e in head if e.type == "page_header")
    placed = [Placed(t) for t in tables] + [Placed(f) for f in figures]
    if boxes is not None:
        ordered = model_order(body, boxes, placed)
    else:
        ordered = reading_order([*block_regions(body), *placed])
    for item in ordered:
        if isinstance(item, Placed):
            result.elements.append(item.element)
        else:
            result.elements.extend(classify_region(item, ctx))
    result.elements.extend(e for e in head if e.type == "page_footer")
    listed = _outline_check(profile)
    result.elements = list(demote_label_runs(demote_figure_labels(result.elements, listed), listed))
    if frame is not None:
        result.elements = [frame.element_to_page(e) for e in result.elements]
    return result


def _outline_check(profile: PdfProfile) -> Callable[[Element], bool]:
    """Return a predicate telling whether an element's text is an outline entry of its page."""
    outline = profile.outline
    if not (outline and profile.headings.has_outline):
        return lambda el: False
    # The profile's index is never consumed, so this asks without side effects.
    return lambda el: outline.match(el.text, el.page or 0, consume=False) is not None


def _ocr_lines(
    page: pymupdf.Page, page_no: int, ocr: bool, language: str, warnings: list[str]
) -> tuple[list[Line], ReadingFrame | None]:
    if (layer := text_layer(page)) is not None:  # an OCR layer already, or sideways text
        return extract_lines(page, layer[0]), layer[1]
    if not ocr:
        warnings.append(f"page {page_no}: no text layer (scanned image) and OCR is off")
        return [], None
    if tessdata_dir(language) is None:
        warnings.append(
            f"page {page_no}: no text layer (scanned image) and OCR is unavailable "
            f"(Tesseract data for {language!r} not found)"
        )
        return [], None
    try:
        result = ocr_page(page, language)
    except RuntimeError as exc:
        warnings.append(f"page {page_no}: no text layer and OCR failed: {exc}")
        return [], None
    # OCR text is set in a placeholder font: its flags say nothing about code.
    lines = extract_lines(page, result.textpage) if result.chars else []
    for ln in lines:
        ln.mono = False
    if not lines:
        detail = result.note or f"languages tried: {'+'.join(result.languages)}"
        warnings.append(f"page {page_no}: no text layer and OCR found no text ({detail})")
    elif result.note:  # turned, unreliable, or a language without data
        warnings.append(f"page {page_no}: scanned; {result.note}")
    return lines, result.frame


def _furniture_element(line: Line, band: str, page_no: int) -> Element:
    kind = "page_header" if band == "top" else "page_footer"
    return Element(type=kind, text=line.text, page=page_no, bbox=line.bbox, order=0)

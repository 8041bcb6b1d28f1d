"""One PDF page to elements: OCR gate, tables, route, furniture, figures, regions, order.

Two routes share every classifier:

- heuristic: MuPDF blocks as regions, reading order from gutter detection
  (:mod:`chunkweave.parsers.pdf.order`);
- model: the pymupdf-layout boxes as regions (with their classes as hints) in the
  model's reading order (:func:`chunkweave.parsers.pdf.layout_model.model_order`).

Tables come first on both routes (:mod:`chunkweave.parsers.pdf.tables`); on the
model route the model's classes vote on the candidates left in doubt
(:mod:`~chunkweave.parsers.pdf.tables.verdict`) and tables the model saw that no
detector found are added. Which route a document
takes in ``auto`` mode is decided once for the document by
:mod:`chunkweave.parsers.pdf.calibrate`; the page records it in
:attr:`PageResult.route` and :attr:`PageResult.reason`. The costly steps (text
extraction or OCR, table search, the model run) are :func:`prepare_page`'s, so a
page parsed twice (calibration, then the page loop) pays for them once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pymupdf

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.blocks import PageContext, Placed, block_regions, classify_region
from chunkweave.parsers.pdf.figures import page_figures
from chunkweave.parsers.pdf.geometry import boxes_of, inside_any, outside
from chunkweave.parsers.pdf.headings import (
    demote_figure_labels,
    demote_label_runs,
    demote_run_ins,
)
from chunkweave.parsers.pdf.layout_model import LayoutBox, layout_boxes, model_order
from chunkweave.parsers.pdf.legibility import legibility, unmapped_fonts
from chunkweave.parsers.pdf.ocr import (
    looks_scanned,
    ocr_page,
    tessdata_dir,
    text_layer,
    turned_text,
)
from chunkweave.parsers.pdf.order import reading_order
from chunkweave.parsers.pdf.orientation import ReadingFrame
from chunkweave.parsers.pdf.profile import PdfProfile
from chunkweave.parsers.pdf.route import Decision
from chunkweave.parsers.pdf.tables import find_tables, model_tables, standing
from chunkweave.parsers.pdf.text import Line, PageLines, extract_lines
from chunkweave.parsers.pdf.wraps import join_hanging_markers, join_wrapped_headings


@dataclass
class PageResult:
    """Elements of one page in reading order, its warnings, and how it was parsed.

    ``route`` is ``model`` when the layout model's regions were used; ``reason``
    says why (``accurate``, ``calibrated``: ``auto`` sent the document to the model)
    or, on the heuristic route, why not (``fast``, ``calibrated``, ``model
    unavailable``, ``no text``). ``unreadable``: why the page's text layer was not
    language and could not be read by OCR either (None when it was, or is, text).
    """

    elements: list[Element] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    route: Decision = "heuristic"
    reason: str = ""
    unreadable: str | None = None


@dataclass
class PreparedPage:
    """The costly, classification-free part of a page: its lines, tables and model boxes.

    Made once per page (:func:`prepare_page`) and reused: ``auto``'s calibration
    parses a sampled page on both routes and the page loop parses it again with
    the document's route, all from one text extraction (or OCR), one table
    search and one model run. ``boxes`` is None until the model ran (``light``
    says which variant); ``model_failed`` records that it could not run.
    ``frame``: for a page read by OCR or from its own text layer, the upright
    frame its lines are in (element boxes are mapped back to the page at the end).
    ``unreadable``: why a text layer that is not language
    (:mod:`~chunkweave.parsers.pdf.legibility`) was dropped without an OCR reading.
    """

    lines: list[Line]
    scanned: bool
    warnings: list[str]
    tables: list[Element] = field(default_factory=list)
    boxes: list[LayoutBox] | None = None
    light: bool = False
    model_failed: bool = False
    frame: ReadingFrame | None = None
    unreadable: str | None = None

    def model_boxes(self, page: pymupdf.Page, light: bool) -> list[LayoutBox] | None:
        """Return the page's layout boxes, running the model once (a full run serves both)."""
        if self.boxes is not None and (self.light == light or not self.light):
            return self.boxes
        if self.model_failed:
            return None
        boxes = layout_boxes(page, light=light)
        if boxes is None:
            self.model_failed = True
            return None
        self.boxes, self.light = boxes, light
        return boxes


def prepare_page(
    page: pymupdf.Page,
    page_no: int,
    lines: list[Line] | None,
    *,
    ocr: bool,
    ocr_language: str,
) -> PreparedPage:
    """Extract the page's lines (OCR for a scan) and its tables; ``lines`` if already read."""
    warnings: list[str] = []
    lines = extract_lines(page) if lines is None else lines
    chars = sum(ln.chars for ln in lines)
    scanned = looks_scanned(page, chars)
    frame = None  # OCR lines are in the page turned upright, boxes mapped back at the end
    unreadable = None
    if scanned:
        lines, frame = _ocr_lines(page, page_no, ocr, ocr_language, warnings)
    elif (legible := legibility(ln.text for ln in lines)).garbled:
        # Glyph codes, not text (fonts without Unicode maps): never stored as text.
        fonts = unmapped_fonts(page)
        why = legible.reason + (
            f"; fonts without a Unicode map: {', '.join(fonts)}" if fonts else ""
        )
        lines, frame = _ocr_lines(page, page_no, ocr, ocr_language, warnings, own_layer=False)
        if lines and legibility(ln.text for ln in lines).garbled:
            lines, frame = PageLines(), None
        if lines:
            warnings.append(f"page {page_no}: text layer is not language ({why}); read by OCR")
        else:
            unreadable = why
            warnings.append(f"page {page_no}: text layer is not language ({why}); page dropped")
    # A page without text lines may still hold a sideways table the detector reads itself.
    tables = find_tables(page, lines, page_no)[0] if lines or not scanned else []
    sideways = lines.sideways if isinstance(lines, PageLines) else 0
    if not scanned and sideways > chars and (turned := turned_text(page)) is not None:
        # A landscape page set sideways: its text is read upright, and the tables
        # (found in the page's coordinates) join it in that frame.
        textpage, frame = turned
        tables = [frame.element_from_page(t) for t in tables]
        lines = extract_lines(page, textpage)
    return PreparedPage(
        lines=lines,
        scanned=scanned,
        warnings=warnings,
        tables=tables,
        frame=frame,
        unreadable=unreadable,
    )


def parse_page(
    page: pymupdf.Page,
    profile: PdfProfile,
    ctx: PageContext,
    *,
    route: Decision,
    ocr: bool,
    ocr_language: str,
    light: bool = False,
    prepared: PreparedPage | None = None,
) -> PageResult:
    """Turn one page into elements (``order`` 0, true page numbers).

    ``route``: ``heuristic`` or ``model`` (the layout model, its geometry-only
    variant when ``light``; heuristics if it fails). Which route a document takes
    in ``auto`` mode is :mod:`chunkweave.parsers.pdf.calibrate`'s decision.
    ``prepared`` is the page's :class:`PreparedPage` when it was made already
    (it is updated with the model boxes when the model runs). The result records
    the route taken and why.
    """
    if prepared is None:
        prepared = prepare_page(page, ctx.page, ctx.lines, ocr=ocr, ocr_language=ocr_language)
    result = PageResult(warnings=list(prepared.warnings), route=route)
    result.unreadable = prepared.unreadable
    lines = prepared.lines
    scanned = prepared.scanned
    if (scanned or prepared.unreadable) and not lines:
        result.route, result.reason = "heuristic", "no text"
        return result
    frame = prepared.frame
    if frame is not None:  # the page as it reads (its list indents carry on)
        ctx = replace(ctx, page_height=frame.rect.height)
        if not frame.is_page and route == "model":
            # The model reads the page's own frame, where a turned page's lines are not.
            route = "heuristic"
            result.route, result.reason = "heuristic", "turned page"
    tables = list(prepared.tables)
    boxes = prepared.model_boxes(page, light) if route == "model" else None
    if boxes is None and route == "model":
        result.route, result.reason = "heuristic", "model unavailable"
    if boxes is not None:
        regions = [b.bbox for b in boxes if b.label == "table"]
        # The model's classes vote on the candidates the cells left in doubt.
        tables = standing(tables, [(b.bbox, b.label) for b in boxes])
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
    listed = outline_check(profile)
    joined = join_hanging_markers(result.elements)
    trusted = bool(profile.outline and profile.headings.has_outline)
    if trusted:  # the outline vouches for its titles
        joined = join_wrapped_headings(joined, profile.outline.continued_by)
    kept = list(demote_run_ins(demote_label_runs(demote_figure_labels(joined, listed), listed)))
    # Without one, layout alone joins only headings that are still headings once runs
    # of labels (author lists, cover lines: one heading-styled line each) are out.
    result.elements = kept if trusted else join_wrapped_headings(kept, None)
    if frame is not None:
        result.elements = [frame.element_to_page(e) for e in result.elements]
    return result


def outline_check(profile: PdfProfile) -> Callable[[Element], bool]:
    """Return a predicate telling whether an element's text is an outline entry of its page."""
    outline = profile.outline
    if not (outline and profile.headings.has_outline):
        return lambda el: False
    # The profile's index is never consumed, so this asks without side effects.
    return lambda el: outline.match(el.text, el.page or 0, consume=False) is not None


def _ocr_lines(
    page: pymupdf.Page,
    page_no: int,
    ocr: bool,
    language: str,
    warnings: list[str],
    *,
    own_layer: bool = True,
) -> tuple[list[Line], ReadingFrame | None]:
    """OCR the page (or read a scan's ``own_layer`` of text); warn about what failed."""
    if own_layer and (layer := text_layer(page)) is not None:  # an OCR layer, or sideways
        return extract_lines(page, layer[0]), layer[1]
    scan = "no text layer (scanned image)" if own_layer else "unreadable text layer"
    if not ocr:
        warnings.append(f"page {page_no}: {scan} and OCR is off")
        return [], None
    if tessdata_dir(language) is None:
        warnings.append(
            f"page {page_no}: {scan} and OCR is unavailable "
            f"(Tesseract data for {language!r} not found)"
        )
        return [], None
    what = "no text layer" if own_layer else "unreadable text layer"
    try:
        result = ocr_page(page, language)
    except RuntimeError as exc:
        warnings.append(f"page {page_no}: {what} and OCR failed: {exc}")
        return [], None
    # OCR text is set in a placeholder font: its flags say nothing about code.
    lines = extract_lines(page, result.textpage) if result.chars else []
    for ln in lines:
        ln.mono = False
    if not lines:
        detail = result.note or f"languages tried: {'+'.join(result.languages)}"
        warnings.append(f"page {page_no}: {what} and OCR found no text ({detail})")
    elif result.note:  # turned, unreliable, or a language without data
        warnings.append(f"page {page_no}: {'scanned' if own_layer else 'OCRed'}; {result.note}")
    return lines, result.frame


def _furniture_element(line: Line, band: str, page_no: int) -> Element:
    kind = "page_header" if band == "top" else "page_footer"
    return Element(type=kind, text=line.text, page=page_no, bbox=line.bbox, order=0)

"""One PDF page to elements: OCR gate, furniture, tables, figures, regions, order.

Two routes share every classifier:

- heuristic: MuPDF blocks as regions, reading order from gutter detection
  (``chunkweave.parsers.pdf.order``);
- model: the pymupdf-layout boxes as regions (with their classes as hints) in the
  model's reading order.

Tables come first on both routes: ruled tables (``find_tables``) on pages with
rule evidence, contents and index pages from dot leaders
(``chunkweave.parsers.pdf.tables.leaders``), unruled ones from aligned text
(``chunkweave.parsers.pdf.tables.grid``, three or more columns;
``chunkweave.parsers.pdf.tables.pairs``, key/value pairs); the model
route adds tables the model saw that neither found.

In ``auto`` mode a page goes to the (geometry-only) layout model when it is
complex (:func:`page_is_complex`) or when the heuristics are unsure of its
headings (:func:`unsure_heading_lines`); both are cheap checks on the page's
lines, made before anything is classified. :attr:`PageResult.route` and
:attr:`PageResult.reason` record the decision.

On a document with an outline the model's headings are reconciled with it in
:func:`chunkweave.parsers.pdf.blocks.classify_region` (through
``HeadingModel.resolve``): a unit the outline lists takes the outline's level
whatever the model says, and a model heading the outline lacks is kept only
with a display size or numbering (``HeadingModel.may_be_unlisted``), at the
level the outline taught for its style or of the nearest known style. The
outline-less uncertainty signal never fires when the outline is trusted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import pymupdf

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.blocks import (
    PageContext,
    TextRegion,
    classify_region,
    is_bulleted,
    split_units,
)
from chunkweave.parsers.pdf.geometry import BBox, boxes_of, inside_any, outside, overlap_share
from chunkweave.parsers.pdf.headings.filters import plausible_heading_text
from chunkweave.parsers.pdf.headings.model import (
    HeadingModel,
    demote_figure_labels,
    demote_label_runs,
)
from chunkweave.parsers.pdf.model import LayoutBox, assign_lines, layout_boxes
from chunkweave.parsers.pdf.ocr import looks_scanned, ocr_page, tessdata_dir
from chunkweave.parsers.pdf.order import column_count, reading_order
from chunkweave.parsers.pdf.profile import MAX_HEADING_CHARS, PdfProfile
from chunkweave.parsers.pdf.tables.grid import aligned_grid, find_grid_tables
from chunkweave.parsers.pdf.tables.leaders import find_leader_tables
from chunkweave.parsers.pdf.tables.pairs import find_pair_tables
from chunkweave.parsers.pdf.tables.ruled import find_ruled_tables, find_text_tables, has_table_rules
from chunkweave.parsers.pdf.tables.spaced import find_spaced_tables
from chunkweave.parsers.pdf.text import Line, extract_lines
from chunkweave.parsers.pdf.typography import (
    BODY_SIZE_TOLERANCE,
    is_body_size,
    is_display_size,
    same_row,
)

Route = Literal["heuristic", "model", "auto"]

#: Images smaller than this share of the page are icons or bullets, not figures.
MIN_FIGURE_SHARE = 0.02
#: ``auto`` escalates a page when at least this many of its lines are unsure
#: headings (:func:`unsure_heading_lines`). One is enough: a short document may
#: hold one section title per page, and the check is strict enough that ordinary
#: prose pages have none.
MIN_UNSURE_LINES = 1
#: An unsure heading is no longer than this share of the longest body line on the page: a
#: full-width bold line is emphasised prose, not a title.
UNSURE_MAX_WIDTH_SHARE = 0.7
#: ... and stands apart: the vertical gap to the text above or below it is at
#: least this many times its own height (word processors add space around titles).
UNSURE_MIN_GAP = 0.5

Decision = Literal["heuristic", "model"]


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


@dataclass
class _Placed:
    """A finished element placed among text regions for reading order."""

    element: Element

    @property
    def bbox(self) -> BBox:
        return self.element.bbox or (0.0, 0.0, 0.0, 0.0)


def page_is_complex(page: pymupdf.Page, lines: list[Line], unexplained_rules: bool) -> bool:
    """Return True when the page deserves the layout model (``auto`` mode).

    Signals: table rules that the heuristics could not turn into a table, three or
    more text columns, or text printed over an image (labels inside a figure,
    callouts), where only the model can tell figure text from body text.
    """
    if unexplained_rules:
        return True
    if column_count([TextRegion([ln]) for ln in lines]) >= 3:
        return True
    area = abs(page.rect) or 1.0
    for info in page.get_image_info():
        r = pymupdf.Rect(info["bbox"]) & page.rect
        if MIN_FIGURE_SHARE <= abs(r) / area <= 0.9:
            inside = sum(1 for ln in lines if inside_any(ln.bbox, [tuple(r)]))
            if inside >= 3:
                return True
    return False


def unsure_heading_lines(lines: list[Line], profile: PdfProfile) -> list[Line]:
    """Return the lines that look like section titles the heuristics cannot type (``auto``).

    The heuristics make a body-size line a heading only through the outline or a
    heading style learnt from the profile. Without a trusted outline, a line that
    is wholly bold at the body size or set in a display size
    (:mod:`~chunkweave.parsers.pdf.typography`) in a style the profile did not learn, alone
    in its paragraph unit, clearly shorter than the page's body lines
    (:data:`UNSURE_MAX_WIDTH_SHARE`), set apart by space above or below
    (:data:`UNSURE_MIN_GAP`), shaped like a title (no sentence or label
    punctuation at its end, not a bullet, alone on its row) would end up a paragraph: that is
    where the layout model decides better. ``lines`` are the page's body lines
    (furniture and tables removed) in MuPDF order.
    """
    headings = profile.headings
    if headings.has_outline or not lines:
        return []
    body = headings.body_size
    widest = max(ln.bbox[2] - ln.bbox[0] for ln in lines)
    out: list[Line] = []
    for i, ln in enumerate(lines):
        if not _unlearnt_title_style(ln, headings):
            continue
        if ln.bbox[2] - ln.bbox[0] > UNSURE_MAX_WIDTH_SHARE * widest:
            continue
        text = ln.text.strip()
        if len(text) > MAX_HEADING_CHARS or text.endswith((".", ",", ";", ":")):
            continue
        if is_bulleted(text) or not plausible_heading_text(text, False):
            continue
        prev = lines[i - 1] if i else None
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if not _alone(ln, prev, nxt, body):
            continue
        if any(o is not ln and same_row(ln.bbox, o.bbox) for o in lines):
            continue
        out.append(ln)
    return out


def _unlearnt_title_style(ln: Line, headings: HeadingModel) -> bool:
    """Return True for bold body-size or display-size type in no learnt heading style."""
    body = headings.body_size
    if ln.mono or ln.size < body - BODY_SIZE_TOLERANCE:
        return False
    if not (is_display_size(ln.size, body) or (ln.bold and is_body_size(ln.size, body))):
        return False
    return ln.style not in headings.style_levels and ln.style != headings.title_style


def _alone(ln: Line, prev: Line | None, nxt: Line | None, body: float) -> bool:
    """Return True when ``ln`` is a unit of its own, with space above or below it."""
    near = [o for o in (prev, nxt) if o is not None]
    if any(len(split_units([o, ln] if o is prev else [ln, o], body)) == 1 for o in near):
        return False
    gap_above = ln.bbox[1] - prev.bbox[3] if prev is not None else ln.height
    gap_below = nxt.bbox[1] - ln.bbox[3] if nxt is not None else ln.height
    return max(gap_above, gap_below) >= UNSURE_MIN_GAP * ln.height


def _route(
    page: pymupdf.Page,
    profile: PdfProfile,
    lines: list[Line],
    tables: list[Element],
    route: Route,
    unexplained_rules: bool,
) -> tuple[Decision, str]:
    """Decide whether the page goes to the layout model, and why (cheapest checks first)."""
    if route == "model":
        return "model", "accurate"
    if route == "heuristic":
        return "heuristic", "fast"
    if page_is_complex(page, lines, unexplained_rules):
        return "model", "complex"
    headings = profile.headings
    # Cheapest first: without a line in an unlearnt title style nothing can be unsure.
    if headings.has_outline or not any(_unlearnt_title_style(ln, headings) for ln in lines):
        return "heuristic", "plain"
    body = _outside_furniture(outside(lines, boxes_of(tables)), page, profile)
    if len(unsure_heading_lines(body, profile)) >= MIN_UNSURE_LINES:
        return "model", "unsure headings"
    return "heuristic", "plain"


def _outside_furniture(lines: list[Line], page: pymupdf.Page, profile: PdfProfile) -> list[Line]:
    furniture = profile.furniture.classify(
        lines, page.rect.height, profile.body_size, page=page.number, outline=profile.outline
    )
    return [ln for i, ln in enumerate(lines) if i not in furniture]


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
    ``auto`` (model only when :func:`page_is_complex` or the heuristics are unsure
    of the page's headings, :func:`unsure_heading_lines`). The result records the
    route taken and why.
    """
    result = PageResult()
    lines = extract_lines(page) if ctx.lines is None else ctx.lines
    scanned = looks_scanned(page, sum(ln.chars for ln in lines))
    if scanned:
        lines = _ocr_lines(page, ctx.page, ocr, ocr_language, result.warnings)
        if not lines:
            return result
    rules = has_table_rules(page)
    tables = [t.element for t in find_ruled_tables(page, ctx.page)] if rules else []
    tables += find_leader_tables(outside(lines, boxes_of(tables)), ctx.page)
    tables += find_spaced_tables(page, outside(lines, boxes_of(tables)), ctx.page)
    if aligned_grid(lines):
        tables += find_grid_tables(outside(lines, boxes_of(tables)), ctx.page)
    tables += find_pair_tables(outside(lines, boxes_of(tables)), ctx.page)
    result.route, result.reason = _route(page, profile, lines, tables, route, rules and not tables)
    boxes = layout_boxes(page, light=route == "auto") if result.route == "model" else None
    if boxes is None and result.route == "model":
        result.route, result.reason = "heuristic", "model unavailable"
    if boxes is not None:
        missed = [
            b.bbox
            for b in boxes
            if b.label == "table" and all(overlap_share(b.bbox, t) < 0.3 for t in boxes_of(tables))
        ]
        tables += [t.element for t in find_text_tables(page, ctx.page, missed)]
    # Table cells near the page edge are not running headers or footers.
    lines = outside(lines, boxes_of(tables))
    furniture = profile.furniture.classify(
        lines, page.rect.height, profile.body_size, page=ctx.page - 1, outline=profile.outline
    )
    body = [ln for i, ln in enumerate(lines) if i not in furniture]
    # On a scanned page the images are the text just read, not figures.
    figures = [] if scanned else _figures(page, ctx.page, boxes, bool(body))
    if boxes is not None:
        fig_boxes = [f.bbox or (0, 0, 0, 0) for f in figures]
        body = [ln for ln in body if not inside_any(ln.bbox, fig_boxes)]

    head = [_furniture_element(lines[i], band, ctx.page) for i, band in sorted(furniture.items())]
    result.elements.extend(e for e in head if e.type == "page_header")
    placed = [_Placed(t) for t in tables] + [_Placed(f) for f in figures]
    if boxes is not None:
        ordered = _model_order(body, boxes, placed)
    else:
        ordered = reading_order([*_block_regions(body), *placed])
    for item in ordered:
        if isinstance(item, _Placed):
            result.elements.append(item.element)
        else:
            result.elements.extend(classify_region(item, ctx))
    result.elements.extend(e for e in head if e.type == "page_footer")
    listed = _outline_check(profile)
    result.elements = list(demote_label_runs(demote_figure_labels(result.elements, listed), listed))
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
) -> list[Line]:
    if not ocr:
        warnings.append(f"page {page_no}: no text layer (scanned image) and OCR is off")
        return []
    if tessdata_dir(language) is None:
        warnings.append(
            f"page {page_no}: no text layer (scanned image) and OCR is unavailable "
            f"(Tesseract data for {language!r} not found)"
        )
        return []
    try:
        result = ocr_page(page, language)
    except RuntimeError as exc:
        warnings.append(f"page {page_no}: no text layer and OCR failed: {exc}")
        return []
    # OCR text is set in a placeholder font: its flags say nothing about code.
    lines = extract_lines(page, result.textpage) if result.chars else []
    for ln in lines:
        ln.mono = False
    if not lines:
        detail = result.note or f"languages tried: {'+'.join(result.languages)}"
        warnings.append(f"page {page_no}: no text layer and OCR found no text ({detail})")
    elif result.note:  # turned, unreliable, or a language without data
        warnings.append(f"page {page_no}: scanned; {result.note}")
    return lines


def _furniture_element(line: Line, band: str, page_no: int) -> Element:
    kind = "page_header" if band == "top" else "page_footer"
    return Element(type=kind, text=line.text, page=page_no, bbox=line.bbox, order=0)


def _block_regions(lines: list[Line]) -> list[TextRegion]:
    regions: list[TextRegion] = []
    for ln in lines:
        if regions and regions[-1].lines[-1].block == ln.block:
            regions[-1].lines.append(ln)
        else:
            regions.append(TextRegion([ln]))
    return regions


def _model_order(
    body: list[Line], boxes: list[LayoutBox], placed: list[_Placed]
) -> list[TextRegion | _Placed]:
    """Regions in the model's order; tables/figures at their box's slot."""
    owner = assign_lines(body, boxes)
    per_box: dict[int, list[Line]] = {}
    loose: list[Line] = []
    for ln, i in zip(body, owner, strict=True):
        if i is None:
            loose.append(ln)
        else:
            per_box.setdefault(i, []).append(ln)
    out: list[TextRegion | _Placed] = []
    pending = list(placed)
    for i, box in enumerate(boxes):
        for p in [p for p in pending if overlap_share(p.bbox, box.bbox) > 0.5]:
            out.append(p)
            pending.remove(p)
        if i in per_box and box.label not in ("table", "picture"):
            out.extend(_box_regions(per_box[i], box.label))
        elif i in per_box and box.label == "table":
            # The model saw a table we could not rebuild: keep its text.
            out.append(TextRegion(per_box[i], "text"))
    for p in pending:
        # Not matched to a model box: slot it in by its top edge.
        at = next((k for k, item in enumerate(out) if item.bbox[1] > p.bbox[1]), len(out))
        out.insert(at, p)
    # Lines outside every box are appended in heuristic order, never dropped.
    out.extend(reading_order(_block_regions(loose)))
    return out


def _box_regions(lines: list[Line], label: str) -> list[TextRegion]:
    """Return the region(s) of one layout box's lines, in reading order.

    Normally one region, top to bottom. When the box holds MuPDF blocks side by
    side (the light model draws one box over two adjacent lists), reading it top
    to bottom would interleave the columns: its blocks are read column by column.
    """
    blocks = _block_regions(sorted(lines, key=lambda ln: (ln.block, ln.bbox[1])))
    spans = sorted((r.bbox[0], r.bbox[2]) for r in blocks)
    columns: list[float] = []  # right edge of each column of overlapping x-spans
    for x0, x1 in spans:
        if columns and x0 < columns[-1]:
            columns[-1] = max(columns[-1], x1)
        else:
            columns.append(x1)
    if len(columns) < 2 or not any(_side_by_side(a, b) for a in blocks for b in blocks):
        return [TextRegion(sorted(lines, key=lambda ln: ln.bbox[1]), label)]

    def column(r: TextRegion) -> int:
        return sum(1 for edge in columns if r.bbox[0] > edge)

    for r in blocks:
        r.hint = label
    return sorted(blocks, key=lambda r: (column(r), r.bbox[1]))


def _side_by_side(a: TextRegion, b: TextRegion) -> bool:
    ax0, ay0, ax1, ay1 = a.bbox
    bx0, by0, bx1, by1 = b.bbox
    return ax1 < bx0 and min(ay1, by1) - max(ay0, by0) > 0


def _figures(
    page: pymupdf.Page, page_no: int, boxes: list[LayoutBox] | None, has_text: bool
) -> list[Element]:
    area = abs(page.rect) or 1.0
    rects = [pymupdf.Rect(i["bbox"]) & page.rect for i in page.get_image_info()]
    if boxes is not None:
        rects += [pymupdf.Rect(b.bbox) for b in boxes if b.label == "picture"]
    out: list[Element] = []
    for r in rects:
        share = abs(r) / area
        # A full-page image under a text layer is a scanned page, not a figure.
        if share < MIN_FIGURE_SHARE or (has_text and share > 0.9):
            continue
        if any(overlap_share(tuple(r), e.bbox or (0, 0, 0, 0)) > 0.5 for e in out):
            continue
        bbox = (float(r.x0), float(r.y0), float(r.x1), float(r.y1))
        out.append(Element(type="figure", text="", page=page_no, bbox=bbox, order=0))
    return out

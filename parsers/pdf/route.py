"""``auto`` mode's choice, page by page: the heuristics, or the layout model.

In ``auto`` mode a page goes to the (geometry-only) layout model when it is
complex (:func:`page_is_complex`) or when the heuristics are unsure of its
headings (:func:`unsure_heading_lines`); both are cheap checks on the page's
lines, made before anything is classified. :func:`decide_route` returns the
decision and its reason, which :class:`~chunkweave.parsers.pdf.page.PageResult`
records.

On a document with an outline the model's headings are reconciled with it in
:func:`chunkweave.parsers.pdf.blocks.classify_region` (through
``HeadingModel.resolve``): a unit the outline lists takes the outline's level
whatever the model says, and a model heading the outline lacks is kept only
with a display size or numbering (``HeadingModel.may_be_unlisted``), at the
level the outline taught for its style or of the nearest known style. The
outline-less uncertainty signal never fires when the outline is trusted.
"""

from __future__ import annotations

from typing import Literal

import pymupdf

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.blocks import TextRegion, is_bulleted, split_units
from chunkweave.parsers.pdf.figures import MAX_FIGURE_SHARE, MIN_FIGURE_SHARE
from chunkweave.parsers.pdf.geometry import boxes_of, inside_any, outside
from chunkweave.parsers.pdf.headings import HeadingModel
from chunkweave.parsers.pdf.headings.filters import plausible_heading_text
from chunkweave.parsers.pdf.order import column_count
from chunkweave.parsers.pdf.profile import MAX_HEADING_CHARS, PdfProfile
from chunkweave.parsers.pdf.text import Line
from chunkweave.parsers.pdf.typography import (
    BODY_SIZE_TOLERANCE,
    is_body_size,
    is_display_size,
    same_row,
)

#: What the page loop asks for: ``heuristic`` (``fast``), ``model`` (``accurate``), ``auto``.
Route = Literal["heuristic", "model", "auto"]
#: What a page got.
Decision = Literal["heuristic", "model"]

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
        if MIN_FIGURE_SHARE <= abs(r) / area <= MAX_FIGURE_SHARE:
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


def decide_route(
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

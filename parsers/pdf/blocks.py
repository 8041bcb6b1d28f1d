"""From ordered text regions to typed elements: paragraphs, headings, lists, code.

A region (a MuPDF block, or a layout-model box) is split into *units* where a new
paragraph visibly starts: a bullet or enumerator, a change of font style, a gap
larger than the line spacing, or a first-line indent after a sentence end. Each
unit is then typed:

- ``code``: mostly monospaced lines (indentation kept from x offsets);
- ``caption``: "Table 3:", "Figure 2.", "Fig. 4" ... set apart by punctuation or
  a font that differs from the body;
- ``list_item``: starts with a bullet or enumerator; depth from the indentation
  of its marker relative to the enclosing items;
- ``footnote``: small text at the bottom of the page that starts with a marker;
- ``title`` / ``heading``: short units accepted by the document's
  :class:`~chunkweave.parsers.pdf.headings.levels.HeadingModel`;
- ``paragraph`` otherwise, lines joined with de-hyphenation.

A layout-model class, when given, overrides the guess for the classes the model
is good at (captions, footnotes, formulas, list items, headings, furniture).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from chunkweave.parsers.elements import Element, ElementType
from chunkweave.parsers.pdf.geometry import BBox, enclose
from chunkweave.parsers.pdf.headings import (
    HeadingModel,
    OutlineIndex,
    numbering_depth,
    numbering_scheme,
)
from chunkweave.parsers.pdf.headings.filters import plausible_heading_text
from chunkweave.parsers.pdf.headings.runon import ends_broken, line_gap, runs_on
from chunkweave.parsers.pdf.profile import MAX_HEADING_CHARS, MAX_HEADING_LINES
from chunkweave.parsers.pdf.text import Line, join_lines
from chunkweave.parsers.pdf.typography import is_display_size, set_close

_BULLETS = "•◦▪▫‣∙·●○■□►▶➢✓✔❖–—-*\ufffd\uf0b7\uf0a7\uf0d8\uf076\uf0fc"
_BULLET = re.compile(rf"^[{re.escape(_BULLETS)}](?:\s+|(?=[A-Za-z(]))")
_ENUM = re.compile(
    r"^(?:\(?\d{1,3}[.)]|\(?[a-z][.)]|\(?[ivx]{1,5}[.)]|\(\d{1,3}\))\s+\S"
    # Full-width parentheses, CJK numerals ("一、", "（二）"), circled digits, Hangul ("가.").
    r"|^(?:[(（][\d一二三四五六七八九十]{1,3}[)）]|[一二三四五六七八九十]{1,3}、"
    r"|[\u2460-\u2473]|[가나다라마바사아자차카타파하][.)])\s*\S"
)
_CAPTION = re.compile(
    r"^(?i:table|figure|fig\.|listing|exhibit|chart|algorithm|scheme)"
    r"(?:\s+|(?=\d))(?:[0-9]+|[A-Z]\b|[IVX]+\b)(?:[.\-–][0-9]+)*"
)
_CAPTION_SEP = re.compile(r"^\s*(?:[:.\-–—|]|\s{2,}|$)")
_FOOTNOTE = re.compile(r"^(?:\d{1,2}|[*†‡§¶])\s?\S")
_SENTENCE_END = (".", "!", "?", ":", '"', "”", ")")
#: A first line indented by more than this (em) after a sentence end opens a paragraph.
FIRST_LINE_INDENT = 0.8


@dataclass
class TextRegion:
    """Lines that belong together (a MuPDF block or a layout box), with an optional class hint."""

    lines: list[Line]
    hint: str | None = None

    @property
    def bbox(self) -> BBox:
        """Union of the lines' boxes."""
        return enclose([ln.bbox for ln in self.lines])


@dataclass
class Placed:
    """A finished element placed among text regions for reading order."""

    element: Element

    @property
    def bbox(self) -> BBox:
        """The element's box (an empty box at the origin when it has none)."""
        return self.element.bbox or (0.0, 0.0, 0.0, 0.0)


def block_regions(lines: list[Line]) -> list[TextRegion]:
    """Return ``lines`` grouped into regions by MuPDF block (consecutive lines of one block)."""
    regions: list[TextRegion] = []
    for ln in lines:
        if regions and regions[-1].lines[-1].block == ln.block:
            regions[-1].lines.append(ln)
        else:
            regions.append(TextRegion([ln]))
    return regions


@dataclass
class PageContext:
    """Per-page facts the classifier needs.

    ``list_stack`` carries list indents from page to page; ``lines`` holds the
    page's text lines when they were already extracted (the profile sample), so
    the page is not read twice.
    """

    page: int
    page_height: float
    first_page: bool
    headings: HeadingModel
    outline: OutlineIndex | None
    list_stack: list[float] = field(default_factory=list)
    lines: list[Line] | None = None


def is_bulleted(text: str) -> bool:
    """Return True when ``text`` starts with a bullet or an enumerator ("1.", "a)", "(iv)")."""
    return bool(_BULLET.match(text) or _ENUM.match(text))


def split_units(lines: Sequence[Line], body_size: float) -> list[list[Line]]:
    """Split a region's lines into paragraph-like units (see the module docstring)."""
    units: list[list[Line]] = []
    for line in lines:
        if not units or _starts_unit(units[-1], line, body_size):
            units.append([line])
        else:
            units[-1].append(line)
    return units


def _starts_unit(unit: list[Line], b: Line, body_size: float) -> bool:
    a = unit[-1]
    if is_bulleted(b.text) and b.bbox[1] >= a.bbox[3] - 0.5 * a.height:
        return True
    if a.mono != b.mono or abs(a.size - b.size) > 0.6 or (a.bold != b.bold and b.chars > 3):
        return True
    if not set_close(b.bbox[1] - a.bbox[3], max(a.height, b.height)):
        return True
    indent = b.bbox[0] - min(ln.bbox[0] for ln in unit)
    # A first-line indent after a finished sentence opens a new paragraph.
    return indent > FIRST_LINE_INDENT * body_size and a.text.rstrip().endswith(_SENTENCE_END)


def classify_region(region: TextRegion, ctx: PageContext) -> Iterator[Element]:
    """Yield the typed elements of one region (``order`` left at 0)."""
    body = ctx.headings.body_size
    for unit in join_run_ons(split_units(region.lines, body), region.lines):
        yield _classify_unit(unit, region.hint, ctx)


def join_run_ons(units: list[list[Line]], lines: Sequence[Line]) -> list[list[Line]]:
    """Return ``units`` with each unit that continues the sentence of the one above joined to it.

    A change of font opens a unit, so a bold or italic phrase inside a paragraph
    ("Federal Register. The FAA will") is cut off from it, and would be typed on its
    own (a heading, most often). When the sentence runs from one unit into the next
    (:func:`~chunkweave.parsers.pdf.headings.runon.runs_on`, at the spacing of the
    region's ``lines``), the two are one paragraph.
    """
    if len(units) < 2:
        return units
    gap = line_gap(lines)
    width = max(ln.bbox[2] - ln.bbox[0] for ln in lines)
    out = [units[0]]
    for unit in units[1:]:
        upper, lower = out[-1][-1], unit[0]
        if runs_on(upper, lower, gap=gap, width=width, opens_item=is_bulleted(lower.text)):
            out[-1] = out[-1] + unit
        else:
            out.append(unit)
    return out


def _element(
    kind: ElementType,
    text: str,
    unit: Sequence[Line],
    ctx: PageContext,
    *,
    level: int | None = None,
) -> Element:
    return Element(
        type=kind,
        text=text,
        page=ctx.page,
        bbox=enclose([ln.bbox for ln in unit]),
        order=0,
        level=level,
    )


def _classify_unit(unit: list[Line], hint: str | None, ctx: PageContext) -> Element:
    text = join_lines([ln.text for ln in unit])
    body = ctx.headings.body_size
    mono = sum(ln.chars for ln in unit if ln.mono) * 1.5 > sum(ln.chars for ln in unit)
    if hint in ("page-header", "page-footer"):
        return _element("page_header" if hint == "page-header" else "page_footer", text, unit, ctx)
    if hint == "formula":
        return _element("formula", text, unit, ctx)
    if mono and hint not in ("section-header", "title", "caption"):
        # Code is set at the body size; a monospaced line the outline lists on its
        # page, or one at display size, is a heading when the heading model agrees.
        if _listed(text, ctx) or is_display_size(max(ln.size for ln in unit), body):
            heading = _heading(text, unit, hint, ctx)
            if heading is not None:
                return heading
        return _element("code", code_text(unit), unit, ctx)
    if hint == "caption" or (hint in (None, "text") and _is_caption(text, unit, body)):
        return _element("caption", text, unit, ctx)
    if hint == "footnote" or (hint is None and _is_footnote(text, unit, ctx)):
        return _element("footnote", text, unit, ctx)
    # A bullet opens a list item whatever the font or a layout model's guess says.
    bullet = bool(_BULLET.match(unit[0].text))
    if hint == "list-item" or bullet or (hint != "section-header" and is_bulleted(unit[0].text)):
        heading = _heading(text, unit, hint, ctx) if _numbered_title(text, unit, ctx) else None
        return heading or _list_item(unit, ctx)
    heading = _heading(text, unit, hint, ctx)
    if heading is not None:
        return heading
    if unit[0].bbox[0] <= min(ctx.list_stack, default=1e9):
        # Body text back at (or left of) the outermost marker ends the list.
        ctx.list_stack.clear()
    return _element("paragraph", text, unit, ctx)


def _listed(text: str, ctx: PageContext) -> bool:
    """Return True when the outline lists ``text`` on the unit's page (nothing consumed)."""
    return ctx.outline is not None and ctx.outline.match(text, ctx.page, consume=False) is not None


def _numbered_title(text: str, unit: list[Line], ctx: PageContext) -> bool:
    """Return True when an enumerated unit ("1. Scope", "(2) Costs") may be a section title.

    An enumerator also opens list items; a numbered unit is a title candidate
    (still subject to the heading model) when the outline lists it on its page, or
    when it is one line without sentence punctuation at its end set apart by its
    font: wholly bold, or in a heading style of the document with a numbering
    scheme the document nests its headings by (:attr:`HeadingModel.scheme_levels`).
    List items run on in the body font.
    """
    if _BULLET.match(text) or len(unit) > 1:
        return False
    if ctx.outline is not None and ctx.outline.match(text, ctx.page, consume=False) is not None:
        return True
    line = unit[0]
    model = ctx.headings
    # A regular-weight numbered line needs a heading style and a numbering scheme
    # the document uses for headings: "1. item" in a larger list font is a list.
    learnt = line.style in model.style_levels and numbering_scheme(text) in model.scheme_levels
    return (line.bold or learnt) and not text.rstrip().endswith((".", ",", ";", ":"))


def _is_caption(text: str, unit: list[Line], body: float) -> bool:
    m = _CAPTION.match(text)
    if not m:
        return False
    styled = unit[0].size < body - 0.4 or unit[0].bold or unit[0].first_bold
    return styled or bool(_CAPTION_SEP.match(text[m.end() :]))


def _is_footnote(text: str, unit: list[Line], ctx: PageContext) -> bool:
    small = unit[0].size <= 0.88 * ctx.headings.body_size
    low = unit[0].bbox[1] >= 0.75 * ctx.page_height
    return small and low and bool(_FOOTNOTE.match(text))


def _heading(text: str, unit: list[Line], hint: str | None, ctx: PageContext) -> Element | None:
    if len(unit) > MAX_HEADING_LINES or len(text) > MAX_HEADING_CHARS:
        return None
    if not any(c.isalpha() for c in text) or _runs_in_text(text, unit):
        return None
    style = unit[0].style
    model = ctx.headings
    shaped = not text.endswith((".", ",", ";")) or numbering_depth(text) is not None
    hinted = hint in ("section-header", "title")
    # Sentence punctuation rules a unit out, unless the outline lists it.
    if (
        not shaped
        and not hinted
        and (ctx.outline is None or ctx.outline.match(text, ctx.page, consume=False) is None)
    ):
        return None
    resolved = model.resolve(text, style, ctx.page, ctx.first_page, ctx.outline)
    if resolved is None and hinted:
        # The layout model's guess needs the same evidence as a font style.
        if not plausible_heading_text(text, ctx.first_page) or not model.may_be_unlisted(
            text, style
        ):
            return None
        if hint == "title" and ctx.first_page:
            resolved = ("title", 1)
        else:
            resolved = ("heading", numbering_depth(text) or model.nearest_level(style))
    if resolved is None:
        return None
    kind, level = resolved
    ctx.list_stack.clear()
    return _element(kind, text, unit, ctx, level=level)


def _runs_in_text(text: str, unit: list[Line]) -> bool:
    """Return True when the unit's text shows it is part of running text, not a heading.

    It ends in a word broken over the line end ("Docket No. FAA–"), or mixes
    fonts: units are cut at every change of font, so one that holds two was joined
    to the sentence it runs into (:func:`join_run_ons`). A lower-case start alone
    is no proof ("iPhone", "heading level 1.0"): it counts where the line above
    runs into the unit.
    """
    if ends_broken(text):
        return True
    first = unit[0]
    return any(ln.bold != first.bold or abs(ln.size - first.size) > 0.6 for ln in unit)


def _list_item(unit: list[Line], ctx: PageContext) -> Element:
    x = unit[0].bbox[0]
    stack = ctx.list_stack
    # Indentation decides depth: deeper than the last marker opens a level,
    # shallower closes levels back to the matching indent.
    while stack and x < stack[-1] - 3.0:
        stack.pop()
    if not stack or x > stack[-1] + 3.0:
        stack.append(x)
    text = join_lines([ln.text for ln in unit])
    text = _BULLET.sub("", text, count=1).strip() or text
    return _element("list_item", text, unit, ctx, level=len(stack))


def code_text(unit: Sequence[Line]) -> str:
    """Code lines joined by newlines, indentation rebuilt from the x offsets."""
    left = min(ln.bbox[0] for ln in unit)
    out = []
    for ln in unit:
        char_w = max(ln.size * 0.6, 1.0)
        # Indentation is either positioned (x offset) or typed (leading spaces).
        indent = max(int(round((ln.bbox[0] - left) / char_w)), ln.indent)
        out.append(" " * indent + ln.text.rstrip())
    return "\n".join(out)

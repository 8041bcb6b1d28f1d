"""Document-wide PDF profile: body font, heading styles, running furniture, outline.

The profile is computed from a deterministic sample of pages (all pages of short
documents, ``SAMPLE_PAGES`` evenly spaced pages of long ones) and never depends on
which page range is being parsed. Parsing pages 1-100 and 101-400 separately and
joining the parts with ``chunkweave.parsers.structure.finalize`` therefore yields the same
heading levels and furniture decisions as parsing the whole file.

The sampled pages' lines can be handed back (:func:`sample_document`) so that the
page loop does not extract those pages a second time.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Container
from dataclasses import dataclass

import pymupdf

from chunkweave.parsers.pdf.furniture import FurnitureModel
from chunkweave.parsers.pdf.headings import (
    HeadingModel,
    OutlineIndex,
    Style,
    is_bare_label,
    numbering_depth,
    numbering_scheme,
    rank_styles,
    scheme_levels,
    uses_nested_schemes,
)
from chunkweave.parsers.pdf.text import Line, extract_lines, join_lines
from chunkweave.parsers.pdf.typography import is_display_size, is_plain_body

#: Pages sampled for the profile of a long document.
SAMPLE_PAGES = 64
#: A heading style may cover at most this share of all characters.
MAX_HEADING_SHARE = 0.15
#: An outline needs this many entries to describe the document's structure.
MIN_OUTLINE_ENTRIES = 3
#: Heading candidates: at most this many lines / characters.
MAX_HEADING_LINES = 3
MAX_HEADING_CHARS = 200
#: A regular (not bold) style this much larger than the body is a heading style
#: when its units are short too (``MIN_SHAPED_SHARE``), e.g. 10 pt titles over 9 pt
#: body; below the display size
#: (:data:`~chunkweave.parsers.pdf.typography.DISPLAY_RATIO`) size alone is not enough.
RAISED_RATIO = 1.05
#: Share of a raised style's units that must be heading-shaped (short, no sentence end).
MIN_SHAPED_SHARE = 0.9
#: A raised style needs this many heading-shaped units (one is a stray, e.g. a quote).
MIN_RAISED_UNITS = 2
#: ... on this many pages: a front-matter block (affiliations) is on one page only.
MIN_RAISED_PAGES = 2
#: ... and this share of its units must be followed by a body paragraph (two or more
#: body-style lines): a heading introduces text, a row of glyph samples does not.
MIN_BODY_AFTER_SHARE = 0.5


@dataclass(frozen=True)
class PdfProfile:
    """What the parser knows about the whole document before reading any page."""

    headings: HeadingModel
    furniture: FurnitureModel
    outline: OutlineIndex
    page_count: int

    @property
    def body_size(self) -> float:
        """Dominant body font size in points."""
        return self.headings.body_size


def sample_pages(page_count: int, limit: int = SAMPLE_PAGES) -> list[int]:
    """0-based page numbers of the profile sample: all, or ``limit`` spread evenly."""
    if page_count <= limit:
        return list(range(page_count))
    step = (page_count - 1) / (limit - 1)
    return sorted({round(i * step) for i in range(limit)})


def heading_units(lines: list[Line]) -> list[list[Line]]:
    """Split lines into MuPDF-block groups, cut where the font weight changes.

    A block is the profile's cheap stand-in for a paragraph; word processors often
    put a bold title line in the same block as the paragraph under it, so a change
    of weight at the same size also starts a unit, as it does on the page. (A
    change of size does not: on cover pages one block mixes display sizes, and
    cutting there made heading styles of cover lines.)
    """
    groups: list[list[Line]] = []
    for line in lines:
        prev = groups[-1][-1] if groups else None
        if prev is not None and prev.block == line.block and not _weight_change(prev, line):
            groups[-1].append(line)
        else:
            groups.append([line])
    return groups


def _weight_change(a: Line, b: Line) -> bool:
    return a.style[0] == b.style[0] and a.bold != b.bold


def is_heading_shaped(unit: list[Line]) -> bool:
    """Return True for a short, single-style unit that does not read like a sentence."""
    if len(unit) > MAX_HEADING_LINES or len({ln.style for ln in unit}) != 1:
        return False
    text = join_lines([ln.text for ln in unit])
    if len(text) > MAX_HEADING_CHARS or not any(c.isalpha() for c in text):
        return False
    return not text.endswith((".", ",", ";")) or numbering_depth(text) is not None


def build_profile(doc: pymupdf.Document) -> PdfProfile:
    """Compute the profile of an opened document (reads the sampled pages once)."""
    return sample_document(doc)[0]


def sample_document(
    doc: pymupdf.Document, keep: Container[int] = ()
) -> tuple[PdfProfile, dict[int, list[Line]]]:
    """Compute the profile; also return the lines of the sampled pages in ``keep``.

    ``keep`` holds 0-based page numbers (the range about to be parsed, and
    ``auto``'s calibration sample); the
    returned dict maps each sampled page among them to its extracted lines, which
    are exactly what :func:`~chunkweave.parsers.pdf.text.extract_lines` returns for it.
    """
    toc = doc.get_toc(simple=True)
    # One or two bookmarks (a paper's title) say nothing about section structure.
    outline = OutlineIndex.from_toc(toc) if len(toc) >= MIN_OUTLINE_ENTRIES else OutlineIndex()
    furniture = FurnitureModel()
    sampled: list[tuple[int, list[Line], float]] = []
    sizes: Counter[float] = Counter()
    for pno in sample_pages(doc.page_count):
        page = doc.load_page(pno)
        page_lines = extract_lines(page)
        height = page.rect.height
        furniture.observe(pno, page_lines, height)
        sampled.append((pno, page_lines, height))
        for ln in page_lines:
            sizes[round(ln.size * 2) / 2] += ln.chars
    body = max(sizes, key=lambda s: sizes[s]) if sizes else 10.0
    total = sum(sizes.values()) or 1

    style_chars: Counter[Style] = Counter()
    style_units: Counter[Style] = Counter()
    body_after: Counter[Style] = Counter()
    shaped: list[tuple[int, Style, str]] = []
    outline_votes: dict[Style, Counter[int]] = {}
    for pno, lines, height in sampled:
        furn = furniture.classify(lines, height, body)
        kept = [ln for i, ln in enumerate(lines) if i not in furn]
        for ln in kept:
            style_chars[ln.style] += ln.chars
        units = heading_units(kept)
        for unit, after in itertools.zip_longest(units, units[1:]):
            style_units[unit[0].style] += 1
            if after is not None and is_plain_body(after[0].style, body) and len(after) > 1:
                body_after[unit[0].style] += 1
            if not is_heading_shaped(unit):
                continue
            style = unit[0].style
            text = join_lines([ln.text for ln in unit])
            shaped.append((pno, style, text))
            # Outline titles also appear in body-styled tables of contents and indexes.
            if outline and not is_plain_body(style, body):
                level = outline.match(text, pno + 1, consume=False)
                if level is not None:
                    outline_votes.setdefault(style, Counter())[level] += 1

    shaped_count = Counter(style for _, style, _ in shaped)
    shaped_pages = Counter(style for style, _ in {(st, pno) for pno, st, _ in shaped})
    capable = {
        style
        for style in shaped_count
        if _heading_capable(style, body)
        or (
            _raised_style(style, body, shaped_count[style], style_units[style])
            and shaped_pages[style] >= MIN_RAISED_PAGES
            and body_after[style] >= MIN_BODY_AFTER_SHARE * shaped_count[style]
        )
    }
    heads = [(pno, style, text) for pno, style, text in shaped if style in capable]
    schemes = scheme_levels(s for _, _, t in heads if (s := numbering_scheme(t)) is not None)
    nested = schemes if uses_nested_schemes(schemes) else {}
    candidates: Counter[Style] = Counter()
    first_page_only: dict[Style, bool] = {}
    depths: dict[Style, Counter[int]] = {}
    for pno, style, text in heads:
        candidates[style] += 1
        first_page_only[style] = first_page_only.get(style, True) and pno == 0
        scheme = numbering_scheme(text)
        depth = nested.get(scheme, numbering_depth(text)) if scheme else None
        if depth is not None:
            depths.setdefault(style, Counter())[depth] += 1
    # A title printed under a bare label ("Chapter 2" / "Getting started") is at
    # the label's level: vote that depth for the title's style.
    for (pno, _, label), (next_pno, style, text) in itertools.pairwise(shaped):
        if (
            next_pno == pno
            and style in capable
            and is_bare_label(label)
            and numbering_scheme(text) is None
        ):
            depths.setdefault(style, Counter())[numbering_depth(label) or 1] += 1

    heading_styles = {
        s: n for s, n in candidates.items() if style_chars[s] <= MAX_HEADING_SHARE * total
    }
    title_style = _title_style(heading_styles, first_page_only, body)
    if title_style is not None:
        heading_styles.pop(title_style, None)
    model = HeadingModel(
        body_size=body,
        style_levels=rank_styles(heading_styles, depths, body),
        outline_levels={s: max(v, key=lambda d: (v[d], -d)) for s, v in outline_votes.items()},
        title_style=title_style,
        # Trust the outline only when its titles are actually found in the text.
        has_outline=bool(outline) and sum(sum(v.values()) for v in outline_votes.values()) >= 2,
        scheme_levels=nested,
    )
    profile = PdfProfile(
        headings=model, furniture=furniture, outline=outline, page_count=doc.page_count
    )
    return profile, {pno: lines for pno, lines, _ in sampled if pno in keep}


def _heading_capable(style: Style, body: float) -> bool:
    size, bold = style
    return is_display_size(size, body) or (bold and size >= 0.9 * body)


def _raised_style(style: Style, body: float, shaped: int, units: int) -> bool:
    """Return True for a regular style a little above body size used only for short units.

    Size alone (``RAISED_RATIO``) is weak evidence; combined with units that are
    almost all heading-shaped (``MIN_SHAPED_SHARE``) and seen more than once, it
    marks a heading style set in a barely larger font.
    """
    return (
        style[0] >= RAISED_RATIO * body
        and shaped >= MIN_RAISED_UNITS
        and shaped >= MIN_SHAPED_SHARE * units
    )


def _title_style(
    styles: dict[Style, int], first_page_only: dict[Style, bool], body: float
) -> Style | None:
    """Return the largest style if it is used once, on page 1, clearly above body size."""
    if not styles:
        return None
    largest = max(styles, key=lambda s: (s[0], s[1]))
    # A title is one unit; a style used several times is a heading level.
    if largest[0] >= 1.3 * body and first_page_only.get(largest, False) and styles[largest] == 1:
        return largest
    return None

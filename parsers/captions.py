"""Table captions found by their label and their place: the lines right above or below a table.

A format parser types a line ``caption`` when its style says so; many documents set
a table's caption in a style the parser reads as something else: a running header
(the same "Table 14. ..." above the table on the page after, "—Continued"), a
heading, a plain paragraph. :func:`table_caption_blocks` finds, for every table not
captioned by an adjacent ``caption`` element, the text that starts with a table
label ("Table 14.", "Tab. 3:", "表 2") and sits right above the table (with the
lines that continue it down to the table), or failing that right below it.

Only a label opens a caption: a note under a table ("See notes at end of table.",
"NOTE: ...", "SOURCE: ...") never becomes one. With coordinates, a caption is on the
table's page, overlaps it horizontally and is no further from it than a few of its
own line heights; without (DOCX), it is the element next to the table in reading
order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chunkweave.parsers.elements import BBox, Element

#: A table label at the start of a text: the word for "table" (or its abbreviation),
#: then a number ("14", "2-1", "A", "IV"), then punctuation or the end of the text.
TABLE_LABEL = re.compile(
    r"^\s*(?i:tables?|tab\.|tabelle|tableau|tabla|tabela|tabel|tabella|taula|表|표)"
    r"\s*(?:[0-9]+|[A-Z]\b|[IVX]+\b)(?:[.\-–][0-9]+)*[a-z]?"
    r"(?:\s*[:.\-–—|]|\s{2,}|\s*$)"
)
_LOOSE_LABEL = re.compile(
    r"^\s*(?i:tables?|tab\.|tabelle|tableau|tabla|tabela|tabel|tabella|taula|表|표)"
    r"\s*(?:[0-9]+|[A-Z]\b|[IVX]+\b)"
)
#: Element types whose text may be a table's caption set in another style.
_TEXT_TYPES = frozenset({"caption", "paragraph", "heading", "page_header", "page_footer"})
#: Most elements a caption above a table spans (its label line and the lines after).
MAX_BLOCK = 3
#: Longest line, in words, that continues a caption down to its table ("through 2021-22").
MAX_CONTINUATION_WORDS = 20
#: Longest caption, in words: longer text that opens with a label is prose.
MAX_CAPTION_WORDS = 80
#: Widest gap between a caption and its table (or between a caption's lines), in
#: heights of the caption's thinnest line.
MAX_GAP_LINES = 2.5
#: Tallest line, in points, that a caption's height is taken for (body text is 8-14 pt).
MAX_LINE = 16.0


@dataclass(frozen=True, slots=True)
class CaptionBlock:
    """The elements at ``members`` (label line first) caption the table at ``table``."""

    members: tuple[int, ...]
    table: int


def is_table_label(text: str, *, loose: bool = False) -> bool:
    """Tell whether ``text`` opens with a table label ("Table 3:", "Tab. 2.1.").

    ``loose``: any number after the word will do ("Table 2-1 Special registers"),
    as in a line the parser typed a caption already.
    """
    if len(text.split()) > MAX_CAPTION_WORDS:
        return False
    return bool((_LOOSE_LABEL if loose else TABLE_LABEL).match(text))


def table_caption_blocks(items: Sequence[Element], captioned: set[int]) -> list[CaptionBlock]:
    """Return the caption blocks of the tables of ``items``, by their label's position.

    ``captioned`` holds the positions of tables that already have a linked caption
    element with a label; they get none here (a linked caption without a label,
    "(measured in hundreds)", may be the last line of a block). Each table gets at
    most one block, each element belongs to at most one; a block above a table is
    preferred to one below (a label right under one table and right over the next
    is the next one's).
    """
    pages: dict[int | None, list[int]] = {}
    for i, e in enumerate(items):
        pages.setdefault(e.page, []).append(i)
    blocks: dict[int, CaptionBlock] = {}
    taken: set[int] = set()
    tables = [i for i, e in enumerate(items) if e.type == "table" and i not in captioned]
    for index in tables:
        block = _above(items, index, pages.get(items[index].page, []), taken)
        if block is not None:
            blocks[index] = block
            taken.update(block.members)
    for index in tables:
        if index in blocks:
            continue
        block = _below(items, index, pages.get(items[index].page, []), taken)
        if block is not None:
            blocks[index] = block
            taken.update(block.members)
    return sorted(blocks.values(), key=lambda b: b.members[0])


def _above(
    items: Sequence[Element], index: int, page: list[int], taken: set[int]
) -> CaptionBlock | None:
    # Walk up from the table over the short lines stacked right above it, to the
    # nearest one that opens with a table label.
    members: list[int] = []
    lower = index
    for _ in range(MAX_BLOCK):
        upper = _next_to(items, lower, page, taken, up=True)
        if upper is None:
            return None
        el = items[upper]
        if is_table_label(el.text):
            return CaptionBlock((upper, *reversed(members)), index)
        if len(el.text.split()) > MAX_CONTINUATION_WORDS:
            return None
        members.append(upper)
        lower = upper
    return None


def _below(
    items: Sequence[Element], index: int, page: list[int], taken: set[int]
) -> CaptionBlock | None:
    under = _next_to(items, index, page, taken, up=False)
    if under is None or not is_table_label(items[under].text):
        return None
    return CaptionBlock((under,), index)


def _next_to(
    items: Sequence[Element], index: int, page: list[int], taken: set[int], *, up: bool
) -> int | None:
    """Return the text element right above (``up``) or below the element at ``index``.

    With coordinates: the nearest on its page that overlaps it horizontally,
    within :data:`MAX_GAP_LINES` lines. Without: its neighbour in reading order.
    Only an unlinked text element counts; ``None`` when the nearest is anything else.
    """
    el = items[index]
    if el.bbox is None:
        near = index - 1 if up else index + 1
        if not 0 <= near < len(items) or items[near].bbox is not None:
            return None
        found: int | None = near
    else:
        found = None
        best = float("inf")
        for j in page:
            other = items[j]
            if j == index or other.bbox is None or not _overlap(other.bbox, el.bbox):
                continue
            gap = el.bbox[1] - other.bbox[3] if up else other.bbox[1] - el.bbox[3]
            if gap < -0.5 * _line(other) or gap >= best:
                continue
            if gap > MAX_GAP_LINES * _line(other if other.type != "table" else el):
                continue
            found, best = j, gap
    if found is None:
        return None
    near_el = items[found]
    if near_el.type not in _TEXT_TYPES or near_el.ref is not None or found in taken:
        return None
    return found


def _overlap(a: BBox, b: BBox) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0])


def _line(el: Element) -> float:
    # An element's height is one line's or several's: a line is at most MAX_LINE tall.
    assert el.bbox is not None
    return max(min(el.bbox[3] - el.bbox[1], MAX_LINE), 1.0)

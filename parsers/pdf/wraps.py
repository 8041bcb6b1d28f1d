"""One item that the page's boxes cut in two, put back together on its page.

A PDF producer (or the layout model) may set an item's parts in separate blocks:

- a *hanging marker*: "[0044]", "3.", "(b)" in a box of its own at the margin, with
  the item's text in the next box on the same line, to its right;
- a *wrapped heading*: a title whose second line is a block of its own (centred under
  the first, say), which reads as a second heading or a stray paragraph.

Both are joined by geometry. A wrapped heading is joined on the evidence of the
document's outline where it has one (the joined text must be (the start of) an
outline entry of its page that the first line alone is not); without one, only a
line of the same heading level set tight below it, which does not start a numbered
heading or a list item of its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.blocks import is_bulleted
from chunkweave.parsers.pdf.geometry import enclose
from chunkweave.parsers.pdf.headings import is_bare_label, numbering_depth
from chunkweave.parsers.pdf.text import join_lines

#: A marker alone: bracketed or punctuated numbers and letters, or a bullet.
_MARKER = re.compile(
    r"^(?:[\[(（]\d{1,5}[\])）]|\d{1,3}[.)]|[\[(]?[a-zA-Z][.)\]]|[\[(]?[ivxIVX]{1,5}[.)\]]"
    r"|[•◦▪‣∙●○■□►▶➢❖–\-*\uf0b7\uf0a7])$"
)
_BULLET_ONLY = re.compile(r"^[•◦▪‣∙●○■□►▶➢❖–\-*\uf0b7\uf0a7]$")
_TEXT_TYPES = ("paragraph", "list_item")
#: The text may start this many marker heights to the right of the marker.
MARKER_REACH = 8.0
#: A heading's next line starts within this many line heights of its last one ...
WRAP_GAP = 0.8
#: ... and, where no outline says the two are one title, within this many.
TIGHT_GAP = 0.5
_SENTENCE_END = (".", "!", "?")


def join_hanging_markers(elements: list[Element]) -> list[Element]:
    """Join each lone marker to the text that starts on its line, to its right.

    The marker may come just before its text or, where the page lists it after the
    line it belongs to, just after it.
    """
    out: list[Element] = []
    for el in elements:
        prev = out[-1] if out else None
        if prev is not None and _hangs(prev, el):
            out[-1] = _with_marker(prev, el)
        elif prev is not None and _hangs(el, prev):
            out[-1] = _with_marker(el, prev)
        else:
            out.append(el)
    return out


def _hangs(marker: Element, el: Element) -> bool:
    if marker.type not in _TEXT_TYPES or el.type not in _TEXT_TYPES:
        return False
    if marker.page != el.page or marker.bbox is None or el.bbox is None:
        return False
    if not _MARKER.match(marker.text.strip()):
        return False
    mx0, my0, mx1, my1 = marker.bbox
    ex0, ey0, _, _ = el.bbox
    height = max(my1 - my0, 1.0)
    # The text's first line is the marker's line: its top within the marker's box.
    same_line = my0 - 0.5 * height <= ey0 <= my0 + 0.5 * height
    return same_line and mx1 - 1.0 <= ex0 <= mx1 + MARKER_REACH * height


def _with_marker(marker: Element, el: Element) -> Element:
    text = el.text if _BULLET_ONLY.match(marker.text.strip()) else f"{marker.text} {el.text}"
    assert marker.bbox is not None and el.bbox is not None
    return el.model_copy(
        update={
            "type": "list_item",
            "text": text,
            "bbox": enclose([marker.bbox, el.bbox]),
            "level": marker.level or el.level or 1,
        }
    )


def join_wrapped_headings(
    elements: list[Element], continues: Callable[[str, str, int], bool] | None
) -> list[Element]:
    """Join a heading with the line below it when the two are one wrapped title.

    ``continues(first, joined, page)`` is the outline's say, where the document has
    a trusted outline: True when ``joined`` is (the start of) an entry of ``page``
    that ``first`` alone is not; the line below may then be of any text type.
    Without an outline (``None``) the layout decides alone, and more strictly: the
    line below must be a heading of the same level and line height, set closer than
    :data:`TIGHT_GAP` line heights, under a first line that is no bare label
    ("Chapter 2") and not itself starting a numbered heading or list item.
    """
    out: list[Element] = []
    for el in elements:
        prev = out[-1] if out else None
        if prev is not None and _wraps(prev, el, continues):
            assert prev.bbox is not None and el.bbox is not None
            out[-1] = prev.model_copy(
                update={
                    "text": join_lines([prev.text, el.text]),
                    "bbox": enclose([prev.bbox, el.bbox]),
                }
            )
        else:
            out.append(el)
    return out


def _wraps(head: Element, el: Element, continues: Callable[[str, str, int], bool] | None) -> bool:
    if head.type not in ("heading", "title") or el.type not in ("heading", "paragraph"):
        return False
    if head.page != el.page or head.page is None or head.bbox is None or el.bbox is None:
        return False
    if head.text.rstrip().endswith(_SENTENCE_END):
        return False
    hx0, hy0, hx1, hy1 = head.bbox
    ex0, ey0, ex1, ey1 = el.bbox
    line = max(min(ey1 - ey0, hy1 - hy0), 1.0)
    gap = ey0 - hy1
    under = ex0 >= hx0 - 2.0 and ex1 <= hx1 + 2.0
    if not (under and -0.2 * line <= gap <= WRAP_GAP * line):
        return False
    if continues is not None:
        return continues(head.text, join_lines([head.text, el.text]), head.page)
    # A line of one title keeps its size: the next line is as tall as the first (or the
    # heading is lines of that height already), and "Chapter 2" over a title is a label.
    ratio = (hy1 - hy0) / max(ey1 - ey0, 1.0)
    same_size = 0.85 <= ratio <= 1.18 or ratio >= 1.8
    return (
        el.type == head.type
        and el.level == head.level
        and gap <= TIGHT_GAP * line
        and same_size
        and not is_bare_label(head.text)
        and numbering_depth(el.text) is None
        and not is_bulleted(el.text)
    )

"""Navigation furniture: table-of-contents and back-of-book index entries.

A contents page or an index is a list of *entries*: a short label, a leader (a run
of dots) and a page reference ("3.1 Arrays . . . . . . 20", "Factors. . . . 17, 57").
Such text names every topic of the document while saying nothing about any of
them, so its embedding sits close to almost every question and pushes the real
answers down the ranking. Like running headers, it is left out of chunks unless
``include_furniture`` is set.

The rule is lexical and per element, so it holds for any parser: an element is
navigation when its text holds at least one leader-plus-page-reference entry and,
with the entries' leaders and page numbers removed, averages at most
:data:`MAX_LABEL_CHARS` characters of label per entry and ends with an entry.
Prose that happens to contain a dotted run has far more words per leader and does
not end on a page number. A run of one- or two-character lines (an index's group letters "A",
"B", ...) next to a navigation element is navigation too.

Parsers that rebuild a contents page as a table (label | page) give the same entries
in cells, so a table is navigation too when it has no header row, two columns, at
least :data:`MIN_NAV_ROWS` rows, a page reference in every second cell, and its
entries run in document order (page references never decrease) or alphabetically
(an index) in at least :data:`MIN_NAV_ORDERED` of adjacent pairs. A data table of
numbers has a header row, or values that go up and down.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chunkweave.parsers.elements import FURNITURE_TYPES, Element

#: Longest average label (characters, leaders and page numbers removed) per entry.
MAX_LABEL_CHARS = 120
#: Longest text that counts as an index group letter between navigation entries.
MAX_GROUP_LETTER_CHARS = 2
#: Fewest rows of a contents/index table.
MIN_NAV_ROWS = 3
#: Share of adjacent entries that must be in page order or alphabetical order.
MIN_NAV_ORDERED = 0.9

# A leader is four or more dots, optionally spaced (". . . ." or "...."), two or
# more dots each followed by a space (". . ", typeset leaders, never prose), or
# two or more ellipsis characters; the page reference is arabic or roman, possibly a list
# or range ("17, 57", "12-14").
_PAGE = r"(?:\d{1,4}|[ivxlcdm]{1,7})"
_ENTRY_END = re.compile(
    rf"(?:(?:\.\s?){{4,}}|\.(?:\s\.)+|(?:…\s?){{2,}})\s*{_PAGE}(?:\s*[,–-]\s*{_PAGE})*(?=\s|$)",
    re.IGNORECASE,
)
# Cheap necessary conditions checked first (most elements are prose): an entry run
# ends with a page-reference character and holds a leader (two dots at most one
# whitespace apart, or an ellipsis).
_PAGE_END_CHAR = re.compile(r"[\divxlcdm]", re.IGNORECASE)
# A whole cell that is a page reference: "17", "xii", "17, 57", "12-14".
_PAGE_CELL = re.compile(rf"{_PAGE}(?:\s*[,–-]\s*{_PAGE})*", re.IGNORECASE)
_LEADER_HINT = re.compile(r"\.\s?\.|…")


def is_navigation_text(text: str) -> bool:
    """Return True when ``text`` is a run of contents/index entries (see module doc)."""
    stripped = text.strip()
    if not stripped or _PAGE_END_CHAR.match(stripped[-1]) is None:
        return False
    if _LEADER_HINT.search(stripped) is None:
        return False
    matches = list(_ENTRY_END.finditer(stripped))
    if not matches or matches[-1].end() != len(stripped):
        return False
    label_chars = len(stripped) - sum(m.end() - m.start() for m in matches)
    return label_chars / len(matches) <= MAX_LABEL_CHARS


def is_navigation_table(rows: Sequence[Sequence[str]], header_rows: int) -> bool:
    """Return True when a table's ``rows`` are contents/index entries (see module doc)."""
    if header_rows or len(rows) < MIN_NAV_ROWS or any(len(r) != 2 for r in rows):
        return False
    if not all(_PAGE_CELL.fullmatch(r[1].strip()) for r in rows):
        return False
    first = [_first_page(r[1]) for r in rows]
    labels = [r[0].strip().casefold() for r in rows]
    pairs = len(rows) - 1
    in_page_order = sum(a <= b for a, b in zip(first, first[1:], strict=False))
    alphabetical = sum(a <= b for a, b in zip(labels, labels[1:], strict=False))
    return max(in_page_order, alphabetical) >= MIN_NAV_ORDERED * pairs


def _first_page(ref: str) -> int:
    # Roman numbers (front matter) sort before every arabic page.
    head = re.split(r"[,–-]", ref.strip(), maxsplit=1)[0].strip()
    return int(head) if head.isdigit() else -1


def navigation_orders(elements: Sequence[Element]) -> set[int]:
    """Return the ``order`` of every navigation element among ``elements``.

    Prose runs of entries and contents/index tables are navigation; headings and
    furniture never are: a heading such as "Table of Contents" stays, so the
    contents section keeps its (now empty) place.
    """
    # One pass over the candidates (non-furniture elements with text): this runs
    # on every element of every document, so each is looked at once.
    orders: list[int] = []
    flags: list[bool] = []
    short: list[bool] = []
    for e in elements:
        kind = e.type
        if kind in FURNITURE_TYPES:
            continue
        text = e.text.strip()
        if not text:
            continue
        orders.append(e.order)
        if kind == "paragraph" or kind == "list_item":
            flags.append(is_navigation_text(text))
        elif kind == "table":
            flags.append(e.rows is not None and is_navigation_table(e.rows, e.header_rows))
        else:
            flags.append(False)
        short.append(kind == "paragraph" and len(text) <= MAX_GROUP_LETTER_CHARS)
    if not any(flags):
        return set()
    # Group letters come in runs ("A", "I" when two index columns start side by
    # side): spread the flag forwards, then backwards, through runs of short lines.
    for i in range(1, len(flags)):
        flags[i] = flags[i] or (short[i] and flags[i - 1])
    for i in range(len(flags) - 2, -1, -1):
        flags[i] = flags[i] or (short[i] and flags[i + 1])
    return {order for order, flag in zip(orders, flags, strict=True) if flag}

"""Heading levels for PDFs: outline (bookmarks), numbering patterns, font styles.

Levels come from a document-wide :class:`HeadingModel` (built by
``parsers.pdf_profile``) so that a page range parsed on its own gets the same
levels as the whole document. Evidence, strongest first:

1. The PDF outline: a short text unit whose normalised text matches an outline
   entry of its page (or the page before, as bookmarks often point just above a
   page break) takes that entry's level. Each entry matches once per parse.
2. Numbering: "2.3.1 Title" is level 3, "A.1 Title" level 2, "Chapter 4" level 1.
3. Font style: heading styles (size, bold) ranked from largest to smallest; a
   style whose numbered headings mostly have depth d gets level d, so un-numbered
   headings ("Abstract", "References") line up with their numbered siblings.
   With an outline, styles learnt from matched entries give levels to headings
   the outline leaves out; other styles are not trusted.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

Style = tuple[float, bool]
HeadingKind = Literal["title", "heading"]

MAX_LEVEL = 9

_DOTTED = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,6})\.?\s+\S")
_LETTERED = re.compile(r"^([A-Z](?:\.\d{1,3}){1,5})\.?\s+\S")
_NAMED = re.compile(r"^(chapter|part|appendix)\s+([0-9]{1,3}|[ivxlc]{1,6}|[a-z])\b", re.IGNORECASE)
_SECTION = re.compile(r"^section\s+(\d{1,3}(?:\.\d{1,3}){0,5})\b", re.IGNORECASE)
_STRIP_NUMBER = re.compile(
    r"^(?:(?:chapter|appendix|part|section)\s+)?(?:\d{1,3}|[A-Z])(?:[.\-]\d{1,3})*[.:]?\s+",
    re.IGNORECASE,
)
_NON_ALNUM = re.compile(r"[\W_]+")


def numbering_depth(text: str) -> int | None:
    """Depth implied by a heading's numbering, or None when it is not numbered.

    "2" and "Chapter 4" -> 1, "2.3" and "A.1" -> 2, "2.3.1" -> 3. A number must be
    followed by text ("2.3 Results"), so bare numbers and dates are not headings.
    """
    text = text.strip()
    if m := _NAMED.match(text):
        return 1
    if m := _SECTION.match(text):
        return m.group(1).count(".") + 1
    if m := _DOTTED.match(text):
        return m.group(1).count(".") + 1
    if m := _LETTERED.match(text):
        return m.group(1).count(".") + 1
    return None


def match_key(text: str) -> str:
    """Normalised form for matching outline titles: no numbering, alphanumerics only."""
    text = unicodedata.normalize("NFKC", text).strip()
    text = _STRIP_NUMBER.sub("", text, count=1)
    return _NON_ALNUM.sub("", text.lower())


def keys_match(a: str, b: str) -> bool:
    """Return True when two match keys name the same heading (equal, or one a long prefix)."""
    if not a or not b:
        return False
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 12 and long_.startswith(short) and len(short) >= 0.6 * len(long_)


@dataclass
class OutlineIndex:
    """Outline entries by 1-based page, consumed as they are matched."""

    by_page: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    _used: set[tuple[int, int]] = field(default_factory=set)

    @classmethod
    def from_toc(cls, toc: Iterable[list]) -> OutlineIndex:
        """Build from ``doc.get_toc()`` rows ``[level, title, page, ...]``."""
        index = cls()
        for row in toc:
            level, title, page = int(row[0]), str(row[1]), int(row[2])
            key = match_key(title)
            if key and page >= 1:
                index.by_page.setdefault(page, []).append((max(1, level), key))
        return index

    def __bool__(self) -> bool:
        return bool(self.by_page)

    def match(self, text: str, page: int, consume: bool = True) -> int | None:
        """Level of the outline entry matching ``text`` on ``page`` (or the page before)."""
        key = match_key(text)
        if not key:
            return None
        for p in (page, page - 1):
            for i, (level, entry) in enumerate(self.by_page.get(p, ())):
                if (p, i) in self._used or not keys_match(key, entry):
                    continue
                if consume:
                    self._used.add((p, i))
                return level
        return None

    def fresh(self) -> OutlineIndex:
        """Return a copy with no entries consumed (one per parse)."""
        return OutlineIndex(by_page=self.by_page)


@dataclass(frozen=True)
class HeadingModel:
    """Document-wide heading knowledge; see the module docstring for the rules.

    - ``body_size``: the dominant body font size.
    - ``style_levels``: level of each heading-capable style (rank or numbering).
    - ``outline_levels``: levels learnt for styles from matched outline entries.
    - ``title_style``: style of the document title (first page only), if any.
    """

    body_size: float
    style_levels: Mapping[Style, int]
    outline_levels: Mapping[Style, int]
    title_style: Style | None
    has_outline: bool

    def is_heading_style(self, style: Style) -> bool:
        """Return True when text in ``style`` may be a heading without outline evidence."""
        if self.has_outline:
            return style in self.outline_levels or style == self.title_style
        return style in self.style_levels or style == self.title_style

    def nearest_level(self, style: Style) -> int:
        """Level of the known heading style closest in size (1 when none is known)."""
        known = {**self.style_levels, **self.outline_levels}
        if not known:
            return 1
        best = min(known, key=lambda s: (abs(s[0] - style[0]), s[1] != style[1]))
        return known[best]

    def resolve(
        self, text: str, style: Style, page: int, first_page: bool, outline: OutlineIndex | None
    ) -> tuple[HeadingKind, int] | None:
        """Decide whether a short text unit is a title/heading, and its level.

        ``page`` is 1-based; ``first_page`` is true on the document's first page.
        Returns None for ordinary text.
        """
        plain = abs(style[0] - self.body_size) <= 0.5 and not style[1]
        # Body-styled lines that repeat outline titles are tables of contents.
        if outline and not plain:
            level = outline.match(text, page)
            if level is not None:
                return "heading", min(level, MAX_LEVEL)
        if first_page and style == self.title_style:
            return "title", 1
        if self.has_outline:
            learnt = self.outline_levels.get(style)
            return ("heading", learnt) if learnt is not None else None
        if style not in self.style_levels:
            return None
        depth = numbering_depth(text)
        level = depth if depth is not None else self.style_levels[style]
        return "heading", min(level, MAX_LEVEL)


def rank_styles(
    candidates: Mapping[Style, int], numbered_depths: Mapping[Style, Mapping[int, int]]
) -> dict[Style, int]:
    """Assign a level to each heading style.

    Styles are ranked largest first (bold before regular at equal size). A style
    whose numbered headings mostly share a depth takes that depth; any other style
    sits one level below the deepest larger style.
    """
    ranked = sorted(candidates, key=lambda s: (-s[0], not s[1]))
    levels: dict[Style, int] = {}
    deepest = 0
    for style in ranked:
        votes = numbered_depths.get(style)
        # Without numbering: one below the deepest larger style (dense ranking).
        level = max(votes, key=lambda d: (votes[d], -d)) if votes else deepest + 1
        deepest = max(deepest, level)
        levels[style] = min(level, MAX_LEVEL)
    return levels

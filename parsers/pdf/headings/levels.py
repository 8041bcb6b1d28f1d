"""The document-wide heading model: is a short text unit a title or heading, at what level.

:class:`HeadingModel` is built by :mod:`chunkweave.parsers.pdf.profile` and weighs
the evidence the package docstring (:mod:`chunkweave.parsers.pdf.headings`) lists:
outline, numbering, font style, text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from chunkweave.parsers.pdf.headings.filters import is_toc_entry, plausible_heading_text
from chunkweave.parsers.pdf.headings.numbering import MAX_LEVEL, numbering_depth, numbering_scheme
from chunkweave.parsers.pdf.headings.outline import OutlineIndex
from chunkweave.parsers.pdf.typography import is_display_size, is_plain_body

Style = tuple[float, bool]
HeadingKind = Literal["title", "heading"]


@dataclass(frozen=True)
class HeadingModel:
    """Document-wide heading knowledge; see the module docstring for the rules.

    - ``body_size``: the dominant body font size.
    - ``style_levels``: level of each heading-capable style (rank or numbering).
    - ``outline_levels``: levels learnt for styles from matched outline entries.
    - ``title_style``: style of the document title (first page only), if any.
    - ``scheme_levels``: level of each numbering scheme (:func:`scheme_levels`), set
      when schemes other than dotted decimals nest in the document.
    """

    def numbered_level(self, text: str) -> int | None:
        """Level implied by the numbering of ``text`` (None when it is not numbered)."""
        scheme = numbering_scheme(text)
        if scheme is None:
            return None
        if scheme in self.scheme_levels:
            return self.scheme_levels[scheme]
        return numbering_depth(text)

    body_size: float
    style_levels: Mapping[Style, int]
    outline_levels: Mapping[Style, int]
    title_style: Style | None
    has_outline: bool
    scheme_levels: Mapping[str, int] = field(default_factory=dict)

    def may_be_unlisted(self, text: str, style: Style) -> bool:
        """Return True when a heading may be missing from the outline (always without one).

        The outline lists the sections; a unit it leaves out needs a display size
        or numbering, since body-size bold also marks labels, table headers and
        message codes.
        """
        if not self.has_outline:
            return True
        return is_display_size(style[0], self.body_size) or numbering_depth(text) is not None

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
        plain = is_plain_body(style, self.body_size)
        # Body-styled lines that repeat outline titles are mostly tables of contents
        # (whose lines carry page numbers or leaders), so a plain unit must repeat
        # the title exactly, on the entry's own page.
        if outline and not (plain and is_toc_entry(text)):
            level = outline.match(text, page, exact=plain)
            if level is not None:
                return "heading", min(level, MAX_LEVEL)
        if first_page and style == self.title_style:
            return "title", 1
        if not plausible_heading_text(text, first_page):
            return None
        if self.has_outline:
            learnt = self.outline_levels.get(style)
            if learnt is None or not self.may_be_unlisted(text, style):
                return None
            return "heading", learnt
        if style not in self.style_levels:
            return None
        depth = self.numbered_level(text)
        level = depth if depth is not None else self.style_levels[style]
        return "heading", min(level, MAX_LEVEL)

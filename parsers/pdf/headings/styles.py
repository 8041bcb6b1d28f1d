"""Levels of heading styles: font styles ranked, numbering trusted where it agrees."""

from __future__ import annotations

from collections.abc import Mapping

from chunkweave.parsers.pdf.headings.model import Style
from chunkweave.parsers.pdf.headings.numbering import MAX_LEVEL
from chunkweave.parsers.pdf.typography import is_body_size

#: Share of a style's heading units that must be numbered for the numbering to set its level.
MIN_NUMBERED_SHARE = 0.25


def rank_styles(
    candidates: Mapping[Style, int],
    numbered_depths: Mapping[Style, Mapping[int, int]],
    body_size: float | None = None,
) -> dict[Style, int]:
    """Assign a level to each heading style.

    ``candidates`` counts the heading-shaped units of each style. Styles are
    ranked largest first (bold before regular at equal size). A style whose
    numbered headings mostly share a depth takes that depth, when at least
    :data:`MIN_NUMBERED_SHARE` of its units are numbered (a few numbered steps in a
    style of un-numbered section titles say nothing about its level). A regular style used
    by a single unit at the size of a bold heading style takes that style's level:
    one unit (a subtitle, a tagline) is not a level of the hierarchy, and ranking
    it as one would push every smaller heading a level too deep. Any other style
    sits one level below the deepest larger style. So does a body-size style
    (given ``body_size``) below larger heading styles whatever its numbering: a
    bold "1. Step" in body text is a run-in label or a list step, not a chapter.
    """
    ranked = sorted(candidates, key=lambda s: (-s[0], not s[1]))
    levels: dict[Style, int] = {}
    deepest = 0
    for style in ranked:
        votes = numbered_depths.get(style)
        bold_twin = (style[0], True)
        body_sized = body_size is not None and is_body_size(style[0], body_size)
        numbered = sum(votes.values()) if votes else 0
        trusted = numbered >= MIN_NUMBERED_SHARE * candidates[style]
        if votes and trusted and not (body_sized and levels):
            level = max(votes, key=lambda d: (votes[d], -d))
        elif not style[1] and candidates[style] == 1 and bold_twin in levels:
            level = levels[bold_twin]
        else:
            # Without numbering: one below the deepest larger style (dense ranking).
            level = deepest + 1
        deepest = max(deepest, level)
        levels[style] = min(level, MAX_LEVEL)
    return levels

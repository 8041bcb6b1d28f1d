"""Levels of heading styles: one hierarchy fitted over the whole document.

The styles (size, bold) of every heading-shaped unit of the profile's sample are
clustered into one hierarchy (:func:`rank_styles`). Numbering is the strongest
evidence of a level: a style whose headings are numbered often enough takes the
depth most of them have (:func:`numbering_anchors`), and the styles whose headings
are mostly numbered (:data:`MIN_ANCHOR_SHARE`) are *anchors* of the fit; every
other style is placed against them by size:

- a style of an anchor's size (bold or regular) is at the anchor's level: at one
  size, weight alone rarely makes a level (a bold numbered "2.1 Method" and a
  regular "Results" beside it are siblings);
- a style larger than an anchor is never placed below it: it sits one below the
  deepest larger style, but not deeper than the next smaller anchor (when that
  anchor is deeper than every larger one: otherwise it is no evidence of order);
- styles below every anchor (or in a document without anchors) are ranked densely,
  largest first, bold before regular at equal size.
"""

from __future__ import annotations

from collections.abc import Mapping

from chunkweave.parsers.pdf.headings.levels import Style
from chunkweave.parsers.pdf.headings.numbering import MAX_LEVEL
from chunkweave.parsers.pdf.typography import is_body_size

#: Share of a style's heading units that must be numbered for the numbering to set its level.
MIN_NUMBERED_SHARE = 0.25
#: Share of a style's heading units that must be numbered for it to place *other* styles
#: (an anchor of the fit): a style of mostly un-numbered lines with a few numbered list
#: steps sets its own level, not its neighbours'.
MIN_ANCHOR_SHARE = 0.5


def numbering_anchors(
    candidates: Mapping[Style, int],
    numbered_depths: Mapping[Style, Mapping[int, int]],
    body_size: float | None = None,
) -> dict[Style, int]:
    """Return the styles whose numbering fixes their own level, with that level.

    A style qualifies when at least :data:`MIN_NUMBERED_SHARE` of its
    ``candidates`` units are numbered; its level is the depth most of them have
    (the shallower on a tie). A body-size style is an anchor only when no larger
    style is a heading style: a bold "1. Step" in body text is a run-in label or a
    list step, not a chapter.
    """
    anchors: dict[Style, int] = {}
    largest = max((s[0] for s in candidates), default=0.0)
    for style, units in candidates.items():
        votes = numbered_depths.get(style)
        if not votes or sum(votes.values()) < MIN_NUMBERED_SHARE * units:
            continue
        body_sized = body_size is not None and is_body_size(style[0], body_size)
        if body_sized and style[0] < largest:
            continue
        anchors[style] = min(max(votes, key=lambda d: (votes[d], -d)), MAX_LEVEL)
    return anchors


def rank_styles(
    candidates: Mapping[Style, int],
    numbered_depths: Mapping[Style, Mapping[int, int]],
    body_size: float | None = None,
) -> dict[Style, int]:
    """Fit one level to each heading style (see the module docstring).

    ``candidates`` counts the heading-shaped units of each style,
    ``numbered_depths`` the numbering depths seen per style. Returns a level
    (1 = top, at most ``MAX_LEVEL``) for every style of ``candidates``. A regular
    style used by a single unit at the size of a bold heading style takes that
    style's level: one unit (a subtitle, a tagline) is not a level of the
    hierarchy, and ranking it as one would push every smaller heading a level too
    deep.
    """
    numbered = numbering_anchors(candidates, numbered_depths, body_size)
    anchors = {
        style: level
        for style, level in numbered.items()
        if sum(numbered_depths[style].values()) >= MIN_ANCHOR_SHARE * candidates[style]
    }
    ranked = sorted(candidates, key=lambda s: (-s[0], not s[1]))
    levels: dict[Style, int] = {}
    deepest = 0
    for style in ranked:
        same_size = [a for a in anchors if a[0] == style[0]]
        smaller = [a for a in anchors if a[0] < style[0]]
        above = max((anchors[a] for a in anchors if a[0] > style[0]), default=0)
        bold_twin = (style[0], True)
        if style in numbered:
            level = numbered[style]
        elif same_size:
            level = anchors[same_size[0]]
        elif not style[1] and candidates[style] == 1 and bold_twin in levels:
            level = levels[bold_twin]
        else:
            level = deepest + 1
            cap = anchors[max(smaller, key=lambda a: (a[0], a[1]))] if smaller else 0
            # Never below the anchor under it: the numbering says where that is. An
            # anchor no deeper than one above it says nothing here (numbered lines of
            # a table of contents in a small font, "Chapter 2 ... 19").
            if cap > above:
                level = min(level, cap)
        deepest = max(deepest, level)
        levels[style] = min(level, MAX_LEVEL)
    return levels

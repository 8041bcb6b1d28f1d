"""Evidence that a line continues running text: such a line never starts or ends a heading.

A bold phrase inside a paragraph ("*Federal Register*. The FAA will", a run-in
"Note 1 to paragraph (g): Guidance for") is cut off as a unit of its own by its
change of font, and then looks like a short heading. Its neighbours give it away:
the sentence runs through it. :func:`runs_on` tells whether the line below another
continues its sentence:

- the upper line breaks a word ("FAA–", "infor-"), or
- the upper line ends mid-sentence (no closing punctuation) and the lower one
  starts in lower case, or
- the upper line ends mid-sentence and is a full line of regular-weight text in the
  lower line's size (a paragraph's line runs to the column's edge; a paragraph's
  last line ends a sentence),

and the lower line sits right under it, at the spacing of the lines around them
(``gap``). A bullet or an enumerator opens a new item whatever precedes it.
:func:`ends_broken` is the text-only part: a unit whose last word is broken over
the line end continues below, whichever block the next line is in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.text import Line

#: Closing punctuation: a line ending in it may end its paragraph.
_CLOSING = (".", "!", "?", ":", ";", "”", '"', "’", ")", "]")
#: A word broken at the line end: a letter or digit, then a hyphen or dash, no space.
_BROKEN = re.compile(r"[^\W_][-‐‑–]$")
#: A line this share of the widest line of its text or more is a full line.
FULL_LINE = 0.85
#: Extra gap (line heights) over the lines' own spacing still read as that spacing.
GAP_SLACK = 0.25
#: Elements set at most this many line heights apart are lines of one paragraph.
TIGHT_GAP = 0.35


def ends_broken(text: str) -> bool:
    """Return True when ``text`` ends in a word broken over the line end ("FAA–", "infor-")."""
    return bool(_BROKEN.search(text.rstrip()))


def _starts_lower(text: str) -> bool:
    """Return True when the first letter or digit of ``text`` is a lower-case letter."""
    first = next((c for c in text if c.isalnum()), "")
    return first.islower()


def runs_on(
    upper: Line, lower: Line, *, gap: float, width: float, opens_item: bool = False
) -> bool:
    """Return True when ``lower`` continues the sentence of ``upper`` (see the module docstring).

    ``gap`` is the vertical gap between lines of the text around them, ``width``
    the width of its widest line; ``opens_item`` says ``lower`` starts with a bullet
    or an enumerator.
    """
    if opens_item or upper.mono != lower.mono:
        return False
    height = max(upper.height, lower.height)
    below = lower.bbox[1] - upper.bbox[3]
    if below < -0.5 * height or below > gap + GAP_SLACK * height:
        return False
    # The same column: the lower line starts within two ems of the upper one.
    if abs(lower.bbox[0] - upper.bbox[0]) > 2 * max(upper.size, lower.size):
        return False
    text = upper.text.rstrip()
    if ends_broken(text):
        return True
    if text.endswith(_CLOSING):
        return False
    if _starts_lower(lower.text):
        return True
    # Both in one size: a display-size line over body text is a title, not a paragraph.
    full = upper.bbox[2] - upper.bbox[0] >= FULL_LINE * width
    return full and not upper.bold and abs(upper.size - lower.size) <= 0.5


def line_gap(lines: Sequence[Line]) -> float:
    """Return the usual vertical gap between consecutive lines (the median; 0 for one line)."""
    pairs = zip(lines, lines[1:], strict=False)
    gaps = sorted(b.bbox[1] - a.bbox[3] for a, b in pairs if b.bbox[1] > a.bbox[1])
    return max(gaps[len(gaps) // 2], 0.0) if gaps else 0.0


def continues_below(head: Element, below: Element) -> bool:
    """Return True when element ``below`` continues the sentence of element ``head``.

    ``below`` starts in lower case, on ``head``'s page, right under it at the
    spacing of a paragraph's lines (:data:`TIGHT_GAP` of a line of the shorter of
    the two) and in its column; ``head`` does not end with closing punctuation.
    """
    if head.page != below.page or head.bbox is None or below.bbox is None:
        return False
    if head.text.rstrip().endswith(_CLOSING) or not _starts_lower(below.text):
        return False
    hx0, hy0, _, hy1 = head.bbox
    bx0, by0, _, by1 = below.bbox
    line = max(min(hy1 - hy0, by1 - by0), 1.0)
    return -0.5 * line <= by0 - hy1 <= TIGHT_GAP * line and abs(bx0 - hx0) <= line * 2

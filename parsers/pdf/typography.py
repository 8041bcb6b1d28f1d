"""Typographic rules shared by the PDF heuristics: what sizes, gaps and lengths say.

Each rule is stated here once, as a named measure and, where several modules ask
the same question, a small predicate:

- *display size*: :data:`DISPLAY_RATIO` times the body size or more sets a line
  apart by its size alone (a heading style, a title);
- *body size*: within :data:`BODY_SIZE_TOLERANCE` points of the body font; the
  *plain body style* is body size, not bold (tables of contents and indexes repeat
  outline titles in it);
- *set close*: a vertical gap of at most :data:`SET_CLOSE` times the line height,
  as the lines of one paragraph are set; a wider gap sets a line apart;
- *same row*: two boxes that overlap vertically by :data:`SAME_ROW_OVERLAP` of the
  lower one's height;
- *short line*: at most :data:`SHORT_LINE_CHARS` characters (a running header, a
  label), shorter than a line of body text.
"""

from __future__ import annotations

from chunkweave.parsers.pdf.geometry import BBox

#: A size this many times the body size or more is a display (heading) size.
DISPLAY_RATIO = 1.12
#: Sizes within this many points of the body size are the body size.
BODY_SIZE_TOLERANCE = 0.5
#: Lines of one block are at most this many line heights apart.
SET_CLOSE = 0.8
#: Boxes overlapping vertically by this share of the lower one's height share a row.
SAME_ROW_OVERLAP = 0.5
#: A line of at most this many characters is short: no line of body text.
SHORT_LINE_CHARS = 90


def is_display_size(size: float, body: float) -> bool:
    """Return True for a size that sets text apart by itself (:data:`DISPLAY_RATIO`)."""
    return size >= DISPLAY_RATIO * body


def is_body_size(size: float, body: float) -> bool:
    """Return True for a size within :data:`BODY_SIZE_TOLERANCE` of the body size."""
    return abs(size - body) <= BODY_SIZE_TOLERANCE


def is_plain_body(style: tuple[float, bool], body: float) -> bool:
    """Return True for a ``(size, bold)`` style that is the body's: body size, not bold."""
    return is_body_size(style[0], body) and not style[1]


def set_close(gap: float, height: float) -> bool:
    """Return True when a vertical ``gap`` is no wider than lines of one block leave."""
    return gap <= SET_CLOSE * height


def same_row(a: BBox, b: BBox) -> bool:
    """Return True when two boxes share a row (:data:`SAME_ROW_OVERLAP`)."""
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    return overlap >= SAME_ROW_OVERLAP * min(a[3] - a[1], b[3] - b[1])


def is_short_line(text: str) -> bool:
    """Return True for a line of at most :data:`SHORT_LINE_CHARS` characters."""
    return len(text) <= SHORT_LINE_CHARS

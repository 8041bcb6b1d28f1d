"""What the cells and rows of a table of figures hold: numbers, figures, rules.

Shared by the whitespace detector's stages (:mod:`.gaps`, :mod:`.spaced`,
:mod:`.headers`): a *figure* is a quantity ("13,278", "(4.5)", "12%"), not a
section number or a marker; a *data row* has two or more pieces, a number among
those after the first; a *rule row* is drawn with ``-----``.
"""

from __future__ import annotations

import re

from chunkweave.parsers.pdf.text import Line

#: A table of figures has at least this many rows of at least this many filled cells.
MIN_ROWS = 3
MIN_COLS = 3
#: Header rows looked for above a table body.
MAX_HEADER_ROWS = 5
#: Share of a column's filled cells that must be numbers for a data column.
DATA_SHARE = 0.6

_NUMBER = re.compile(
    r"^[(\[]?[-+−–—]?[$€£¥]?\s?(?:\d[\d,.\s]*\d|\d)\s?[%‰]?[)\]]?[*†‡]?$"
    r"|^\d[\d,.]*\s?[-–]\s?\d[\d,.]*$"  # a range: "19-22", "03-80"
)
_SECTION = re.compile(r"^\d+(?:\.\d+){2,}\.?$")
_MARKER = re.compile(r"^\(\d{1,2}\)$")
_PLACEHOLDER = re.compile(r"^(?:[-–—−.…x*]|\(?[A-Z]{1,2}\)?|n\.?\s?a\.?|N/?A)$")
#: A word drawn with rule characters ("-----", "====").
RULE_WORD = re.compile(r"^[-=_–—~+|]{2,}$")


def is_number(text: str) -> bool:
    """Return True when the cell is a number (with sign, currency, percent, a range)."""
    return bool(_NUMBER.match(text.strip()))


def is_figure(text: str) -> bool:
    """Tell whether a cell is a quantity (not a section number "2.3.59.1", a marker "(1)")."""
    t = text.strip()
    return is_number(t) and not _SECTION.match(t) and not _MARKER.match(t)


def is_numberish(text: str) -> bool:
    """Return True for a number or a placeholder standing for one ("-", "n.a.", "(X)")."""
    t = text.strip()
    return bool(_NUMBER.match(t) or _PLACEHOLDER.match(t))


def is_rule(text: str) -> bool:
    """Return True when every word is a run of rule characters ("-----", "====")."""
    return all(RULE_WORD.match(w) for w in text.split())


def is_data_row(row: list[Line]) -> bool:
    """Return True for two or more pieces with a number after the first, not a rule row."""
    return len(row) >= 2 and any(is_number(ln.text) for ln in row[1:]) and not is_rule_row(row)


def is_rule_row(row: list[Line]) -> bool:
    """Return True when every piece of the row is a rule."""
    return all(is_rule(ln.text) for ln in row)


def row_height(row: list[Line]) -> float:
    """Return the height of the row's tallest piece."""
    return max(ln.height for ln in row)


def row_gap(upper: list[Line], lower: list[Line]) -> float:
    """Return the vertical gap from the bottom of ``upper`` to the top of ``lower``."""
    return min(ln.bbox[1] for ln in lower) - max(ln.bbox[3] for ln in upper)

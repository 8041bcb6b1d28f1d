"""Tables of a PDF page: the detectors, and the cascade that runs them in turn.

Each detector sees the page's lines that no earlier one put in a table:

1. ruled tables (PyMuPDF's ``find_tables``, :mod:`.ruled`), only on pages with
   rule evidence (:func:`~.rules.has_table_rules`);
2. contents and index pages from dot leaders (:mod:`.leaders`);
3. a page set sideways, read in its text's own frame (:mod:`.sideways`), or else
   tables of figures whose columns hide inside visual lines (:mod:`.spaced`);
4. unruled tables of three or more aligned columns (:mod:`.grid`), on pages where
   an aligned grid shows;
5. two-column key/value tables (:mod:`.pairs`).

Every detector's candidates face :func:`~.verdict.verdict` before the next one
runs: running text set in columns is reading order, not cells.

On the layout-model route :func:`model_tables` adds the tables the model saw that
none of them found.
"""

from __future__ import annotations

from collections.abc import Sequence

import pymupdf

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.geometry import BBox, boxes_of, outside, overlap_share
from chunkweave.parsers.pdf.tables.grid import aligned_grid, find_grid_tables
from chunkweave.parsers.pdf.tables.leaders import find_leader_tables
from chunkweave.parsers.pdf.tables.pairs import find_pair_tables
from chunkweave.parsers.pdf.tables.ruled import find_ruled_tables, find_text_tables
from chunkweave.parsers.pdf.tables.rules import has_table_rules
from chunkweave.parsers.pdf.tables.sideways import SIDEWAYS_MAX_LINES, sideways_tables
from chunkweave.parsers.pdf.tables.spaced import find_spaced_tables
from chunkweave.parsers.pdf.tables.verdict import standing

__all__ = ["find_tables", "model_tables", "standing"]
from chunkweave.parsers.pdf.text import Line

#: A model table region covered by less than this share of any table found is one
#: the detectors missed.
MISSED_SHARE = 0.3


def find_tables(page: pymupdf.Page, lines: list[Line], page_no: int) -> tuple[list[Element], bool]:
    """Return the page's tables (``order`` 0), and whether it has table rules none explains.

    ``lines`` are the page's visual lines; ``page_no`` is 1-based.
    """
    rules = has_table_rules(page)
    # Each detector's candidates face the verdict (running text set in columns is
    # no table) before the next detector sees the lines they leave.
    tables = standing([t.element for t in find_ruled_tables(page, page_no)] if rules else [])
    tables += standing(find_leader_tables(outside(lines, boxes_of(tables)), page_no))
    tables += standing(_spaced_tables(page, outside(lines, boxes_of(tables)), page_no))
    if aligned_grid(lines):
        tables += standing(find_grid_tables(outside(lines, boxes_of(tables)), page_no))
    tables += standing(find_pair_tables(outside(lines, boxes_of(tables)), page_no))
    return tables, rules and not tables


def _spaced_tables(page: pymupdf.Page, lines: list[Line], page_no: int) -> list[Element]:
    """Return the tables of a page set sideways, or else its whitespace-aligned tables.

    A page whose text is nearly all set sideways (a landscape table printed on a
    portrait page: the visual lines skip vertical text) has few visual lines.
    """
    if len(lines) < SIDEWAYS_MAX_LINES:
        turned = sideways_tables(page, page_no)
        if turned is not None:
            return turned
    return find_spaced_tables(page, lines, page_no)


def model_tables(
    page: pymupdf.Page, page_no: int, regions: Sequence[BBox], found: list[Element]
) -> list[Element]:
    """Return the tables rebuilt in the model's table ``regions`` that ``found`` misses."""
    boxes = boxes_of(found)
    missed = [r for r in regions if all(overlap_share(r, t) < MISSED_SHARE for t in boxes)]
    return [t.element for t in find_text_tables(page, page_no, missed)]

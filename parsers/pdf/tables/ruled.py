"""Ruled tables on PDF pages: PyMuPDF's ``find_tables``, validated, cells rebuilt.

``find_tables`` is expensive, so it only runs on pages with ruling evidence
(:func:`~.rules.has_table_rules`) or when the layout model saw a table. Every
detected grid is validated (at least 2x2, mostly filled, not a boxed paragraph,
not the whole page, no columns merged into one cell: a table ruled in one
direction only leaves ``find_tables`` to guess its columns, and a grid that got
them wrong is left to the whitespace detectors) and its cell text is rebuilt from
the page's words, because PyMuPDF's own cell text drops spaces on PDFs that
position words without space characters; merged cells are filled as their spans
say (:mod:`.spans`). The result is one ``table`` element per
table with ``rows`` and ``header_rows``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pymupdf

from chunkweave.parsers.elements import Element, table_element
from chunkweave.parsers.pdf.geometry import BBox, intersects
from chunkweave.parsers.pdf.tables.cells import DATA_SHARE, is_figure
from chunkweave.parsers.pdf.tables.sideways import mostly_vertical, sideways_tables
from chunkweave.parsers.pdf.tables.spans import (
    covering_cells,
    fill_spans,
    header_depth,
    join_wrapped_header,
)
from chunkweave.parsers.pdf.text import clean_text

#: A table whose cells average more characters than this is a text box.
MAX_MEAN_CELL_CHARS = 160

#: Rows with a column gap inside a cell before a grid is taken to have merged columns.
MIN_MERGED_ROWS = 3
#: A gap this many word heights wide inside a cell line is a column gap.
CELL_GAP = 1.0
#: ... when at least this share of the grid's text lines shows one.
MERGED_SHARE = 0.3
#: Filled cells a ruled row needs before its lines some cells leave blank are read
#: as wrapped cells between rows of their own.
MIN_WRAP_CELLS = 3
#: A last row of one cell this long (characters), among short cells, is text below
#: the table that the grid swallowed.
SWALLOWED_CHARS = 200

# A cell holding only a list marker: a bullet glyph, "1.", "(a)", "iv)".
_LEADER_TAIL = re.compile(r"(?:\s?[.·…]){4,}\s*$")
_MARKER = re.compile(r"^(?:[•●○◦▪▫■□‣⁃∙·\-–—*]|\(?(?:\d{1,3}|[a-z]|[ivx]{1,4})[.)])$", re.I)


@dataclass(frozen=True)
class PageTable:
    """A validated table: its element and box (for removing its text from the flow)."""

    element: Element
    bbox: BBox


def find_ruled_tables(page: pymupdf.Page, page_no: int) -> list[PageTable]:
    """Detect, validate and extract the ruled tables of a page (lines strategy).

    On a page set sideways (a landscape table turned on a portrait page) the grid
    comes out transposed, its rows the table's columns; where the page read in its
    text's frame (:func:`~.sideways.sideways_tables`) yields a
    table, the grid is left to it.
    """
    tables = _extract(
        page,
        page_no,
        [t for t in _safe_find(page, use_layout=False) if _valid_shape(t)],
        gaps=True,
    )
    if tables and mostly_vertical(page.get_text("words", flags=pymupdf.TEXT_MEDIABOX_CLIP)):
        turned = [t.bbox for t in sideways_tables(page, page_no) or () if t.bbox]
        tables = [t for t in tables if not any(intersects(t.bbox, b) for b in turned)]
    return tables


def find_text_tables(page: pymupdf.Page, page_no: int, regions: Sequence[BBox]) -> list[PageTable]:
    """Rebuild tables inside boxes the layout model labelled ``table`` (text strategy)."""
    grids: list = []
    for r in regions:
        found = _safe_find(page, clip=pymupdf.Rect(r), strategy="text", use_layout=False)
        grids.extend(t for t in found if _valid_shape(t))
    return _extract(page, page_no, grids)


def _extract(page: pymupdf.Page, page_no: int, grids: list, gaps: bool = False) -> list[PageTable]:
    """Rebuild and validate the grids' cells.

    ``gaps``: drop grids whose cells hold column gaps (:func:`_gapped_rows`).
    """
    if not grids:
        return []
    words = page.get_text("words", flags=pymupdf.TEXT_MEDIABOX_CLIP)
    out: list[PageTable] = []
    for t in grids:
        if gaps and _gapped_rows(t, words) >= MIN_MERGED_ROWS:
            continue
        rows = _rows_from_words(t, words)
        x0, y0, x1, y1 = (float(v) for v in t.bbox)
        if len(rows) == len(t.rows) and _swallowed(rows):
            # The grid's last row reaches down over the text below the table.
            rows = rows[:-1]
            y1 = float(t.rows[-2].bbox[3])
        if not _valid_content(rows, (x0, y0, x1, y1), page.rect):
            continue
        header = 1 if not t.header.external and len(rows) > 1 else 0
        if header and len(rows) == len(t.rows) > 3:  # one text row per grid row
            header = header_depth(covering_cells(t), len(rows), len(rows[0]))
        element = table_element(rows, header, page=page_no, bbox=(x0, y0, x1, y1))
        out.append(PageTable(element=element, bbox=(x0, y0, x1, y1)))
    return out


def _swallowed(rows: tuple[tuple[str, ...], ...]) -> bool:
    """Tell whether the last row is text below the table that the grid swallowed.

    A grid whose bottom rule is missing or shared with a later drawing can end in a
    row reaching far below the table: one cell holding paragraphs (and whatever
    follows) while the table's other cells are short.
    """
    if len(rows) < 3:
        return False
    last = [c for c in rows[-1] if c]
    others = sorted(len(c) for r in rows[:-1] for c in r if c)
    if len(last) != 1 or not others:
        return False
    return len(last[0]) >= SWALLOWED_CHARS and len(last[0]) > 5 * others[len(others) // 2]


def _safe_find(page: pymupdf.Page, **kwargs: object) -> list:
    # find_tables reports internal failures by returning None; a table we cannot
    # find is not worth failing the page for.
    try:
        finder = page.find_tables(**kwargs)
    except (RuntimeError, ValueError, IndexError, ZeroDivisionError):
        return []
    return list(finder.tables) if finder is not None else []


def _valid_shape(t: object) -> bool:
    return getattr(t, "row_count", 0) >= 2 and getattr(t, "col_count", 0) >= 2


def _gapped_rows(table: object, words: list) -> int:
    """Count the text lines of the grid with a cell whose words lie a column gap apart.

    Rules in one direction only (between rows, or a frame around a figure of a
    table) leave ``find_tables`` to guess the columns, and it may put several in
    one cell ("ID   NAME   DEPT", "7,389,208   3,027,153"): a gap of ``CELL_GAP``
    word heights inside a cell's line shows it, on ``MERGED_SHARE`` of the grid's
    lines (0 is returned otherwise). Lines are counted, not grid rows: a booktabs
    grid holds all its data lines in one row. The whitespace detectors rebuild
    such a table instead.
    """
    gapped: set[int] = set()
    lines: set[int] = set()
    for row in table.rows:  # type: ignore[attr-defined]
        for cell in row.cells:
            if cell is None:
                continue
            x0, y0, x1, y1 = cell
            inside = sorted(
                (
                    w
                    for w in words
                    if x0 <= (w[0] + w[2]) / 2 <= x1 and y0 <= (w[1] + w[3]) / 2 <= y1
                ),
                key=lambda w: (round((w[1] + w[3]) / 4), w[0]),
            )
            lines.update(round((w[1] + w[3]) / 4) for w in inside)
            for a, b in zip(inside, inside[1:], strict=False):
                height = a[3] - a[1]
                same_line = abs((a[1] + a[3]) - (b[1] + b[3])) < height
                # A bullet or number set off from its item is no column gap.
                marker = _MARKER.match(a[4]) or not any(ch.isalnum() for ch in a[4])
                if same_line and not marker and b[0] - a[2] > CELL_GAP * height:
                    gapped.add(round((a[1] + a[3]) / 4))
    # A stray wide space (two spaces after a full stop in justified text) is not
    # enough: a share of the grid's lines must show it.
    return len(gapped) if len(gapped) >= MERGED_SHARE * len(lines) else 0


def _rows_from_words(table: object, words: list) -> tuple[tuple[str, ...], ...]:
    # A grid of very few rows can be a booktabs table with its rows stacked; in a
    # grid ruled row by row, lines within a row are wrapped cells, unless the row
    # is a block of figures on shared lines (a body left without row rules under
    # a ruled header: :func:`_stacked_rows` tells).
    few = len(table.rows) <= 3  # type: ignore[attr-defined]
    parts: list[list[tuple[str, ...]]] = []
    for row in table.rows:  # type: ignore[attr-defined]
        cells: list[list] = []
        for cell in row.cells:
            if cell is None:
                cells.append([])
                continue
            x0, y0, x1, y1 = cell
            cells.append(
                [
                    w
                    for w in words
                    if x0 <= (w[0] + w[2]) / 2 <= x1 and y0 <= (w[1] + w[3]) / 2 <= y1
                ]
            )
        split = _stacked_rows(cells, few)
        parts.append(split if len(split) > 1 else [tuple(_cell_text(ws) for ws in cells)])
    if few and any(len(p) > 1 for p in parts):
        return tuple(r for p in parts for r in p)
    # One text row per grid row: merged cells' text goes where their spans say; a
    # row split into its lines keeps them.
    filled = fill_spans([p[0] for p in parts], covering_cells(table))
    rows = tuple(r for p, f in zip(parts, filled, strict=True) for r in (p if len(p) > 1 else [f]))
    return join_wrapped_header(rows)


def _stacked_rows(cells: list[list], few: bool = True) -> list[tuple[str, ...]]:
    """Return the text row(s) of one detected row, given each cell's words.

    Tables ruled only above and below (booktabs style), or ruled between columns
    only, come back from ``find_tables`` with all data rows stacked in one row. A
    text line on which every filled cell (two or more) has text starts a row: the
    sibling columns' lines align there. A line some cells leave blank is a wrapped
    cell's next line and stays in the row above ("Up to 79 work-hours × $85 per
    hour =" over "Up to $6,715."). Unless the first line starts a row and another
    does too, the row stays whole. In a grid of more
    rows (``few`` False) a row splits only when it is a block of figures: three
    lines or more, and most cells after the first figures on every line (labels
    wrapped in parallel over two lines are one header row).
    """
    tops = sorted({round((w[1] + w[3]) / 2) for ws in cells for w in ws})
    lines: list[float] = []
    for y in tops:
        if not lines or y - lines[-1] > 3:
            lines.append(y)
    filled = [ws for ws in cells if ws]

    def line_of(w: tuple) -> int:
        centre = (w[1] + w[3]) / 2
        return min(range(len(lines)), key=lambda i: abs(lines[i] - centre))

    on = [{line_of(w) for w in ws} for ws in filled]
    # A row starts on a line every filled cell has text on; a line some cells
    # leave blank is a wrapped cell's next line, part of the row above.
    starts = [i for i in range(len(lines)) if all(i in s for s in on)]
    stacked = len(starts) >= 2 and len(filled) >= 2 and starts[0] == 0
    if len(starts) < len(lines) and len(filled) < MIN_WRAP_CELLS:
        # Two cells wrapping side by side (paragraphs compared column by column)
        # share lines by chance: a row's wrapped line needs more siblings to tell.
        stacked = False
    row_of = [sum(1 for s in starts if s <= i) - 1 for i in range(len(lines))]
    if stacked and not few:
        values = [ws for ws in cells[1:] if ws]
        figures = sum(
            1
            for ws in values
            if all(
                is_figure(_cell_text([w for w in ws if row_of[line_of(w)] == k]))
                for k in range(len(starts))
            )
        )
        stacked = len(starts) >= 3 and figures >= max(2, DATA_SHARE * len(values))
    if not stacked:
        return [tuple(_cell_text(ws) for ws in cells)]
    return [
        tuple(_cell_text([w for w in ws if row_of[line_of(w)] == k]) for ws in cells)
        for k in range(len(starts))
    ]


def _cell_text(words: list) -> str:
    ordered = sorted(words, key=lambda w: (w[5], w[6], w[7]))
    # A dot leader running a label or figure out to the cell's edge ("$0 .......")
    # is no part of the cell (an ellipsis has three dots).
    return _LEADER_TAIL.sub("", clean_text(" ".join(w[4] for w in ordered))).strip()


def _valid_content(
    rows: tuple[tuple[str, ...], ...], bbox: object, page_rect: pymupdf.Rect
) -> bool:
    cells = [c for r in rows for c in r]
    filled = [c for c in cells if c]
    if len(rows) < 2 or not cells or len(filled) < 0.4 * len(cells):
        return False
    if sum(len(c) for c in filled) / len(filled) > MAX_MEAN_CELL_CHARS:
        return False
    if _marker_column(rows):
        return False
    rect = pymupdf.Rect(bbox)
    # A "table" covering nearly the whole page is a page frame, not a table.
    return rect.get_area() < 0.85 * page_rect.get_area()


def _marker_column(rows: tuple[tuple[str, ...], ...]) -> bool:
    """Return True when the first column is list markers: a list, not a table.

    Bulleted or numbered lists set with hanging indents line up like a two-column
    grid whose first column holds the markers; the detectors (and the light layout
    model) then see a table. A third of the first column's filled cells being
    markers is enough, since a list misread as a grid also splits its text into
    fragments there. Marks inside a table (a "•" for yes) sit in later columns.
    """
    first = [r[0] for r in rows if r and r[0]]
    markers = sum(1 for c in first if _MARKER.match(c))
    return markers >= 2 and 3 * markers >= len(first)

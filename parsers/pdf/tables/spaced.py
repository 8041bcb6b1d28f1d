"""Whitespace-aligned tables whose columns hide inside visual lines.

Statistical tables, survey reports, manuals and terminal listings print columns
apart by a few points of white space, by dot leaders, or by runs of spaces in a
monospaced font. Visual lines (``chunkweave.parsers.pdf.text``) join pieces closer
than a few em, so such a row arrives as one line ("Maine 13,278 13,077 12,950 ...")
and neither the grid detector (``chunkweave.parsers.pdf.tables.grid``, which needs its
columns as separate lines, left-aligned) nor the key/value detector
(``chunkweave.parsers.pdf.tables.pairs``) sees the columns. This module:

1. tells cheaply, from the lines alone, whether a page may hide such a table
   (:func:`hides_columns`): ``MIN_ROWS`` lines that hold three or more numbers, a
   dot leader followed by more text, runs of spaces, or monospaced words set
   wider apart than spaces (``SPARSE_PITCH``); or enough lines that are figures
   alone (right-aligned columns, which the grid detector does not see);
2. cuts those pages' lines at column gaps found in the page's words
   (:func:`split_at_gaps`): a gap of ``WIDE_GAP`` em anywhere; of ``PIECE_GAP`` em
   between two text runs MuPDF keeps apart or between two numbers; after a dot
   leader (whose dots are dropped); between runs of rule characters;
3. finds the tables of figures among the pieces (:func:`find_spaced_tables`):

   - a *data row* has two or more pieces, a number among those after the first;
   - a table body is a run of data rows, with rule rows (``-----``), *stub rows*
     (one piece in the label column: a group label, the first line of a wrapped
     row label; the last column for right-to-left tables), *continuation rows*
     (one piece where a later column starts: a wrapped cell, the values listed
     under a field's description) and sub-header rows between them; it ends at a
     wide vertical gap, at a line of prose, or at a blank line (``BLANK_LINE``)
     followed by the header of the next table;
   - its columns are the x-ranges covered by the data rows' pieces, split where
     white space runs down the whole body (a tenth of the rows may cross it: a
     spanning label);
   - up to ``MAX_HEADER_ROWS`` rows right above the body are its header when they
     lie within the table's width and are not prose (a title or a headnote set
     across the page, or starting in the first column and running over it, is
     not); so are the body's first rows when a rule row follows them, or when
     their figures are foreign to their columns ("2019" over "13,278");
   - it is kept when it has ``MIN_ROWS`` rows of ``MIN_COLS`` filled cells and a
     *data column*: most of the filled cells of some column after the first are
     numbers. Multi-column text (an index, a glossary) has no such column;
4. runs the grid detector on the cut pieces for tables of words in columns (the
   functions of a manual set in five columns of separately placed words), keeping
   the grids that needed the cutting;
5. reads a page whose text is nearly all set sideways (a landscape table printed
   on a portrait page, which the visual lines skip) in its text's own frame
   (:func:`sideways_pieces`) and returns its tables boxed in page coordinates.

Cells spanning several columns keep their text in the first one. Leader dots and
rule rows are not cells. Panels drawn with ``|`` and ``+---+`` are not tables
(``grid.drawn_in_text``).
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Callable, Sequence

import pymupdf

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.geometry import BBox, boxes_of, centre_inside, enclose, outside
from chunkweave.parsers.pdf.tables.grid import (
    aligned_grid,
    drawn_in_text,
    find_grid_tables,
    table_from_lines,
    visual_rows,
)
from chunkweave.parsers.pdf.text import TEXT_FLAGS, Line, clean_text

MIN_ROWS = 3
MIN_COLS = 3
#: A gap this wide (em) always separates two cells.
WIDE_GAP = 1.0
#: A gap this wide (em) separates two cells when MuPDF keeps the text runs apart
#: (separately positioned text) or both sides are numbers.
PIECE_GAP = 0.4
#: Consecutive table rows are at most this many line heights apart.
MAX_ROW_GAP = 2.5
#: A gap between rows this many line heights wider than the body's closest rows
#: is a blank line.
BLANK_LINE = 0.5
#: Header rows looked for above a table body.
MAX_HEADER_ROWS = 5
#: Share of a column's filled cells that must be numbers for a data column.
DATA_SHARE = 0.6
#: Monospaced fonts advance 0.5 to 0.6 em per character; a monospaced line wider
#: than this per character holds wider gaps than its spaces (em).
SPARSE_PITCH = 0.62

_NUMBER = re.compile(
    r"^[(\[]?[-+−–—]?[$€£¥]?\s?(?:\d[\d,.\s]*\d|\d)\s?[%‰]?[)\]]?[*†‡]?$"
    r"|^\d[\d,.]*\s?[-–]\s?\d[\d,.]*$"  # a range: "19-22", "03-80"
)
_SECTION = re.compile(r"^\d+(?:\.\d+){2,}\.?$")
_MARKER = re.compile(r"^\(\d{1,2}\)$")
_PLACEHOLDER = re.compile(r"^(?:[-–—−.…x*]|\(?[A-Z]{1,2}\)?|n\.?\s?a\.?|N/?A)$")
_LEADER_WORD = re.compile(r"^[.·…]+$")
_RULE_WORD = re.compile(r"^[-=_–—~+|]{2,}$")
_SPACED_NUMBERS = re.compile(r"(?:^|\s)[(\[]?[-+−–—]?[$€£¥]?\d[\d,.]*%?[)\]]?(?=\s|$)")
_LEADER_INSIDE = re.compile(r"(?:[.·]\s?){3,}\s*\S")


def _number(text: str) -> bool:
    return bool(_NUMBER.match(text.strip()))


def _figure(text: str) -> bool:
    """Tell whether a cell is a quantity (not a section number "2.3.59.1", a marker "(1)")."""
    t = text.strip()
    return _number(t) and not _SECTION.match(t) and not _MARKER.match(t)


def _numberish(text: str) -> bool:
    t = text.strip()
    return bool(_NUMBER.match(t) or _PLACEHOLDER.match(t))


def _rule(text: str) -> bool:
    return all(_RULE_WORD.match(w) for w in text.split())


# ------------------------------------------------------------------ 1. the gate


def _may_hide(ln: Line) -> bool:
    if ln.chars >= len(ln.text) + 2:  # runs of spaces, collapsed in the text
        return True
    if ln.mono and " " in ln.text and _pitch(ln) >= SPARSE_PITCH:
        return True  # monospaced words set further apart than spaces do
    text = ln.text
    if len(_SPACED_NUMBERS.findall(text)) >= 3:
        return True
    return bool(_LEADER_INSIDE.search(text))


def _pitch(ln: Line) -> float:
    """Width per character of a line, in em."""
    return (ln.bbox[2] - ln.bbox[0]) / max(len(ln.text), 1) / max(ln.size, 1.0)


def hides_columns(lines: Sequence[Line]) -> bool:
    """Return True when the page may hold a table of figures the other detectors miss.

    That is ``MIN_ROWS`` lines that may hide columns (:func:`_may_hide`), or
    ``MIN_ROWS`` rows' worth of lines that are figures alone: columns of numbers
    already apart, but right-aligned, which the grid detector (aligned left
    edges) does not see.
    """
    hiding = figures = 0
    for ln in lines:
        if _may_hide(ln):
            hiding += 1
            if hiding >= MIN_ROWS:
                return True
        elif _figure(ln.text):
            figures += 1
            if figures >= MIN_ROWS * (MIN_COLS - 1):
                return True
    return False


# ------------------------------------------------------------------ 2. cutting


def split_at_gaps(page: pymupdf.Page, lines: Sequence[Line]) -> list[Line]:
    """Return the lines cut at column gaps (lines without words stay whole)."""
    words = sorted(page.get_text("words", flags=TEXT_FLAGS), key=lambda w: (w[1] + w[3]) / 2)
    centres = [(w[1] + w[3]) / 2 for w in words]
    out: list[Line] = []
    for ln in lines:
        x0, y0, x1, y1 = ln.bbox
        lo = bisect.bisect_left(centres, y0)
        hi = bisect.bisect_right(centres, y1)
        mine = sorted(
            (w for w in words[lo:hi] if x0 - 1 <= (w[0] + w[2]) / 2 <= x1 + 1),
            key=lambda w: w[0],
        )
        if not mine:
            out.append(ln)
            continue
        out.extend(_pieces(ln, mine))
    return out


def _cut(a: tuple, b: tuple, size: float) -> bool:
    gap = b[0] - a[2]
    if gap >= WIDE_GAP * size:
        return True
    if gap < PIECE_GAP * size:
        return False
    apart = (a[5], a[6]) != (b[5], b[6])  # separately positioned text runs
    return (
        apart
        or (_number(a[4]) and _number(b[4]))
        or bool(_RULE_WORD.match(a[4]) and _RULE_WORD.match(b[4]))
    )


def _pieces(ln: Line, words: list[tuple]) -> list[Line]:
    if len(words) == 1 and not _LEADER_WORD.match(words[0][4]):
        return [ln]
    groups: list[list[tuple]] = [[]]
    i = 0
    while i < len(words):
        w = words[i]
        if _LEADER_WORD.match(w[4]) and (len(w[4]) >= 3 or _leader_run(words, i) >= 2):
            # A dot leader ends the cell before it; its dots are no cell.
            while i < len(words) and _LEADER_WORD.match(words[i][4]):
                i += 1
            groups.append([])
            continue
        if groups[-1] and _cut(groups[-1][-1], w, ln.size):
            groups.append([])
        groups[-1].append(w)
        i += 1
    groups = [g for g in groups if g]
    if len(groups) == 1 and len(groups[0]) == len(words):
        # One piece: the line's text, boxed by its words (no leading spaces).
        if abs(words[0][0] - ln.bbox[0]) < 1 and abs(words[-1][2] - ln.bbox[2]) < 1:
            return [ln]
        return [dataclasses.replace(ln, bbox=enclose(words))]
    return [_piece(ln, g) for g in groups]


def _leader_run(words: list[tuple], i: int) -> int:
    n = 0
    while i + n < len(words) and _LEADER_WORD.match(words[i + n][4]):
        n += 1
    return n


def _piece(ln: Line, words: list[tuple]) -> Line:
    text = clean_text(" ".join(w[4] for w in words)).strip()
    # A label glued to its leader ("Arson.....", "crime. . ."): the dots go.
    text = re.sub(r"(?:\s?[.·…]){2,}$", "", text).strip() or text
    return dataclasses.replace(
        ln, text=text, bbox=enclose(words), chars=sum(len(w[4]) for w in words)
    )


# ------------------------------------------------------------------ sideways pages

#: Pages with fewer (horizontal) visual lines than this are checked for sideways text.
SIDEWAYS_MAX_LINES = 6
#: ... and read sideways when at least this many words, and nearly all, run vertically.
SIDEWAYS_MIN_WORDS = 40


def sideways_pieces(
    page: pymupdf.Page,
) -> tuple[list[Line], Callable[[BBox], BBox]] | None:
    """Return a sideways page's text as pieces in its upright frame, and the way back.

    The upright frame has x along the text's reading direction and y down its
    lines; the returned function maps a box in it back to page coordinates.
    None when the page's text is not mostly vertical.
    """
    tp = page.get_textpage(flags=TEXT_FLAGS)
    dirs: dict[tuple[int, int], tuple[float, float]] = {}
    sizes: dict[tuple[int, int], float] = {}
    for block in page.get_text("dict", textpage=tp).get("blocks", ()):
        for k, raw in enumerate(block.get("lines", ())):
            ux, uy = raw.get("dir", (1.0, 0.0))
            dirs[(block.get("number", 0), k)] = (float(ux), float(uy))
            spans = raw.get("spans", ())
            sizes[(block.get("number", 0), k)] = max((sp["size"] for sp in spans), default=10.0)
    words = page.get_text("words", textpage=tp)
    vertical = [w for w in words if abs(dirs.get((w[5], w[6]), (1.0, 0.0))[1]) > 0.9]
    if len(vertical) < SIDEWAYS_MIN_WORDS or len(vertical) < 0.9 * len(words):
        return None
    # The majority direction: up the page or down it.
    up = sum(1 for w in vertical if dirs[(w[5], w[6])][1] < 0) * 2 > len(vertical)
    dx, dy = (0.0, -1.0) if up else (0.0, 1.0)
    nx, ny = -dy, dx  # the text's "down"

    def turn(b: BBox) -> BBox:
        xs = [x * dx + y * dy for x in (b[0], b[2]) for y in (b[1], b[3])]
        ys = [x * nx + y * ny for x in (b[0], b[2]) for y in (b[1], b[3])]
        return (min(xs), min(ys), max(xs), max(ys))

    def back(b: BBox) -> BBox:
        xs = [u * dx + v * nx for u in (b[0], b[2]) for v in (b[1], b[3])]
        ys = [u * dy + v * ny for u in (b[0], b[2]) for v in (b[1], b[3])]
        return (min(xs), min(ys), max(xs), max(ys))

    groups: dict[tuple[int, int], list[tuple]] = {}
    for w in vertical:
        if (dirs[(w[5], w[6])][1] < 0) == up:
            groups.setdefault((w[5], w[6]), []).append((*turn(w[:4]), *w[4:]))
    pieces: list[Line] = []
    for key, ws in groups.items():
        ws.sort(key=lambda w: w[0])
        size = sizes.get(key, 10.0)
        ln = Line(
            text=clean_text(" ".join(w[4] for w in ws)).strip(),
            bbox=enclose(ws),
            size=size,
            bold=False,
            mono=False,
            block=key[0],
            chars=sum(len(w[4]) for w in ws),
        )
        pieces.extend(_pieces(ln, ws))
    return pieces, back


def sideways_tables(page: pymupdf.Page, page_no: int) -> list[Element] | None:
    """Return the tables of a page set sideways, boxed in page coordinates.

    None when the page's text is not mostly vertical.
    """
    turned = sideways_pieces(page)
    if turned is None:
        return None
    pieces, back = turned
    return [
        t.model_copy(update={"bbox": back(t.bbox)}) if t.bbox else t
        for t in _tables_of(visual_rows(pieces), page_no)
    ]


def mostly_vertical(words: Sequence[tuple]) -> bool:
    """Tell cheaply, from word boxes, whether a page's text runs vertically."""
    long = [w for w in words if len(w[4]) >= 3]
    tall = sum(1 for w in long if w[3] - w[1] > 1.5 * (w[2] - w[0]))
    return tall >= SIDEWAYS_MIN_WORDS // 2 and tall >= 0.9 * len(long)


# ------------------------------------------------------------------ 3. tables


def find_spaced_tables(page: pymupdf.Page, lines: Sequence[Line], page_no: int) -> list[Element]:
    """Return the whitespace-aligned tables hidden in a page's lines (``order`` 0).

    A page whose text is nearly all set sideways (a landscape table printed on a
    portrait page: the visual lines skip vertical text) is read in its text's own
    frame (:func:`sideways_pieces`).
    """
    if len(lines) < SIDEWAYS_MAX_LINES:
        turned = sideways_tables(page, page_no)
        if turned is not None:
            return turned
    if not hides_columns(lines):
        return []
    pieces = split_at_gaps(page, lines)
    tables = _tables_of(visual_rows(pieces), page_no)
    # Word tables set in columns of separately placed words (function names,
    # options, format letters in a manual): the grid detector on the pieces.
    rest = outside(pieces, boxes_of(tables))
    if aligned_grid(rest):
        tables += [t for t in find_grid_tables(rest, page_no) if _cut_table(t, lines)]
    return tables


def _cut_table(table: Element, lines: Sequence[Line]) -> bool:
    """Tell whether a grid found on the pieces needed the cutting.

    Otherwise the grid detector finds it on the page's own lines, as before.
    """
    box = table.bbox or (0.0, 0.0, 0.0, 0.0)
    return any(_may_hide(ln) for ln in lines if centre_inside(ln.bbox, box))


def _tables_of(rows: list[list[Line]], page_no: int) -> list[Element]:
    tables: list[Element] = []
    data = [_data(r) for r in rows]
    start = floor = 0
    while start < len(rows):
        end, resume = _body(rows, start, data)
        if end is None:
            # No body starts at any row of this run: go on after it.
            start = max(start + 1, resume)
            continue
        table = _table(rows, start, end, page_no, floor)
        if table is not None:
            tables.append(table)
            floor = end
        start = end
    return tables


def _data(row: list[Line]) -> bool:
    return len(row) >= 2 and any(_number(ln.text) for ln in row[1:]) and not _rule_row(row)


def _rule_row(row: list[Line]) -> bool:
    return all(_rule(ln.text) for ln in row)


def _height(row: list[Line]) -> float:
    return max(ln.height for ln in row)


def _gap(upper: list[Line], lower: list[Line]) -> float:
    return min(ln.bbox[1] for ln in lower) - max(ln.bbox[3] for ln in upper)


def _body(rows: list[list[Line]], start: int, data: list[bool]) -> tuple[int | None, int]:
    """Return where the table body starting at ``rows[start]`` ends, and where the scan stopped.

    The end is exclusive, None when no body starts there; ``data`` tells which rows
    are data rows.
    The body starts at a data row; it takes data rows, rule rows, stub rows (one
    piece in the first column) and sub-header rows (two or more pieces, followed by
    a data row). It stops at a wide gap, at prose, or at a blank line followed by a
    row that is neither data nor a stub (the next table's header).
    """
    first = rows[start]
    if not data[start]:
        return None, start + 1
    end = start + 1
    n_data = 1
    i = start + 1
    blank: int | None = None  # the last row after a blank line
    base: float | None = None  # the narrowest gap between rows so far
    while i < len(rows):
        row, prev = rows[i], rows[i - 1]
        gap = _gap(prev, row)
        if gap > MAX_ROW_GAP * _height(row):
            break
        base = gap if base is None else min(base, gap)
        if gap > base + BLANK_LINE * _height(row):
            blank = i
        if _rule_row(row) and blank is not None and i - blank <= MAX_HEADER_ROWS:
            # A header ruled off after a blank line: the next table starts there.
            end = min(end, blank)
            break
        stub = _stub(row, first) or _continuation(row, first)
        if data[i]:
            n_data += 1
            i += 1
            end = i
            continue
        if blank == i and not stub:
            break  # a blank line, then the next table's header or prose
        if _rule_row(row) or stub:
            i += 1
            continue
        if len(row) >= 2 and i + 1 < len(rows) and data[i + 1]:
            i += 1  # a sub-header inside the table
            continue
        break
    return (end if n_data >= MIN_ROWS else None), i


def _stub(row: list[Line], first: list[Line]) -> bool:
    """One piece in the label column: a group label or a wrapped label's first line."""
    if len(row) != 1:
        return False
    piece, em = row[0], first[0].size
    return (
        abs(piece.bbox[0] - first[0].bbox[0]) <= 3 * em and piece.bbox[2] < first[1].bbox[0] + em
    ) or (
        # Right to left: the labels are the last column.
        abs(piece.bbox[2] - first[-1].bbox[2]) <= 3 * em and piece.bbox[0] > first[-2].bbox[2] - em
    )


def _continuation(row: list[Line], first: list[Line]) -> bool:
    """Tell whether a row is one piece starting where a later column of ``first`` starts.

    That is a wrapped cell line, or one of the values listed under a field's
    description ("0 = no penalty").
    """
    if len(row) != 1 or row[0].bold:
        return False
    x0, em = row[0].bbox[0], row[0].size
    return any(abs(x0 - p.bbox[0]) <= em for p in first[1:])


def _columns(rows: list[list[Line]]) -> list[tuple[float, float]]:
    """Column x-ranges: the x-ranges the rows cover, cut where white space runs down."""
    # How many rows cover each x (whole points): +1 where a row's merged pieces
    # start, -1 after they end, swept left to right.
    events: dict[int, int] = {}
    for row in rows:
        spans: list[list[int]] = []
        for a, b in sorted((int(ln.bbox[0]), int(ln.bbox[2])) for ln in row):
            if spans and a <= spans[-1][1] + 1:
                spans[-1][1] = max(spans[-1][1], b)
            else:
                spans.append([a, b])
        for a, b in spans:
            events[a] = events.get(a, 0) + 1
            events[b + 1] = events.get(b + 1, 0) - 1
    stray = len(rows) // 10
    cols: list[tuple[float, float]] = []
    depth, opened = 0, None
    for x in sorted(events):
        depth += events[x]
        if depth > stray and opened is None:
            opened = x
        elif depth <= stray and opened is not None:
            cols.append((float(opened), float(x - 1)))
            opened = None
    # A few long cells (the row labels that wrap least) reach into the gap the
    # stray allowance opened: the column extends over them, short of the next one.
    wide = [list(c) for c in cols]
    for ln in (ln for row in rows for ln in row):
        i = _column_of(ln, cols)
        wide[i][0] = min(wide[i][0], ln.bbox[0])
        wide[i][1] = max(wide[i][1], ln.bbox[2])
    for i in range(len(wide)):
        if i > 0:
            wide[i][0] = max(wide[i][0], wide[i - 1][1] + 1, cols[i - 1][1] + 1)
        if i + 1 < len(wide):
            wide[i][1] = min(wide[i][1], cols[i + 1][0] - 1)
    return [(a, b) for a, b in wide]


def _column_of(piece: Line, cols: list[tuple[float, float]]) -> int:
    x0, x1 = piece.bbox[0], piece.bbox[2]
    best, best_overlap = 0, -1e9
    for i, (a, b) in enumerate(cols):
        overlap = min(x1, b) - max(x0, a)
        if overlap > 0:
            return i  # a spanning piece keeps its text in its first column
        if overlap > best_overlap:
            best, best_overlap = i, overlap
    return best


def _header_rows(rows: list[list[Line]], start: int, cols: list[tuple[float, float]]) -> int:
    """How many rows right above ``rows[start]`` are the table's header."""
    left, right = cols[0][0], cols[-1][1]
    tops = [r[0].bbox[1] for r in rows[start : start + 6]]
    steps = sorted(b - a for a, b in zip(tops, tops[1:], strict=False))
    pitch = steps[len(steps) // 2] if steps else 0.0
    n = 0
    while n < MAX_HEADER_ROWS and start - n - 1 >= 0:
        row, below = rows[start - n - 1], rows[start - n]
        em = row[0].size
        # A header is often set off from the body by a blank line or two, not
        # from its own other rows.
        reach = max(3 * _height(row), 2 * pitch) if n == 0 else 1.5 * _height(row)
        if _gap(row, below) > reach:
            break
        # Labels may stick out of narrow columns ("LINE" over "14"); a title
        # or a note on its own runs further.
        reach = (2 if len(row) == 1 else 4) * em
        if _data(row) or any(ln.bbox[0] < left - reach or ln.bbox[2] > right + reach for ln in row):
            break
        # Text starting in the first column and running over its end: a title or
        # a headnote (a spanning header starts over the later columns).
        if any(ln.bbox[0] < cols[0][1] and ln.bbox[2] > cols[0][1] + 2 * em for ln in row):
            break
        # Text over no column, between the label column and the first data column:
        # the second line of a title set after its number ("Table 17.  Actual and
        # projected ... / school: Fall 1996"). A header centred over two data
        # columns may sit in the gap between them.
        if any(cols[0][1] < ln.bbox[0] and ln.bbox[2] < cols[1][0] for ln in row):
            break
        n += 1
    if n > 0 and start - n - 1 >= 0:
        # The top "header" row is the last line of the paragraph above it.
        above, top = rows[start - n - 1], rows[start - n]
        if (
            len(top) == len(above) == 1
            and abs(top[0].bbox[0] - above[0].bbox[0]) < top[0].size
            and _gap(above, top) < 0.5 * _height(top)
        ):
            n -= 1
    return n


def _table(
    rows: list[list[Line]], start: int, end: int, page_no: int, floor: int = 0
) -> Element | None:
    """Build the table whose body runs from ``rows[start]`` to ``end``.

    Rows above ``floor`` belong to the table before it.
    """
    body = rows[start:end]
    data = [r for r in body if _data(r) or (_rule_row(r) and len(r) >= 2)]
    cols = _columns(data)
    if len(cols) < MIN_COLS:
        return None
    # Continuation lines right above the first data row (a row wrapped over from
    # the previous page, values listed under a description) belong to the body.
    first = rows[start]
    while (
        start > floor
        and _continuation(rows[start - 1], first)
        and _gap(rows[start - 1], rows[start]) <= MAX_ROW_GAP * _height(rows[start])
    ):
        start -= 1
    n_head = _header_rows(rows, start, cols)
    grid: list[list[str]] = []
    pieces: list[Line] = []
    for row in rows[start - n_head : end]:
        if _rule_row(row):
            continue
        cells = [""] * len(cols)
        for ln in row:
            c = _column_of(ln, cols)
            cells[c] = f"{cells[c]} {ln.text}".strip()
        grid.append(cells)
        pieces.extend(row)
    # Rows above a rule row near the top of the body are header rows too
    # ("Proportion 1.0 1.1" over "--------").
    body = rows[start:end]
    for k, row in enumerate(body[: MAX_HEADER_ROWS + 1]):
        if _rule_row(row):
            n_head += sum(1 for r in body[:k] if not _rule_row(r))
            break
    else:
        n_head += _leading_headers(grid[n_head:])
    body_rows = grid[n_head:]
    if sum(1 for r in body_rows if sum(1 for c in r if c) >= MIN_COLS) < MIN_ROWS:
        return None
    if not _has_data_column(body_rows):
        return None
    if drawn_in_text(grid):
        return None
    return table_from_lines(pieces, tuple(tuple(r) for r in grid), n_head, page_no)


def _kind(cell: str) -> tuple[bool, ...] | None:
    """Return the shape of a figure (thousands separator, decimals, percent), None for text."""
    if not _numberish(cell):
        return None
    return ("," in cell, "." in cell, "%" in cell)


def _leading_headers(rows: list[list[str]]) -> int:
    """How many leading rows are headers set like data ("2019 2020 2021" over "13,278").

    A leading row is a header when most of its cells after the first are foreign to
    their column: text over figures, or figures of a shape (separators, decimals)
    no other cell of the column has.
    """
    n = 0
    while n < min(MAX_HEADER_ROWS, len(rows) - MIN_ROWS):
        row = rows[n]
        filled = [c for c in range(1, len(row)) if row[c]]
        foreign = 0
        for c in filled:
            kinds = {_kind(r[c]) for r in rows[n + 1 :] if r[c]}
            foreign += _kind(row[c]) not in kinds and any(k is not None for k in kinds)
        if len(filled) < 2 or foreign < DATA_SHARE * len(filled):
            break
        n += 1
    return n


def _has_data_column(rows: list[list[str]]) -> bool:
    for c in range(1, len(rows[0])):
        filled = [r[c] for r in rows if r[c]]
        numbers = sum(1 for t in filled if _figure(t))
        numberish = sum(1 for t in filled if _numberish(t))
        if numbers >= MIN_ROWS and numberish >= DATA_SHARE * len(filled):
            return True
    return False

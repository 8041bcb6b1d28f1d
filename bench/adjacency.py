"""The ICDAR 2013 table-structure measure: adjacency relations between neighbouring cells.

The table competition of ICDAR 2013 (Göbel, Hassan, Oro, Orsi) scores a table's
structure by the *adjacency relations* of its cells rather than by its grid, so that
an extra empty column or a shifted row index costs nothing while a split, merged or
misplaced cell does:

- every non-empty cell is related to its nearest non-empty neighbour to the right
  (horizontal) and below (vertical), blank cells skipped;
- a cell spanning several rows or columns is related to each neighbour along its
  side (a header over six columns has six relations down);
- a relation is the pair of its cells' normalised texts and its direction; the
  relations of a table are a set over its cells (a spanning cell beside the same
  neighbour in two rows is one relation);
- precision is the share of a system's relations found in the ground truth,
  recall the share of the ground truth's found in the system's (multisets of text
  triples), per document.

Which predicted tables are compared (the competition's structure task gives the
table regions; here the systems find their own): on each page, those whose cell
tokens lie mostly (``MIN_SHARE``) inside the page's ground-truth tables; relations are
pooled per page, so a table split in two or two tables merged into one are compared
as they are. Table detection itself is scored by :func:`bench.scoring.match_tables`.

A grid given as rows of texts (a system's output, or ground truth without span
data) states spans by repeating the text over the covered positions; a run of equal
texts that are not figures is read as one spanning cell (:func:`grid_cells`).
Pure functions of :mod:`bench.groundtruth` and :mod:`bench.views` records.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from bench.groundtruth import GtCell, GtTable
from bench.normalize import cell_tokens, has_rtl
from bench.views import Item

#: A predicted table is compared when this share of its distinct tokens lies in the
#: ground-truth tables of its page.
MIN_SHARE = 0.5

#: Directions of a relation: to the right, and down.
RIGHT, DOWN = "h", "v"

Relation = tuple[str, str, str]

_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def cell_key(text: str) -> str:
    """Return the comparable form of a cell's text ("" for a blank cell).

    Line breaks written as ``<br>`` are spaces; :func:`~bench.normalize.cell_tokens`
    then applies (in a right-to-left cell the words are sorted, as visual and logical
    order list them differently). A cell of punctuation only ("-", "…", "—") keeps
    its NFKC text, so a placeholder is a cell, not a blank.
    """
    text = _BREAK.sub(" ", text)
    toks = cell_tokens(text)
    if toks:
        return " ".join(sorted(toks) if has_rtl(text) else toks)
    return "".join(unicodedata.normalize("NFKC", text).split())


def grid_cells(rows: Sequence[Sequence[str]]) -> list[GtCell]:
    """Return the cells of a grid of texts, runs of one repeated text read as spans.

    A run of equal non-empty texts along a row (then, for cells of equal column
    extent, down a column) is one spanning cell. Figures too: a value spanning two
    rows is written twice, and two equal values side by side lose only the one
    relation between them when read as one cell.
    """
    cells: list[GtCell] = []
    for r, row in enumerate(rows):
        c = 0
        while c < len(row):
            text = row[c]
            end = c + 1
            if cell_key(text):
                while end < len(row) and row[end] == text:
                    end += 1
            cells.append(GtCell(r, c, text, 1, end - c))
            c = end
    # Vertical runs: the same text over the same columns in consecutive rows.
    by_place = {(cell.row, cell.col, cell.col_span): cell for cell in cells}
    merged: list[GtCell] = []
    absorbed: set[tuple[int, int, int]] = set()
    for cell in cells:
        place = (cell.row, cell.col, cell.col_span)
        if place in absorbed:
            continue
        span = 1
        if cell_key(cell.text):
            while True:
                below = by_place.get((cell.row + span, cell.col, cell.col_span))
                if below is None or below.text != cell.text:
                    break
                absorbed.add((below.row, below.col, below.col_span))
                span += 1
        merged.append(GtCell(cell.row, cell.col, cell.text, span, cell.col_span))
    return merged


def relations(cells: Sequence[GtCell]) -> Counter[Relation]:
    """Return the adjacency relations of a table's cells, as text triples with counts.

    Blank cells (empty :func:`cell_key`) take no part; each pair of distinct cells
    that are nearest non-blank neighbours along some row (``RIGHT``) or column
    (``DOWN``) is one relation. Where cells overlap, the first listed holds the place.
    """
    owner: dict[tuple[int, int], int] = {}
    keys = [cell_key(c.text) for c in cells]
    for i, cell in enumerate(cells):
        if not keys[i]:
            continue
        for r in range(cell.row, cell.row + max(1, cell.row_span)):
            for c in range(cell.col, cell.col + max(1, cell.col_span)):
                owner.setdefault((r, c), i)
    pairs: set[tuple[int, int, str]] = set()
    lines: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for (r, c), i in owner.items():
        lines[(RIGHT, r)].append((c, i))
        lines[(DOWN, c)].append((r, i))
    for (direction, _), members in lines.items():
        members.sort()
        for (_, a), (_, b) in zip(members, members[1:], strict=False):
            if a != b:
                pairs.add((a, b, direction))
    return Counter((keys[a], keys[b], d) for a, b, d in pairs)


def gt_relations(table: GtTable) -> Counter[Relation]:
    """Return a ground-truth table's relations (its stated spans, else its grid)."""
    if table.spanned:
        return relations(table.spanned)
    return relations(grid_cells(header_spans(table.grid)))


_NUMERIC = re.compile(r"^[\W_]*\d[\d\W_]*$")


def header_spans(rows: Sequence[Sequence[str]]) -> list[list[str]]:
    """Return a ground-truth grid with its header labels written over their spans.

    A grid without span data puts a spanning label's text in the first cell of its
    span and leaves the others blank (``corpus-extra/README.md``). In the header
    (the rows before the first with two figures) a blank right of a label, over a
    column whose next row has text, is read as covered by that label.
    """
    out = [list(r) for r in rows]
    for r in range(len(out) - 1):
        if sum(1 for c in out[r] if _NUMERIC.match(c.strip())) >= 2:
            break
        label = ""
        for c, text in enumerate(out[r]):
            below = out[r + 1][c] if c < len(out[r + 1]) else ""
            if text:
                label = text
            elif label and below:
                out[r][c] = label
            else:
                label = ""
    return out


@dataclass(frozen=True)
class AdjacencyScore:
    """Adjacency relations on one document, and its spanning headers.

    ``tp`` relations found in both, ``n_pred`` the system's (of the tables compared),
    ``n_gt`` the ground truth's. ``spans`` counts ground-truth cells spanning columns,
    ``spans_ok`` those the system spans over exactly the same cells below.
    """

    tp: int
    n_pred: int
    n_gt: int
    spans_ok: int = 0
    spans: int = 0

    @property
    def precision(self) -> float:
        """Share of the system's relations that the ground truth holds (0 with none)."""
        return self.tp / self.n_pred if self.n_pred else 0.0

    @property
    def recall(self) -> float:
        """Share of the ground truth's relations that the system holds."""
        return self.tp / self.n_gt if self.n_gt else 0.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall (0 when both are 0)."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def _paged(pred: Sequence[Item], gt: Sequence[GtTable]) -> bool:
    """Tell whether both sides number the pages of their tables."""
    return all(t.page is not None for t in gt) and all(
        i.page is not None for i in pred if i.kind == "table"
    )


def compared_tables(pred: Sequence[Item], gt: Sequence[GtTable]) -> dict[int | None, list[Item]]:
    """Return the predicted tables compared with the ground truth, by page.

    A table is compared when at least :data:`MIN_SHARE` of its distinct tokens lie in
    the ground-truth tables of its page (of the document, where either side has no
    page numbers, as for DOCX).
    """
    paged = _paged(pred, gt)
    vocab: dict[int | None, set[str]] = defaultdict(set)
    for t in gt:
        vocab[t.page if paged else None].update(cell_tokens(" ".join(t.cells)))
    out: dict[int | None, list[Item]] = defaultdict(list)
    for item in pred:
        if item.kind != "table" or not item.rows:
            continue
        page = item.page if paged else None
        mine = set(cell_tokens(" ".join(c for r in item.rows for c in r)))
        if mine and len(mine & vocab.get(page, set())) >= MIN_SHARE * len(mine):
            out[page].append(item)
    return out


def score_adjacency(pred: Sequence[Item], gt: Sequence[GtTable]) -> AdjacencyScore:
    """Score a document's predicted tables against its ground-truth tables.

    Relations are pooled per page (see :func:`compared_tables`); a page's ground
    truth with no compared table counts as all missed.
    """
    compared = compared_tables(pred, gt)
    paged = _paged(pred, gt)
    gt_by_page: dict[int | None, list[GtTable]] = defaultdict(list)
    for t in gt:
        gt_by_page[t.page if paged else None].append(t)
    tp = n_pred = n_gt = spans_ok = spans = 0
    for page in set(gt_by_page) | set(compared):
        want: Counter[Relation] = Counter()
        for t in gt_by_page.get(page, []):
            want += gt_relations(t)
        got: Counter[Relation] = Counter()
        for item in compared.get(page, []):
            got += relations(grid_cells(item.rows or ()))
        tp += sum((want & got).values())
        n_pred += sum(got.values())
        n_gt += sum(want.values())
        ok, n = _span_check(gt_by_page.get(page, []), got)
        spans_ok += ok
        spans += n
    return AdjacencyScore(tp, n_pred, n_gt, spans_ok, spans)


def _span_check(gt: Sequence[GtTable], got: Counter[Relation]) -> tuple[int, int]:
    """Count ground-truth cells spanning columns, and those the system spans the same.

    A spanning cell is right when the cells right below it (its ``DOWN`` relations)
    are the same in the system's relations, no more and no fewer.
    """
    below: dict[str, Counter[str]] = defaultdict(Counter)
    for (a, b, d), n in got.items():
        if d == DOWN:
            below[a][b] += n
    ok = total = 0
    for t in gt:
        cells = list(t.spanned) or grid_cells(t.grid)
        rels = relations(cells)
        for cell in cells:
            key = cell_key(cell.text)
            if cell.col_span < 2 or not key:
                continue
            total += 1
            want = Counter({b: n for (a, b, d), n in rels.items() if a == key and d == DOWN})
            ok += bool(want) and below.get(key) == want
    return ok, total

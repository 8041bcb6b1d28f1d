"""The verdict on a table candidate: cells, or running text set in columns.

Every detector finds rows whose pieces line up across columns. Running text set
in two or three columns lines up the same way (a newspaper, the Federal Register,
a two-column paper: each visual row holds one line of each column), and read as
a table it interleaves the columns line by line. What tells them apart is what
the cells hold: a table's cells are short (a label, a figure, a few words) and
each stands alone; a column of running text holds full lines of words whose
sentences run from one row into the next.

A column is a *text column* (:func:`text_column`) when its filled cells hold
:data:`MIN_WORDS` words or more (the median) and either a sentence runs on from
cell to cell (:data:`FLOW_SHARE` of consecutive pairs: the upper cell ends mid
sentence and the lower one starts in lower case, or the upper one breaks a word).
Long cells alone are no evidence: a ruled table's cells may hold whole paragraphs,
but each ends where its cell does. :func:`verdict` weighs a candidate:

- text columns are at least :data:`TEXT_SHARE` of its columns, and two or more:
  running text, not a table;
- no text column: a table;
- in between (a table with one column of descriptions, or prose whose other
  columns read choppy): the layout model decides where it ran on the page
  (``model``: the share of the candidate's area the model calls a table, or
  calls text), otherwise the candidate stands.

Where the model ran, a candidate it covers with a table box by :data:`MODEL_SURE`
stands. The cascade (:func:`~chunkweave.parsers.pdf.tables.find_tables`) judges
every candidate on its cells alone, before any model runs, so the heuristic route
pays only a pass over the cells; the model route then lets the model's classes
vote on the doubtful candidates left (``chunkweave.parsers.pdf.page``), and
rebuilds in its table boxes the tables no detector kept
(:func:`~chunkweave.parsers.pdf.tables.model_tables`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.geometry import BBox
from chunkweave.parsers.pdf.headings.runon import ends_broken

#: A text column's cells hold at least this many words (median).
MIN_WORDS = 4
#: Share of a column's consecutive cell pairs through which a sentence runs on.
FLOW_SHARE = 0.3
#: Share of a candidate's columns that are text columns for running text.
TEXT_SHARE = 0.5
#: A column needs this many filled cells to be judged.
MIN_CELLS = 3
#: Share of a candidate's area inside the model's table (or text) boxes for its vote.
MODEL_SURE = 0.5

_CLOSING = (".", "!", "?", ":", ";")
#: Layout-model classes of running text (the model's names).
TEXT_CLASSES = frozenset({"text", "list-item", "section-header", "title", "footnote"})


@dataclass(frozen=True)
class Reading:
    """What a candidate's cells say: how many columns were judged, how many are text."""

    columns: int
    text_columns: int

    @property
    def running_text(self) -> bool:
        """Two or more text columns, at least :data:`TEXT_SHARE` of the columns judged."""
        return self.text_columns >= 2 and self.text_columns >= TEXT_SHARE * self.columns

    @property
    def doubtful(self) -> bool:
        """Some text column, but not enough for running text."""
        return self.text_columns > 0 and not self.running_text


def _runs_on(upper: str, lower: str) -> bool:
    upper, lower = upper.rstrip(), lower.lstrip()
    if ends_broken(upper):
        return True
    first = next((c for c in lower if c.isalpha()), "")
    return not upper.endswith(_CLOSING) and first.islower()


def text_column(cells: Sequence[str]) -> bool:
    """Return True when a column's filled ``cells`` (top to bottom) read as running text."""
    filled = [c for c in cells if c.strip()]
    if len(filled) < MIN_CELLS:
        return False
    words = [len(c.split()) for c in filled]
    if median(words) < MIN_WORDS:
        return False
    pairs = list(zip(filled, filled[1:], strict=False))
    flow = sum(_runs_on(a, b) for a, b in pairs) / len(pairs)
    return flow >= FLOW_SHARE


def read_cells(rows: Sequence[Sequence[str]]) -> Reading:
    """Return the :class:`Reading` of a grid of cell texts (header rows included)."""
    width = max((len(r) for r in rows), default=0)
    columns = [[r[j] if j < len(r) else "" for r in rows] for j in range(width)]
    judged = [c for c in columns if sum(1 for t in c if t.strip()) >= MIN_CELLS]
    return Reading(len(judged), sum(1 for c in judged if text_column(c)))


def _covered(box: BBox, regions: Sequence[tuple[BBox, str]], labels: frozenset[str]) -> float:
    """Share of ``box``'s area inside the regions whose label is in ``labels``."""
    x0, y0, x1, y1 = box
    area = max((x1 - x0) * (y1 - y0), 1e-6)
    inside = 0.0
    for (a0, b0, a1, b1), label in regions:
        if label in labels:
            inside += max(0.0, min(x1, a1) - max(x0, a0)) * max(0.0, min(y1, b1) - max(y0, b0))
    return min(inside / area, 1.0)


def verdict(table: Element, model: Sequence[tuple[BBox, str]] | None = None) -> bool:
    """Return True when candidate ``table`` stands as a table (see the module docstring).

    ``model``: the layout model's regions of the page as ``(bbox, class)`` pairs,
    where it ran (None where it did not).
    """
    reading = read_cells(table.rows or ())
    if not reading.text_columns:
        return True
    if model is not None and table.bbox is not None:
        if _covered(table.bbox, model, frozenset({"table"})) >= MODEL_SURE:
            return True
        if reading.doubtful:
            return _covered(table.bbox, model, TEXT_CLASSES) < MODEL_SURE
    return not reading.running_text


def standing(
    tables: Sequence[Element], model: Sequence[tuple[BBox, str]] | None = None
) -> list[Element]:
    """Return the ``tables`` that stand (:func:`verdict`), in order."""
    return [t for t in tables if verdict(t, model)]

"""Match units: the small pieces of a chunk that small-to-big retrieval searches.

Not :mod:`chunkweave.chunking.units` (chunking's internal pieces, before chunks
exist): a *match unit* is made from a finished :class:`Chunk` and points back to it.
A search matches units (a table row, a sentence window) and returns their chunks,
saying which units matched (:mod:`chunkweave.storage.weaviate.unit_search`).

- A table chunk gives one unit per data row: ``Column: value; ...`` (the row header,
  its first cell, first), with the caption and heading path in its ``embed_text``.
  ``row`` is the row's index in the whole table (``table_row_start`` + its place).
- A prose chunk longer than :data:`MIN_PROSE_WORDS` gives windows of whole
  sentences of about :data:`WINDOW_WORDS` words; ``span`` is the window's character
  span in the chunk's ``text``. A short chunk is its own best unit: it gives none.

Pure: the same chunk always gives the same units, with IDs from :func:`unit_id`
(derived from the chunk's ID, so a chunk's units change exactly when it does).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Literal

from pydantic import BaseModel, ConfigDict

from chunkweave.chunking.context import context_lines
from chunkweave.chunking.ids import sha1_hex
from chunkweave.chunking.models import Chunk, TokenCounter
from chunkweave.chunking.split import sentence_spans
from chunkweave.chunking.table_rows import CELL_SEPARATOR, LABEL_SEPARATOR

#: Bump when the units made from the same chunk change (their IDs change with it).
MATCH_UNITS_VERSION = "1"
#: Prose chunks with at most this many words give no units (the chunk is small already).
MIN_PROSE_WORDS = 60
#: Words a sentence window grows to (a longer sentence is a window of its own).
WINDOW_WORDS = 40

UnitKind = Literal["row", "sentences"]
_PIPE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_RULE = re.compile(r"^[\s|:\-]+$")


class MatchUnit(BaseModel):
    """One small piece of a chunk, searched in its place.

    ``text`` is what is stored (and keyword-searched), ``embed_text`` what is embedded
    (the context line of the chunk in front). ``row``: a table row's index in its
    table; ``span``: a sentence window's ``(start, end)`` in the chunk's ``text``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    chunk_id: str
    kind: UnitKind
    text: str
    embed_text: str
    row: int | None = None
    span: tuple[int, int] | None = None


def unit_id(chunk_id: str, kind: str, position: int, text: str) -> str:
    """SHA1 hex of a unit: its chunk's ID, kind, place in the chunk and text (pure)."""
    key = "\x1f".join(("match-unit", MATCH_UNITS_VERSION, chunk_id, kind, str(position), text))
    return sha1_hex(key)


def match_units(
    chunks: Iterable[Chunk], counter: TokenCounter | None = None, max_tokens: int | None = None
) -> Iterator[MatchUnit]:
    """Yield the units of every chunk, chunk by chunk, in order within each.

    With ``counter`` and ``max_tokens`` no unit's ``embed_text`` is longer than
    ``max_tokens``: one that would be loses its context line, then its last words
    (its stored ``text`` stays whole).
    """
    for chunk in chunks:
        if chunk.type == "table":
            units = _row_units(chunk)
        elif chunk.type in ("text", "list", "section"):
            units = _sentence_units(chunk)
        else:
            continue
        for unit in units:
            yield unit if counter is None or max_tokens is None else _fit(unit, counter, max_tokens)


def _fit(unit: MatchUnit, counter: TokenCounter, max_tokens: int) -> MatchUnit:
    """Return ``unit`` with an ``embed_text`` of at most ``max_tokens`` tokens."""
    if counter.count(unit.embed_text) <= max_tokens:
        return unit
    words = unit.text.split()
    text = unit.text
    while words and counter.count(text) > max_tokens:
        words = words[: max(1, int(len(words) * 0.85))] if len(words) > 1 else []
        text = " ".join(words)
    return unit.model_copy(update={"embed_text": text})


def _context(chunk: Chunk) -> str:
    """Return the context lines in front of the chunk's text in its ``embed_text`` (or "")."""
    at = chunk.embed_text.find(chunk.text[:200]) if chunk.text else -1
    return chunk.embed_text[:at].strip() if at > 0 else ""


def _cells(line: str) -> list[str] | None:
    found = _PIPE_ROW.match(line)
    if found is None:
        return None
    return [" ".join(c.split()) for c in found.group(1).split("|")]


def table_rows(markdown: str) -> tuple[list[str], list[list[str]]]:
    """Return the column labels and data rows of the first Markdown pipe table."""
    labels: list[str] = []
    rows: list[list[str]] = []
    header_done = False
    for line in markdown.splitlines():
        cells = _cells(line)
        if cells is None:
            if rows or header_done:
                break
            continue
        if _RULE.match(line):
            header_done = True
            continue
        if not header_done and not labels:
            labels = cells
        else:
            rows.append(cells)
    if labels and not header_done:  # no rule line: the first row was data
        rows.insert(0, labels)
        labels = []
    return labels, rows


def _row_line(labels: list[str], cells: list[str]) -> str:
    parts = []
    for col, cell in enumerate(cells):
        if not cell:
            continue
        label = labels[col] if col < len(labels) else ""
        parts.append(f"{label}{LABEL_SEPARATOR}{cell}" if label and label != cell else cell)
    return CELL_SEPARATOR.join(parts)


def _row_units(chunk: Chunk) -> Iterator[MatchUnit]:
    labels, rows = table_rows(chunk.table_markdown or chunk.text)
    # A table chunk may embed its rows, not its text: its context is rebuilt.
    context = "\n".join(context_lines(None, chunk.heading_path, chunk.caption))
    first = chunk.table_row_start or 0
    for i, cells in enumerate(rows):
        line = _row_line(labels, cells)
        if not line:
            continue
        row = first + i
        yield MatchUnit(
            id=unit_id(chunk.id, "row", row, line),
            chunk_id=chunk.id,
            kind="row",
            text=line,
            embed_text=f"{context}\n{line}" if context else line,
            row=row,
        )


def _sentence_units(chunk: Chunk) -> Iterator[MatchUnit]:
    text = chunk.text
    if len(text.split()) <= MIN_PROSE_WORDS:
        return
    context = _context(chunk)
    window: list[tuple[int, int]] = []
    words = 0
    for start, end in sentence_spans(text):
        n = len(text[start:end].split())
        if window and words + n > WINDOW_WORDS:
            yield _window(chunk, context, window[0][0], window[-1][1])
            window, words = [], 0
        window.append((start, end))
        words += n
    if window:
        yield _window(chunk, context, window[0][0], window[-1][1])


def _window(chunk: Chunk, context: str, start: int, end: int) -> MatchUnit:
    piece = chunk.text[start:end]
    return MatchUnit(
        id=unit_id(chunk.id, "sentences", start, piece),
        chunk_id=chunk.id,
        kind="sentences",
        text=piece,
        embed_text=f"{context}\n{piece}" if context else piece,
        span=(start, end),
    )

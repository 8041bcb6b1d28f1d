"""The Element model: the only thing parsers emit.

An element is one typed unit of a document in reading order: a heading, a
paragraph, a list item, a table, a caption, a figure, running furniture and so on.
Downstream stages (chunking, storage) read nothing else from the parsers.
"""

from __future__ import annotations

import html
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ElementType = Literal[
    "title",
    "heading",
    "paragraph",
    "list_item",
    "table",
    "caption",
    "figure",
    "code",
    "formula",
    "footnote",
    "page_header",
    "page_footer",
]

#: Element types that are page furniture, left out of chunks by default.
FURNITURE_TYPES: frozenset[str] = frozenset({"page_header", "page_footer"})

#: Element types that open a section (their text becomes part of the heading path).
HEADING_TYPES: frozenset[str] = frozenset({"title", "heading"})

BBox = tuple[float, float, float, float]


class Element(BaseModel):
    """One typed element of a document, in reading order.

    Fields:
    - ``type``: what the element is (see ``ElementType``).
    - ``text``: its plain text; for tables the cells joined row by row (tab between
      cells, newline between rows), so text search and fidelity scoring see the cells.
    - ``level``: heading level (1 = top) for headings/titles; nesting depth
      (1 = top) for list items; ``None`` otherwise.
    - ``page``: 1-based page number, ``None`` where the format has no pages.
    - ``bbox``: ``(x0, y0, x1, y1)`` in PDF points (origin top-left); ``None`` for DOCX.
    - ``continued``: for a text joined across a column or page break, the page and box
      of each later part (``page`` and ``bbox`` are the first part's); empty otherwise.
    - ``heading_path``: texts of the enclosing headings, outermost first (a heading's
      own path excludes itself).
    - ``rows`` / ``header_rows``: table cells as rows of strings and how many leading
      rows are header rows (tables only).
    - ``order``: 0-based index in the document's reading order, unique and increasing.
    - ``ref``: for captions, the ``order`` of the table or figure they describe
      (linked by adjacency: the nearest table/figure directly before or after); for
      a heading that is also a table's caption ("Table 3. ..." set as a heading),
      that table's ``order``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: ElementType
    text: str
    level: int | None = Field(default=None, ge=1)
    page: int | None = Field(default=None, ge=1)
    bbox: BBox | None = None
    continued: tuple[tuple[int, BBox], ...] = ()
    heading_path: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] | None = None
    header_rows: int = Field(default=0, ge=0)
    order: int = Field(ge=0)
    ref: int | None = None

    @property
    def is_furniture(self) -> bool:
        """True for running page headers and footers."""
        return self.type in FURNITURE_TYPES

    @property
    def is_heading(self) -> bool:
        """True for titles and headings."""
        return self.type in HEADING_TYPES


def _md_cell(cell: str) -> str:
    # Pipes and newlines would break the Markdown table grid.
    return cell.replace("|", "\\|").replace("\r", " ").replace("\n", " ").strip()


def table_to_markdown(rows: tuple[tuple[str, ...], ...], header_rows: int = 1) -> str:
    """Render table rows as a GitHub-flavoured Markdown table (see :func:`markdown_lines`)."""
    return "\n".join(markdown_lines(rows, header_rows))


def markdown_lines(rows: tuple[tuple[str, ...], ...], header_rows: int = 1) -> list[str]:
    """Return the lines of :func:`table_to_markdown`: header, separator, one per data row.

    The first ``max(header_rows, 1)`` rows form the header (several header rows are
    joined cell by cell with " / ", as Markdown has a single header line). Ragged
    rows are padded with empty cells. No line contains a newline. Returns ``[]``
    for a table with no rows.
    """
    if not rows:
        return []
    width = max(len(r) for r in rows)
    padded = [tuple(r) + ("",) * (width - len(r)) for r in rows]
    n_head = min(max(header_rows, 1), len(padded))
    head_cells = []
    for col in range(width):
        parts: list[str] = []
        for r in padded[:n_head]:
            cell = _md_cell(r[col])
            if cell and (not parts or parts[-1] != cell):
                parts.append(cell)
        head_cells.append(" / ".join(parts))
    lines = ["| " + " | ".join(head_cells) + " |", "|" + "---|" * width]
    for r in padded[n_head:]:
        lines.append("| " + " | ".join(_md_cell(c) for c in r) + " |")
    return lines


def table_to_html(rows: tuple[tuple[str, ...], ...], header_rows: int = 1) -> str:
    """Render table rows as a minimal HTML ``<table>``; header rows use ``<th>``."""
    return "<table>" + "".join(html_rows(rows, header_rows)) + "</table>"


def html_rows(rows: tuple[tuple[str, ...], ...], header_rows: int = 1) -> list[str]:
    """Return the ``<tr>`` elements of :func:`table_to_html`, one per row.

    Each row renders independently of the others, so the HTML of any selection of
    rows is ``<table>`` + their elements + ``</table>``.
    """
    out = []
    for i, row in enumerate(rows):
        tag = "th" if i < header_rows else "td"
        # One join per row (chunking renders every table chunk's HTML with this).
        between = f"</{tag}><{tag}>"
        cells = f"<{tag}>{between.join(map(html.escape, row))}</{tag}>" if row else ""
        out.append(f"<tr>{cells}</tr>")
    return out


def table_text(rows: tuple[tuple[str, ...], ...]) -> str:
    """Plain text of a table: cells joined by tabs, rows by newlines."""
    return "\n".join("\t".join(c for c in row) for row in rows)


def table_element(
    rows: tuple[tuple[str, ...], ...],
    header_rows: int,
    *,
    page: int | None,
    bbox: BBox | None = None,
) -> Element:
    """Return the ``table`` element of ``rows``, its text laid out by :func:`table_text`.

    ``rows`` is rectangular and not empty; ``order`` is left at 0 for ``finalize`` to
    number. Every table detector and backend builds its tables here.
    """
    return Element(
        type="table",
        text=table_text(rows),
        rows=rows,
        header_rows=header_rows,
        page=page,
        bbox=bbox,
        order=0,
    )

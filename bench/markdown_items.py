"""Markdown and HTML tables as items, the way a reader of a peer's Markdown would see them.

Pure (no peer library): the peers that return Markdown (pymupdf4llm) or HTML tables
(unstructured) are reduced to :class:`bench.views.Item` here.
"""

from __future__ import annotations

import html.parser
import re

from bench.views import Item


def markdown_items(md: str, page: int | None = None) -> list[Item]:
    """Split Markdown into items, the way a reader of a peer's Markdown would.

    ``#`` lines become headings (level = number of ``#``); runs of pipe-table lines
    become one table; fenced code blocks and other blocks become text (a ``#`` inside a
    code fence is a comment, not a heading). Bold-only lines are not promoted to
    headings: a heading must be marked as one.
    """
    items: list[Item] = []
    para: list[str] = []
    table: list[str] = []
    in_code = False

    def flush_para() -> None:
        if para:
            items.append(Item("text", " ".join(para), page=page))
            para.clear()

    def flush_table() -> None:
        if table:
            rows = pipe_table_rows(table)
            if rows:
                text = "\n".join("\t".join(r) for r in rows)
                items.append(Item("table", text, page=page, rows=rows))
            table.clear()

    for line in md.splitlines():
        s = line.strip()
        if s.startswith("```"):
            flush_table()
            flush_para()
            in_code = not in_code
            continue
        if in_code:
            para.append(s)
            continue
        if s.startswith("|"):
            flush_para()
            table.append(s)
            continue
        flush_table()
        m = re.match(r"^(#{1,6})\s+(.*)$", s)
        if m:
            flush_para()
            items.append(Item("heading", m.group(2).strip(), level=len(m.group(1)), page=page))
        elif not s:
            flush_para()
        else:
            para.append(s)
    flush_para()
    flush_table()
    return items


def pipe_table_rows(lines: list[str]) -> tuple[tuple[str, ...], ...]:
    """Return the rows of a Markdown pipe table (separator rows dropped, escaped pipes kept)."""
    rows: list[tuple[str, ...]] = []
    for line in lines:
        body = line.strip()
        if body.startswith("|"):
            body = body[1:]
        if body.endswith("|") and not body.endswith("\\|"):
            body = body[:-1]
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]
        if any(cells) and all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            continue
        rows.append(tuple(cells))
    return tuple(rows)


class _HtmlTable(html.parser.HTMLParser):
    """Collect the cell texts of the first-level rows of an HTML table."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_table_rows(markup: str) -> tuple[tuple[str, ...], ...]:
    """Return the rows of an HTML table as cell strings (spans are not expanded)."""
    parser = _HtmlTable()
    parser.feed(markup)
    return tuple(tuple(r) for r in parser.rows if r)

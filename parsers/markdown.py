"""A parsed document as readable Markdown (`chunkweave parse --format md`, the naive baseline)."""

from __future__ import annotations

from chunkweave.parsers.document import ParsedDocument
from chunkweave.parsers.elements import Element, table_to_markdown


def to_markdown(doc: ParsedDocument, page_markers: bool = False) -> str:
    """Render a parsed document as readable Markdown.

    Titles and headings become ``#`` lines (title ``#``, heading level L ``#`` * (L+1)),
    list items indented bullets, tables pipe tables, code fenced blocks, formulas
    ``$$`` blocks, figures an image placeholder with the alt text. Page furniture is
    left out. With ``page_markers``, an HTML comment marks each page start.
    """
    out: list[str] = []
    page: int | None = None
    prev_type = ""
    for el in doc.elements:
        if el.is_furniture:
            continue
        block = _md_block(el)
        if page_markers and el.page is not None and el.page != page:
            page = el.page
            out.append(f"\n\n<!-- page {page} -->")
            prev_type = ""
        if not block:
            continue
        # Consecutive list items form one tight list; other blocks are paragraphs.
        sep = "\n" if el.type == prev_type == "list_item" else "\n\n"
        out.append((sep if out else "") + block)
        prev_type = el.type
    return "".join(out).strip() + "\n"


def _md_block(el: Element) -> str:
    text = el.text.strip()
    if el.type == "title":
        return f"# {_one_line(text)}"
    if el.type == "heading":
        return f"{'#' * min((el.level or 1) + 1, 6)} {_one_line(text)}"
    if el.type == "list_item":
        return f"{'  ' * ((el.level or 1) - 1)}- {_one_line(text)}"
    if el.type == "table":
        return table_to_markdown(el.rows or (), el.header_rows)
    if el.type == "code":
        return f"```\n{el.text.rstrip()}\n```"
    if el.type == "formula":
        return f"$$ {text} $$"
    if el.type == "figure":
        return f"![{_one_line(text)}]()" if text else "<!-- image -->"
    if el.type == "caption":
        return f"*{_one_line(text)}*"
    if el.type == "footnote":
        return f"> {_one_line(text)}"
    return text


def _one_line(text: str) -> str:
    return " ".join(text.split())

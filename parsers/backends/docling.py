"""``--parser docling``: docling's Word reader behind our Element model (DOCX only).

Install with ``pip install 'chunkweave[docling]'`` (docling-slim with its DOCX
format extra; no torch). The DOCX backend is called directly: docling's
``DocumentConverter`` imports its speech pipeline and with it torch, which the slim
install deliberately lacks. docling's PDF path needs layout models from a model hub
and cannot run offline, so PDFs are refused with a clear reason.

Label mapping: title -> title; section_header -> heading (its level);
list_item -> list_item (depth = enclosing list groups); text/paragraph/reference
-> paragraph; table -> table (rows from the cell grid, header rows = leading rows
whose cells are all column headers); caption, code, formula, footnote, page_header,
page_footer keep their names; picture/chart -> figure; anything in the furniture
content layer -> page_header (or page_footer when docling says so).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chunkweave.parsers.detect import detect_format
from chunkweave.parsers.document import ParsedDocument, ParseOptions, file_sha1
from chunkweave.parsers.elements import Element, ElementType, table_element
from chunkweave.parsers.errors import EmptyDocumentError, ParseError, ParserUnavailableError
from chunkweave.parsers.structure import finalize

INSTALL_HINT = "pip install 'chunkweave[docling]'"

_LABELS: dict[str, ElementType] = {
    "title": "title",
    "section_header": "heading",
    "list_item": "list_item",
    "text": "paragraph",
    "paragraph": "paragraph",
    "reference": "paragraph",
    "checkbox_selected": "paragraph",
    "checkbox_unselected": "paragraph",
    "table": "table",
    "caption": "caption",
    "code": "code",
    "formula": "formula",
    "footnote": "footnote",
    "page_header": "page_header",
    "page_footer": "page_footer",
    "picture": "figure",
    "chart": "figure",
}


def parse_with_docling(
    path: Path, opts: ParseOptions, *, sha1: str | None = None
) -> ParsedDocument:
    """Parse a DOCX with docling's Word backend and map its items onto our elements.

    Raises ParserUnavailableError when docling is not installed or the file is a
    PDF, and ParseError (naming the file) when docling itself fails.
    """
    if detect_format(path) != "docx":
        raise ParserUnavailableError(
            str(path),
            "docling's PDF pipeline needs layout models from a model hub and cannot run "
            "offline; use --parser pymupdf (or unstructured)",
        )
    try:
        from docling.backend.msword_backend import MsWordDocumentBackend
        from docling.datamodel.base_models import InputFormat
        from docling.datamodel.document import InputDocument
    except ImportError as err:
        raise ParserUnavailableError(
            str(path), f"docling is not installed ({err.name}); install it with: {INSTALL_HINT}"
        ) from err
    try:
        source = InputDocument(
            path_or_stream=path, format=InputFormat.DOCX, backend=MsWordDocumentBackend
        )
        doc = MsWordDocumentBackend(in_doc=source, path_or_stream=path).convert()
    except Exception as err:  # noqa: BLE001 - a third-party reader's failures vary
        raise ParseError(str(path), f"docling failed: {type(err).__name__}: {err}") from err
    elements = finalize(_elements(doc))
    if not elements:
        raise EmptyDocumentError(str(path), "docling returned no elements")
    return ParsedDocument(
        path=str(path),
        format="docx",
        sha1=sha1 or file_sha1(path),  # hashed here only when the caller has not
        page_count=None,
        title=next((e.text for e in elements if e.type == "title"), None),
        elements=elements,
        warnings=("docling's Word backend reports no page numbers",),
        parser="docling",
    )


def _elements(doc: Any) -> Iterator[Element]:
    from docling_core.types.doc import ContentLayer

    layers = {ContentLayer.BODY, ContentLayer.FURNITURE}
    for item, _depth in doc.iterate_items(with_groups=False, included_content_layers=layers):
        label = str(getattr(item.label, "value", item.label))
        etype = _LABELS.get(label)
        if etype is None:
            continue
        if item.content_layer == ContentLayer.FURNITURE and etype not in (
            "page_header",
            "page_footer",
        ):
            etype = "page_header"
        page = item.prov[0].page_no if getattr(item, "prov", None) else None
        if etype == "table":
            rows, header_rows = _table(item)
            if rows:
                yield table_element(rows, header_rows, page=page)
            continue
        text = (getattr(item, "text", "") or "").strip()
        if not text and etype != "figure":
            continue
        level = None
        if etype == "heading":
            level = max(1, int(getattr(item, "level", 1) or 1))
        elif etype == "list_item":
            level = _list_depth(item, doc)
        yield Element(type=etype, text=text, level=level, page=page, order=0)


def _table(item: Any) -> tuple[tuple[tuple[str, ...], ...], int]:
    grid = item.data.grid
    rows = tuple(tuple((cell.text or "").strip() for cell in row) for row in grid)
    header_rows = 0
    for row in grid:
        if row and all(cell.column_header for cell in row):
            header_rows += 1
        else:
            break
    return rows, header_rows


def _list_depth(item: Any, doc: Any) -> int:
    depth = 0
    node = item
    for _ in range(64):
        parent_ref = getattr(node, "parent", None)
        if parent_ref is None:
            break
        node = parent_ref.resolve(doc)
        if str(getattr(node.label, "value", node.label)) in ("list", "ordered_list"):
            depth += 1
    return max(depth, 1)

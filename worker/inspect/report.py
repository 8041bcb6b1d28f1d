"""What a report shows, built from chunks alone or from chunks and their parse.

Pure: no I/O. :func:`build_report` takes the chunks of one document and, when
the document was just parsed, its elements (to draw what the chunks left out:
running headers and footers, contents and index entries) and the parse route
each page took. A report of stored chunks has neither; it shows the chunks.
"""

from __future__ import annotations

import colorsys
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chunkweave.chunking import Chunk
from chunkweave.chunking.navigation import navigation_orders
from chunkweave.parsers.elements import BBox, Element

#: A warning that names its page ("page 3: ...", "page 3 has no text layer ...").
_PAGE_WARNING = re.compile(r"^page (\d+)\b", re.IGNORECASE)
#: Golden angle: consecutive chunks get hues far apart, whatever their number.
_HUE_STEP = 137.508
#: Characters of a left-out element's text shown in its tooltip.
_LABEL_CHARS = 80


@dataclass(frozen=True)
class LeftOut:
    """An element of a page that no chunk holds, drawn greyed.

    ``kind``: ``furniture`` (running header or footer), ``navigation`` (contents
    or index entries), ``empty`` (no text: a figure without one) or ``other``;
    ``bbox`` in the parser's frame (see :class:`~chunkweave.chunking.models.Region`).
    """

    page: int
    bbox: BBox
    kind: str
    label: str


@dataclass
class Report:
    """Everything one report shows; ``chunks`` in document order.

    ``routes``: 1-based page -> ``"route:reason"`` as the PDF parser logged it
    (empty when unknown); ``page_warnings``: the warnings that name a page;
    ``warnings``: the others. ``source_pdf``: a readable PDF to draw the pages
    from, or ``None`` (then only the panel is shown, with ``note`` saying why).
    """

    title: str
    source: str
    format: str
    chunks: list[Chunk]
    page_count: int | None = None
    parser: str = ""
    chunker: str = ""
    warnings: list[str] = field(default_factory=list)
    page_warnings: dict[int, list[str]] = field(default_factory=dict)
    routes: dict[int, str] = field(default_factory=dict)
    left_out: list[LeftOut] = field(default_factory=list)
    source_pdf: str | None = None
    note: str | None = None
    #: False for stored chunks: the store keeps the vector, not the text embedded.
    embed_text_known: bool = True

    def colour(self, index: int) -> str:
        """Return the colour chunk ``index`` (its position in :attr:`chunks`) is drawn in."""
        return chunk_colour(index)

    def tree(self) -> list[dict[str, Any]]:
        """Return the heading tree (see :func:`heading_tree`)."""
        return heading_tree(self.chunks)

    def panel_data(self) -> dict[str, Any]:
        """Return the JSON the page script reads: the chunks, their colours and the tree."""
        return {
            "chunks": [_chunk_json(i, c) for i, c in enumerate(self.chunks)],
            "tree": self.tree(),
            "embed_text_known": self.embed_text_known,
        }


def build_report(
    chunks: Sequence[Chunk],
    *,
    source: str,
    format: str,
    title: str | None = None,
    page_count: int | None = None,
    parser: str = "",
    elements: Sequence[Element] = (),
    warnings: Sequence[str] = (),
    routes: Mapping[int, str] | None = None,
    source_pdf: str | None = None,
    note: str | None = None,
    embed_text_known: bool = True,
) -> Report:
    """Return the report of one document's ``chunks``.

    ``elements``: the parse the chunks came from (to find what they left out);
    ``warnings``: the parser's; ``routes``: page -> route as logged by the PDF
    parser. ``source_pdf``: the PDF to render the pages from (``None``: no images).
    ``embed_text_known``: False when the chunks' ``embed_text`` is not known (stored chunks).
    """
    page_warnings: dict[int, list[str]] = {}
    doc_warnings: list[str] = []
    for warning in warnings:
        match = _PAGE_WARNING.match(warning)
        if match:
            page_warnings.setdefault(int(match.group(1)), []).append(warning)
        else:
            doc_warnings.append(warning)
    chunker = chunks[0].chunker if chunks else ""
    return Report(
        title=title or source.rsplit("/", 1)[-1],
        source=source,
        format=format,
        chunks=list(chunks),
        page_count=page_count,
        parser=parser,
        chunker=chunker,
        warnings=doc_warnings,
        page_warnings=page_warnings,
        routes=dict(routes or {}),
        left_out=left_out(elements, chunks),
        source_pdf=source_pdf,
        note=note,
        embed_text_known=embed_text_known,
    )


def left_out(elements: Sequence[Element], chunks: Sequence[Chunk]) -> list[LeftOut]:
    """Return the elements with a box that no chunk holds, with why (see :class:`LeftOut`)."""
    held = {order for c in chunks for order in c.element_orders}
    navigation = navigation_orders(elements)
    out: list[LeftOut] = []
    for el in elements:
        if el.order in held or el.page is None or el.bbox is None:
            continue
        if el.is_furniture:
            kind = "furniture"
        elif el.order in navigation:
            kind = "navigation"
        elif not el.text.strip():
            kind = "empty"  # a figure with no caption or text: nothing to chunk
        else:
            kind = "other"
        text = " ".join(el.text.split())
        if len(text) > _LABEL_CHARS:
            text = text[: _LABEL_CHARS - 1] + "…"
        label = f"left out ({kind}, {el.type.replace('_', ' ')}): {text}"
        for page, bbox in ((el.page, el.bbox), *el.continued):
            out.append(LeftOut(page=page, bbox=bbox, kind=kind, label=label))
    return out


def chunk_colour(index: int) -> str:
    """Return a saturated colour for chunk ``index`` as ``#rrggbb``; neighbours differ."""
    hue = (index * _HUE_STEP) % 360 / 360
    r, g, b = colorsys.hls_to_rgb(hue, 0.42, 0.85)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def heading_tree(chunks: Sequence[Chunk]) -> list[dict[str, Any]]:
    """Return the heading tree of ``chunks``: nested ``{"title", "chunks", "children"}``.

    A node per heading path prefix, in first-seen order; each chunk is listed at
    the node of its ``heading_path`` and at the nodes of the sections merged into
    it (``section_headings``). Chunks without a heading path sit in a root node
    titled ``(no heading)``.
    """
    roots: list[dict[str, Any]] = []
    nodes: dict[tuple[str, ...], dict[str, Any]] = {}

    def node(path: tuple[str, ...]) -> dict[str, Any]:
        found = nodes.get(path)
        if found is not None:
            return found
        made: dict[str, Any] = {"title": path[-1], "chunks": [], "children": []}
        nodes[path] = made
        siblings = roots if len(path) == 1 else node(path[:-1])["children"]
        siblings.append(made)
        return made

    for i, c in enumerate(chunks):
        path = c.heading_path or ("(no heading)",)
        node(path)["chunks"].append(i)
        for merged in c.section_headings:
            listed = node((*path, merged))["chunks"]
            if i not in listed:
                listed.append(i)
    return roots


def _chunk_json(index: int, c: Chunk) -> dict[str, Any]:
    return {
        "index": index,
        "id": c.id,
        "type": c.type,
        "text": c.text,
        "embed_text": c.embed_text,
        "heading_path": list(c.heading_path),
        "section_headings": list(c.section_headings),
        "pages": list(c.pages),
        "token_count": c.token_count,
        "table_html": c.table_html,
        "caption": c.caption,
        "parent_id": c.parent_id,
        "regions": len(c.regions),
        "colour": chunk_colour(index),
    }

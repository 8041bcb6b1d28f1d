"""Ground truth of the corpus documents: its records and their loaders.

Ground truth comes from the shared corpus (see ``corpus/README.md``): docling JSON
(headings with levels, tables with shapes, furniture, reading order), the expected
Markdown (text fidelity), the ``.pdf-outline.tsv`` of the long PDFs (headings only) and
the ``.tables.json`` of ``corpus-extra`` (tables only). Nothing here imports chunkweave
or a peer; everything here is pure apart from reading the ground-truth files.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class GtHeading:
    """A ground-truth heading; ``level`` 0 is a document title."""

    text: str
    level: int
    page: int | None = None


@dataclass(frozen=True)
class GtCell:
    """A ground-truth cell at its grid position, with its spans (1 when not spanning)."""

    row: int
    col: int
    text: str
    row_span: int = 1
    col_span: int = 1


@dataclass(frozen=True)
class GtTable:
    """A ground-truth table: its shape and its cell texts.

    ``spanned`` holds the cells with their spans where the ground truth states them
    (docling JSON, ICDAR 2013); otherwise ``grid`` holds the rows of cell texts.
    Neither takes part in comparisons.
    """

    n_rows: int
    n_cols: int
    cells: tuple[str, ...]
    page: int | None = None
    grid: tuple[tuple[str, ...], ...] = field(default=(), compare=False)
    spanned: tuple[GtCell, ...] = field(default=(), compare=False)


@dataclass
class GroundTruth:
    """Everything known about one corpus document.

    ``source`` is ``docling`` (full GT: headings, tables, furniture, Markdown),
    ``outline`` (headings from the PDF bookmarks only; use recall, not precision) or
    ``tables`` (a ``.tables.json`` only: tables, no headings). ``tables_known`` says
    whether ``tables`` is ground truth (docling, or a ``.tables.json`` next to an
    outline) rather than merely empty.
    ``stream`` is the GT body in reading order as ``(is_heading, text)`` pairs, used to
    find the heading a chunk sits under. ``levels_informative`` is False when the GT
    puts every heading on one level (docling's PDF output does), so level accuracy is
    not scored there.
    """

    doc: Path
    source: str
    headings: list[GtHeading] = field(default_factory=list)
    tables: list[GtTable] = field(default_factory=list)
    furniture: list[str] = field(default_factory=list)
    markdown: str | None = None
    stream: list[tuple[bool, str]] = field(default_factory=list)
    tables_known: bool = False

    @property
    def levels_informative(self) -> bool:
        """True if the GT headings use more than one level."""
        return len({h.level for h in self.headings}) > 1


def _resolve(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    _, kind, idx = ref.split("/")
    node: dict[str, Any] = doc[kind][int(idx)]
    return node


def walk_body(doc: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the DoclingDocument items under ``node`` in reading order (groups expanded)."""
    out: list[dict[str, Any]] = []
    for child in node.get("children", []):
        item = _resolve(doc, child["$ref"])
        if item["self_ref"].split("/")[1] == "groups":
            out.extend(walk_body(doc, item))
            continue
        out.append(item)
        if item["self_ref"].split("/")[1] == "texts":
            out.extend(walk_body(doc, item))
    return out


def _page(item: dict[str, Any]) -> int | None:
    prov = item.get("prov") or []
    return int(prov[0]["page_no"]) if prov else None


def load_docling_json(path: Path, doc: Path) -> GroundTruth:
    """Ground truth from a DoclingDocument JSON (schema 1.x)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    gt = GroundTruth(doc=doc, source="docling", tables_known=True)
    for t in data.get("texts", []):
        if t.get("content_layer") == "furniture" and t.get("text", "").strip():
            gt.furniture.append(t["text"])
    for item in walk_body(data, data["body"]):
        kind = item["self_ref"].split("/")[1]
        if kind == "texts":
            label = item.get("label")
            if item.get("content_layer", "body") != "body":
                continue
            if label in ("title", "section_header"):
                level = 0 if label == "title" else int(item.get("level") or 1)
                gt.headings.append(GtHeading(item["text"], level, _page(item)))
                gt.stream.append((True, item["text"]))
            else:
                gt.stream.append((False, item.get("text", "")))
        elif kind == "tables":
            cells = item["data"]
            texts = tuple(c.get("text", "") for c in cells.get("table_cells", []))
            spanned = tuple(_docling_cell(c) for c in cells.get("table_cells", []))
            gt.tables.append(
                GtTable(
                    int(cells["num_rows"]),
                    int(cells["num_cols"]),
                    texts,
                    _page(item),
                    spanned=tuple(c for c in spanned if c is not None),
                )
            )
            gt.stream.append((False, " ".join(texts)))
    return gt


def _docling_cell(cell: dict[str, Any]) -> GtCell | None:
    """Return a docling table cell as a :class:`GtCell` (None without grid offsets)."""
    if "start_row_offset_idx" not in cell or "start_col_offset_idx" not in cell:
        return None
    row, col = int(cell["start_row_offset_idx"]), int(cell["start_col_offset_idx"])
    return GtCell(
        row,
        col,
        cell.get("text", ""),
        max(1, int(cell.get("end_row_offset_idx", row + 1)) - row),
        max(1, int(cell.get("end_col_offset_idx", col + 1)) - col),
    )


def load_outline(path: Path, doc: Path) -> GroundTruth:
    """Ground truth from a ``.pdf-outline.tsv`` (``level``, ``title``, ``page``).

    A bookmark without a destination (page ``-1``: a web link such as
    "*lessig.org", or a node that only groups others) names no heading on any page
    and is left out; no system could find it.
    """
    gt = GroundTruth(doc=doc, source="outline")
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if int(row["page"]) >= 1:
                gt.headings.append(GtHeading(row["title"], int(row["level"]), int(row["page"])))
    return gt


def load_tables_json(path: Path) -> list[GtTable]:
    """GT tables from a ``.tables.json`` (``corpus-extra``: camelot, tabula, ICDAR 2013).

    Each table's ``rows`` is a grid of cell texts; the shape is its row count by its
    widest row, the cells are the non-empty texts. ICDAR 2013 tables also list their
    ``cells`` with spans (kept as ``spanned``).
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    out: list[GtTable] = []
    for t in data.get("tables", []):
        rows = t.get("rows") or []
        cells = tuple(str(c) for r in rows for c in r if str(c).strip())
        width = max((len(r) for r in rows), default=0)
        spanned = tuple(
            GtCell(
                int(c["row"]),
                int(c["col"]),
                str(c.get("text", "")),
                int(c.get("row_span", 1)),
                int(c.get("col_span", 1)),
            )
            for c in t.get("cells") or ()
        )
        grid = tuple(tuple(str(c) for c in r) for r in rows)
        out.append(GtTable(len(rows), width, cells, t.get("page"), grid=grid, spanned=spanned))
    return out


_JSON_KINDS = (".groundtruth.json", ".groundtruth.from-odt-source.json")
_MD_KINDS = (".groundtruth.md", ".groundtruth.from-odt-source.md")


def load_groundtruth(doc: Path) -> GroundTruth | None:
    """Load the ground truth next to ``doc`` in the corpus; None if it has none usable.

    Scanned documents' OCR ground truth is not used (it scores an OCR engine, not a
    parser); the outline and a ``.tables.json`` are used only when no docling JSON
    exists (together when both are there).
    """
    stem = doc.name[: -len(doc.suffix)]
    for kind in _JSON_KINDS:
        js = doc.with_name(stem + kind)
        if js.exists():
            gt = load_docling_json(js, doc)
            for md_kind in _MD_KINDS:
                md = doc.with_name(stem + md_kind)
                if md.exists():
                    gt.markdown = md.read_text(encoding="utf-8")
            return gt
    outline = doc.with_name(stem + ".groundtruth.pdf-outline.tsv")
    tables = doc.with_name(stem + ".groundtruth.tables.json")
    if outline.exists():
        gt = load_outline(outline, doc)
    elif tables.exists():
        gt = GroundTruth(doc=doc, source="tables")
    else:
        return None
    if tables.exists():
        gt.tables = load_tables_json(tables)
        gt.tables_known = True
    return gt


def corpus_documents(corpus: Path, *, include_outline: bool = True) -> list[Path]:
    """Corpus documents that have ground truth, sorted by name."""
    docs = []
    for p in sorted(corpus.iterdir()):
        if p.suffix.lower() not in (".pdf", ".docx"):
            continue
        gt = load_groundtruth(p)
        if gt is not None and (include_outline or gt.source != "outline"):
            docs.append(p)
    return docs

"""DOCX furniture leak: header and footer text that chunkweave puts in the body.

Needs no annotation, so it scores every DOCX of a corpus (``corpus-extra`` has no
docling ground truth for its DOCX files). For each document, the reference is the
package itself, read here without the parser: the paragraphs of every header and
footer part (``word/header*.xml``, ``word/footer*.xml``) are the furniture, the
paragraphs of ``word/document.xml`` the body. A furniture paragraph leaks when the
parsed document's non-furniture elements hold its text more often than the body
part does (:func:`bench.scoring.furniture_leaks`, the figure
``bench/parse_quality.py`` reports for PDFs). ``kept`` counts the furniture
paragraphs found in the parsed ``page_header`` / ``page_footer`` elements.

    .venv/bin/python -m bench.docx_furniture [--corpus ../shared/corpus-extra] [--json PATH]
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from typing import Any

from lxml import etree

from bench.normalize import normalize_text
from bench.options import bench_parser, write_json
from bench.scoring import furniture_leaks

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_W_STRICT = "{http://purl.oclc.org/ooxml/wordprocessingml/main}"
#: Parts bigger than this are not read (a bound on what a benchmark input may cost).
MAX_PART_BYTES = 64 * 1024 * 1024


def part_paragraphs(xml: bytes) -> list[str]:
    """Return the text of each non-empty paragraph (``w:p``) of a WordprocessingML part.

    Text runs (``w:t``) and tabs are read in document order, deleted text
    (``w:delText``) is not; transitional and Strict namespaces both count.
    """
    root = etree.fromstring(xml, parser=etree.XMLParser(resolve_entities=False, huge_tree=False))
    out: list[str] = []
    for ns in (_W, _W_STRICT):
        for p in root.iter(f"{ns}p"):
            # Only the paragraph's own runs: a paragraph nested in a text box is its own.
            parts = [
                t.text or "" if t.tag == f"{ns}t" else " "
                for t in p.iter(f"{ns}t", f"{ns}tab")
                if _nearest_paragraph(t, ns) is p
            ]
            text = " ".join("".join(parts).split())
            if text:
                out.append(text)
    return out


def _nearest_paragraph(el: etree._Element, ns: str) -> etree._Element | None:
    node = el.getparent()
    while node is not None and node.tag != f"{ns}p":
        node = node.getparent()
    return node


def package_texts(path: Path) -> tuple[list[str], list[str]]:
    """Return ``(furniture, body)`` paragraph texts of a DOCX package (see the docstring)."""
    furniture: list[str] = []
    body: list[str] = []
    with zipfile.ZipFile(path) as pkg:
        for info in pkg.infolist():
            name = info.filename
            if not name.startswith("word/") or not name.endswith(".xml"):
                continue
            leaf = name[len("word/") :]
            is_furniture = leaf.startswith(("header", "footer")) and "/" not in leaf
            if not (is_furniture or leaf == "document.xml"):
                continue
            if info.file_size > MAX_PART_BYTES:
                raise ValueError(f"{path.name}: part {name} is over {MAX_PART_BYTES} bytes")
            texts = part_paragraphs(pkg.read(name))
            (furniture if is_furniture else body).extend(texts)
    return furniture, body


def score_document(path: Path) -> dict[str, Any]:
    """Parse one DOCX with chunkweave and score its furniture leak (one results row)."""
    from chunkweave.parsers import parse_document

    furniture, reference = package_texts(path)
    doc = parse_document(path)
    body = [e.text for e in doc.elements if not e.is_furniture]
    kept_text = normalize_text("\n".join(e.text for e in doc.elements if e.is_furniture))
    leaked, total = furniture_leaks(body, furniture, reference)
    kept = sum(1 for f in furniture if normalize_text(f) and normalize_text(f) in kept_text)
    return {"leaked": leaked, "total": total, "kept": kept, "paragraphs": len(furniture)}


def main(argv: list[str] | None = None) -> int:
    """Score every DOCX of the corpus; print one line each and the totals."""
    ap = bench_parser(__doc__)
    ap.add_argument("--corpus", type=Path, default=Path(__file__).parents[1] / "../shared/corpus")
    args = ap.parse_args(argv)
    rows: dict[str, dict[str, Any]] = {}
    for path in sorted(args.corpus.glob("*.docx")):
        try:
            rows[path.name] = score_document(path)
        except Exception as exc:  # noqa: BLE001 - a benchmark reports and goes on
            rows[path.name] = {"error": f"{type(exc).__name__}: {exc}"}
    print(f"{'document':56s} {'leaked':>6s} {'total':>6s} {'kept':>6s}")
    leaked = total = kept = 0
    for name, row in rows.items():
        if "error" in row:
            print(f"{name[:56]:56s} error: {row['error']}")
            continue
        leaked, total, kept = leaked + row["leaked"], total + row["total"], kept + row["kept"]
        print(f"{name[:56]:56s} {row['leaked']:6d} {row['total']:6d} {row['kept']:6d}")
    print(f"{'all (' + str(len(rows)) + ' documents)':56s} {leaked:6d} {total:6d} {kept:6d}")
    write_json(
        args.json,
        {
            "corpus": str(args.corpus),
            "documents": rows,
            "leaked": leaked,
            "total": total,
            "kept": kept,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

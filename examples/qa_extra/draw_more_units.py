"""Draw cells and sections of corpus-extra documents that had no questions (issue 31).

Usage: ``python examples/qa_extra/draw_more_units.py [--corpus DIR] [--out FILE]
[--tables FILE]``

The same method as ``draw_units.py`` (document first, then a unit uniformly, without
replacement, seeded), widened to documents the first draws did not cover:

- **cells** (``random.Random(CELL_SEED)``, ``N_CELL_DRAWS``): from the table ground
  truth where there is one (``GT_TABLE_DOCS``); else from PyMuPDF's own ``find_tables``
  (default settings, tables of 3+ rows and 2+ columns) with each cell's text read back
  as the PyMuPDF words inside the cell's box (``find_tables``' own cell text reorders
  digits and separators, "4,755,785.11" -> "475578511 , , ."); else from a table
  transcribed by hand from the page (``tables_by_hand.json``: the federal register
  notice's cost table, which has no rules and which ``find_tables`` does not see). The
  unit rules are ``draw_units.py``'s: a body cell outside the key column, left out when
  under 2 characters or not in the page text; a text occurring more than once in the
  document is replaced by the longest unique cell of its row, or left out. Left out
  too: a row without a key cell, a cell ``draws.json`` drew. Unlike ``draw_units.py``
  the rules apply before the draw (not by redrawing), so a document whose cells are
  mostly unusable is drawn as often as the others; a cell reached twice is redrawn.
- **sections** (``random.Random(SECTION_SEED)``, ``N_SECTION_DRAWS``): outline entries
  as in ``draw_units.py`` for the PDFs with bookmarks (``OUTLINE_DOCS``); for PDFs
  without bookmarks (``BOLD_DOCS``) the entries are the PDF's bold lines: a run of
  consecutive lines of one text block whose spans are all bold, at most 14 words, with
  a letter. Each section is the PyMuPDF text from its title to the next title, kept
  with at least ``MIN_SECTION_WORDS`` words.

Nothing here reads chunkweave's parse. Questions are written by hand in
``build_extra_qa.py`` for the draws in order (ids ``t<i>`` for cells, ``h<i>`` for
sections).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path
from typing import Any

import pymupdf
from draw_units import Entry, norm, page_texts, read_outline, sections

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CELL_SEED = 20261206
SECTION_SEED = 20261207
N_CELL_DRAWS = 64
N_SECTION_DRAWS = 32
MIN_SECTION_WORDS = 40
MAX_TITLE_WORDS = 14
KOREAN_REPORT = "2125318_환경노동위원회_검토보고서.[2125318]탄중법 검토보고서(이수진의원안)_hwp.pdf"
KOREAN_PATENT = "특허_1020210175798.pdf"
GERMAN_CHAPTER = "PDFUA-Ref-2-05_BookChapter-german.pdf"
FEDREG = "federal-register-2020-17221.pdf"

# Fixed before the draw: the corpus-extra PDFs with a text layer and a table that had no
# question yet. Ground truth first; ``arabic`` and ``indictb1h_14`` stay out (see
# draw_units.py); ``issue-463-example``'s one table is a placeholder ("Header"/"Cell").
GT_TABLE_DOCS = ("us-018.pdf", "us-034.pdf", "vertical_header.pdf")
FOUND_TABLE_DOCS = (
    "268346.pdf",  # US statistical abstract tables (Xyvision)
    "issue-67-example.pdf",  # Chinese quarterly report, finance tables (WPS Office)
    KOREAN_REPORT,  # Korean committee review report (Hancom Hwp)
    "189478.pdf",  # genome sequencing proposal, one cost table (Word)
    GERMAN_CHAPTER,  # German book chapter, one responsibility matrix (InDesign)
    KOREAN_PATENT,  # Korean patent, a table of regular expressions (ezPDF)
    "Padauk-features.pdf",  # font manual, feature tables (LibreOffice)
    "Scheherazade-features.pdf",  # font manual, feature tables (LibreOffice)
)
HAND_TABLE_DOCS = (FEDREG,)
# Sections: the bookmarked PDFs without questions (``freeculture``, 352 pp, stays out
# for scoring cost; ``268346``, ``us-018``, ``vertical_header`` bookmark table captions;
# ``multipage`` is a scan) and the PDFs without bookmarks whose bold lines are headings.
# Left out: ``issue-67-example`` (no bold lines), the Korean report (its bold lines are
# table headers), the font manuals (their bold lines are table row labels),
# ``issue-463-example`` (three pages of placeholder text).
OUTLINE_DOCS = (GERMAN_CHAPTER, KOREAN_PATENT)
BOLD_DOCS = (FEDREG, "189478.pdf", "2023-06-20-PV.pdf", "pdkids.pdf")

_LETTER = re.compile(r"[^\W\d_]")


def _bold(span: dict[str, Any]) -> bool:
    return bool(span["flags"] & 16) or "bold" in str(span["font"]).lower()


def bold_titles(path: Path) -> list[Entry]:
    """Return the PDF's bold-line titles (see the module docstring) as outline entries."""
    out: list[Entry] = []
    with pymupdf.open(path) as doc:
        for number, page in enumerate(doc, 1):
            for block in page.get_text("dict")["blocks"]:
                run: list[str] = []
                for line in [*block.get("lines", []), None]:
                    spans = [s for s in (line or {}).get("spans", []) if s["text"].strip()]
                    if line is not None and spans and all(_bold(s) for s in spans):
                        run.append(" ".join(s["text"] for s in spans))
                        continue
                    title = norm(" ".join(run))
                    if run and len(title.split()) <= MAX_TITLE_WORDS and _LETTER.search(title):
                        out.append(Entry(1, title, number))
                    run = []
    return out


def found_tables(path: Path) -> list[dict[str, Any]]:
    """Return ``find_tables`` tables of 3+ rows, 2+ columns, cells read as PyMuPDF words."""
    out: list[dict[str, Any]] = []
    with pymupdf.open(path) as doc:
        for number, page in enumerate(doc, 1):
            words = page.get_text("words")
            for table in page.find_tables().tables:
                if table.row_count < 3 or table.col_count < 2:
                    continue
                rows = []
                for row in table.rows:
                    rows.append([_words_in(words, box) for box in row.cells])
                out.append({"page": number, "rows": rows})
    return out


def _words_in(words: list[tuple[Any, ...]], box: tuple[float, ...] | None) -> str:
    if box is None:
        return ""
    x0, y0, x1, y1 = box
    inside = [w for w in words if x0 <= (w[0] + w[2]) / 2 <= x1 and y0 <= (w[1] + w[3]) / 2 <= y1]
    inside.sort(key=lambda w: (w[5], w[6], w[7]))  # block, line, word: reading order
    return norm(" ".join(str(w[4]) for w in inside))


def table_pools(corpus: Path, cache: Path | None) -> dict[str, list[dict[str, Any]]]:
    """Return every cell document's tables: ``{doc: [{"page": n, "rows": [[...]]}]}``."""
    tables: dict[str, list[dict[str, Any]]] = {}
    for name in GT_TABLE_DOCS:
        truth = json.loads((corpus / f"{Path(name).stem}.groundtruth.tables.json").read_text())
        tables[name] = [{"page": t["page"], "rows": t["rows"]} for t in truth["tables"]]
    if cache is not None and cache.is_file():
        tables.update(json.loads(cache.read_text(encoding="utf-8")))
    else:
        found = {name: found_tables(corpus / name) for name in FOUND_TABLE_DOCS}
        if cache is not None:
            cache.write_text(json.dumps(found, ensure_ascii=False), encoding="utf-8")
        tables.update(found)
    by_hand = json.loads((HERE / "tables_by_hand.json").read_text(encoding="utf-8"))
    tables.update({name: by_hand[name] for name in HAND_TABLE_DOCS})
    return tables


def asked_cells() -> set[tuple[str, str]]:
    """Return ``(doc, cell)`` of every cell ``draws.json`` drew (asked or skipped there)."""
    draws = json.loads((HERE / "draws.json").read_text(encoding="utf-8"))
    return {(d["doc"], norm(d["cell"])) for d in draws["cells"] if "cell" in d}


def _resolve(rows: list[list[str]], r: int, c: int, page: str, whole: str) -> int | None:
    """Return the column of the cell a draw of ``(r, c)`` asks for, or None (redraw)."""
    cell = rows[r][c]
    if len(cell) < 2 or cell not in page or not rows[r][0]:
        return None
    if whole.count(cell) == 1:
        return c
    unique = [x for x in rows[r][1:] if len(x) >= 2 and x in page and whole.count(x) == 1]
    return rows[r].index(max(unique, key=len)) if unique else None


def draw_cells(
    tables: dict[str, list[dict[str, Any]]],
    texts: dict[str, list[str]],
    asked: set[tuple[str, str]],
    rng: random.Random,
) -> list[dict[str, Any]]:
    """Return up to ``N_CELL_DRAWS`` cells in draw order (rules: module docstring).

    The rules are applied before the draw, so a document with many unusable cells
    (short, repeated, mangled) is chosen as often as any other.
    """
    pools: dict[str, list[tuple[int, int, int]]] = {}
    for doc in sorted(tables):
        whole = " ".join(texts[doc])
        pools[doc] = []
        for t, table in enumerate(tables[doc]):
            rows = [[norm(x) for x in row] for row in table["rows"]]
            if len(rows) < 3:
                continue
            page = texts[doc][int(table["page"]) - 1]
            for r in range(1, len(rows)):
                for c in range(1, len(rows[r])):
                    col = _resolve(rows, r, c, page, whole)
                    if col is not None and (doc, rows[r][col]) not in asked:
                        pools[doc].append((t, r, col))
    draws: list[dict[str, Any]] = []
    taken: set[tuple[str, int, int, int]] = set()
    while len(draws) < N_CELL_DRAWS and any(pools.values()):
        doc = rng.choice(sorted(d for d, cells in pools.items() if cells))
        t, r, c = pools[doc].pop(rng.randrange(len(pools[doc])))
        if (doc, t, r, c) in taken:
            continue  # the same cell, reached again through its row's replacement
        taken.add((doc, t, r, c))
        rows = [[norm(x) for x in row] for row in tables[doc][t]["rows"]]
        draws.append(
            {
                "doc": doc,
                "table": t,
                "page": tables[doc][t]["page"],
                "row": r,
                "col": c,
                "cell": rows[r][c],
                "key": rows[r][0],
                "header": rows[0][c],
            }
        )
    return draws


def draw_sections(corpus: Path, rng: random.Random) -> list[dict[str, Any]]:
    """Return up to ``N_SECTION_DRAWS`` sections in draw order (rules: module docstring)."""
    pools: dict[str, list[dict[str, object]]] = {}
    for name in (*OUTLINE_DOCS, *BOLD_DOCS):
        if name in OUTLINE_DOCS:
            outline = read_outline(corpus / f"{Path(name).stem}.groundtruth.pdf-outline.tsv")
        else:
            outline = bold_titles(corpus / name)
        pools[name] = [
            s
            for s in sections(corpus / name, outline)
            if len(str(s["text"]).split()) >= MIN_SECTION_WORDS
        ]
    draws: list[dict[str, Any]] = []
    while len(draws) < N_SECTION_DRAWS and any(pools.values()):
        doc = rng.choice(sorted(n for n, u in pools.items() if u))
        unit = pools[doc].pop(rng.randrange(len(pools[doc])))
        draws.append({"doc": doc, **unit})
    return draws


def main() -> None:
    """Run both draws and write them as JSON."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus-extra")
    ap.add_argument("--out", type=Path, default=HERE / "draws_more.json")
    ap.add_argument("--tables", type=Path, help="find_tables result to read, or to write")
    args = ap.parse_args()
    tables = table_pools(args.corpus, args.tables)
    texts = {doc: page_texts(args.corpus / doc) for doc in tables}
    result = {
        "cell_seed": CELL_SEED,
        "section_seed": SECTION_SEED,
        "tables": {doc: len(t) for doc, t in sorted(tables.items())},
        "cells": draw_cells(tables, texts, asked_cells(), random.Random(CELL_SEED)),
        "sections": draw_sections(args.corpus, random.Random(SECTION_SEED)),
    }
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
    print(f"wrote {args.out}: {len(result['cells'])} cells, {len(result['sections'])} sections")


if __name__ == "__main__":
    main()

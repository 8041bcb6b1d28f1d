"""Draw table cells of the long software manual ``027613.pdf`` for questions (issue 26).

Usage: ``python examples/qa_extra/draw_manual_cells.py [--corpus DIR] [--out FILE]
[--tables FILE]``

``corpus-extra`` has table ground truth only for short documents; the misses issue 26
reports sit in a long manual with many look-alike tables. ``027613.pdf`` (429 pages, an
IBM QMF user's guide) is the one such manual in the set. Its tables come from PyMuPDF's
own ``find_tables`` (default settings) on every page, not from chunkweave's parse, so
the draw does not follow the parser being measured. Kept: tables of at least 3 rows
and 2 columns. A seeded draw (``random.Random(SEED)``) picks a table uniformly among
those with cells left, then one of its body cells (not the first row) outside the key
(first) column, without replacement: redrawn when under 2 characters or not in the page
text; when its text occurs more than once in the document text (even as a substring),
replaced by the longest unique cell of its row, or redrawn if the row has none (as in
``draw_units.py``); redrawn too when its row has no key cell or the replacement is a
cell drawn before. ``--tables`` reads (or, when missing, writes) the ``find_tables``
result, which takes minutes on 429 pages.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import pymupdf
from draw_units import norm, page_texts

ROOT = Path(__file__).resolve().parents[2]
DOC = "027613.pdf"
SEED = 20261205
N_DRAWS = 24


def find_tables(path: Path) -> list[dict[str, object]]:
    """Return every ``find_tables`` table of 3+ rows and 2+ columns: page, rows."""
    out: list[dict[str, object]] = []
    with pymupdf.open(path) as doc:
        for number, page in enumerate(doc, 1):
            for table in page.find_tables().tables:
                rows = [[norm(c or "") for c in row] for row in table.extract()]
                if len(rows) >= 3 and table.col_count >= 2:
                    out.append({"page": number, "rows": rows})
    return out


def draw(tables: list[dict[str, object]], texts: list[str], rng: random.Random) -> list[dict]:
    """Return up to ``N_DRAWS`` cells (see the module docstring), in draw order."""
    whole = " ".join(texts)
    pools: dict[int, list[tuple[int, int]]] = {}
    for t_index, table in enumerate(tables):
        rows = table["rows"]
        assert isinstance(rows, list)
        pools[t_index] = [(r, c) for r in range(1, len(rows)) for c in range(1, len(rows[r]))]
    draws: list[dict[str, object]] = []
    taken: set[tuple[int, int, int]] = set()
    while len(draws) < N_DRAWS and any(pools.values()):
        t_index = rng.choice(sorted(t for t, cells in pools.items() if cells))
        r, c = pools[t_index].pop(rng.randrange(len(pools[t_index])))
        table = tables[t_index]
        rows = table["rows"]
        assert isinstance(rows, list)
        page = texts[int(str(table["page"])) - 1]
        cell = rows[r][c]
        if len(cell) < 2 or cell not in page:
            continue
        if whole.count(cell) > 1:
            unique = [x for x in rows[r][1:] if len(x) >= 2 and x in page and whole.count(x) == 1]
            if not unique:
                continue
            cell = max(unique, key=len)
            c = rows[r].index(cell)
        if not rows[r][0] or (t_index, r, c) in taken:
            continue  # a row without its key cell, or a cell drawn already (by replacement)
        taken.add((t_index, r, c))
        draws.append(
            {
                "doc": DOC,
                "table": t_index,
                "page": table["page"],
                "row": r,
                "col": c,
                "cell": cell,
                "key": rows[r][0],
                "header": rows[0][c],
            }
        )
    return draws


def main() -> None:
    """Find the manual's tables (or read them), draw, write the draws as JSON."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus-extra")
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("draws_manual.json"))
    ap.add_argument("--tables", type=Path, help="find_tables result to read, or to write")
    args = ap.parse_args()
    path = args.corpus / DOC
    if args.tables is not None and args.tables.is_file():
        tables = [
            {"page": t["page"], "rows": [[norm(c or "") for c in row] for row in t["rows"]]}
            for t in json.loads(args.tables.read_text(encoding="utf-8"))
        ]
    else:
        tables = find_tables(path)
        if args.tables is not None:
            args.tables.write_text(json.dumps(tables, ensure_ascii=False), encoding="utf-8")
    cells = draw(tables, page_texts(path), random.Random(SEED))
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(
            {"seed": SEED, "tables": len(tables), "cells": cells}, fh, ensure_ascii=False, indent=1
        )
        fh.write("\n")
    print(f"wrote {args.out}: {len(cells)} cells from {len(tables)} tables")


if __name__ == "__main__":
    main()

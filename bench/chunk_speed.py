"""Chunking time vs parse time per corpus document (goal: chunking well under 5%).

Usage: ``python bench/chunk_speed.py [--corpus DIR] [--strategy S]... [FILE ...] [--json]``

For every document: parse once (timed), then chunk with each strategy (timed, best
of ``--repeat`` runs) using the default embedder's tokenizer as token counter when
it is available (the approximation otherwise). Prints one row per document and the
totals; the ratio is chunking seconds / parse seconds. Both run in this process, one
after the other, so machine load affects them alike.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chunking import ApproxTokenCounter, ChunkOptions, chunk_document, resolve_options  # noqa: E402
from chunking.models import TokenCounter  # noqa: E402
from parsers import ParseError, parse_document  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"


def _counter() -> tuple[TokenCounter, int | None]:
    try:
        from storage.config import EmbedderConfig
        from storage.embedders import make_embedder

        embedder = make_embedder(EmbedderConfig())
        return embedder, embedder.max_tokens
    except Exception as err:  # noqa: BLE001 - fall back, and say so
        print(
            f"note: default embedder unavailable ({err}); using the approximation", file=sys.stderr
        )
        return ApproxTokenCounter(), None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="documents (default: every PDF/DOCX in --corpus)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--strategy", action="append", dest="strategies")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    files = [Path(f) for f in args.files] or sorted(
        p for p in args.corpus.iterdir() if p.suffix.lower() in (".pdf", ".docx")
    )
    strategies = args.strategies or ["elements"]
    counter, limit = _counter()
    rows = []
    for path in files:
        started = time.perf_counter()
        try:
            doc = parse_document(path)
        except ParseError as err:
            print(f"skip {path.name}: {err}", file=sys.stderr)
            continue
        parse_s = time.perf_counter() - started
        row: dict[str, Any] = {
            "doc": path.name,
            "elements": len(doc.elements),
            "parse_s": round(parse_s, 4),
        }
        for strategy in strategies:
            opts = resolve_options(ChunkOptions(strategy=strategy), limit)
            best = float("inf")
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                chunks = chunk_document(doc, opts, counter, doc_id=path.name)
                best = min(best, time.perf_counter() - t0)
            row[f"{strategy}_chunks"] = len(chunks)
            row[f"{strategy}_s"] = round(best, 4)
            row[f"{strategy}_pct_of_parse"] = round(100 * best / parse_s, 2) if parse_s else None
        rows.append(row)
        if not args.json:
            cells = "  ".join(
                f"{s}: {row[f'{s}_chunks']} chunks {row[f'{s}_s']:.3f}s "
                f"({row[f'{s}_pct_of_parse']}%)"
                for s in strategies
            )
            print(f"{path.name:<42} parse {parse_s:7.2f}s  {cells}", flush=True)
    total_parse = sum(float(r["parse_s"]) for r in rows)
    totals = {
        s: round(100 * sum(float(r[f"{s}_s"]) for r in rows) / total_parse, 2) for s in strategies
    }
    summary = {
        "counter": counter.name,
        "documents": len(rows),
        "parse_s": round(total_parse, 2),
        "chunk_pct_of_parse": totals,
        "rows": rows,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"total: {len(rows)} documents, parse {total_parse:.2f}s, chunking as % of parse: "
            + ", ".join(f"{s} {p}%" for s, p in totals.items())
            + f" (counter {counter.name})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

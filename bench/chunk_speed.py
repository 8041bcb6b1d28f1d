"""Chunking time vs parse time per corpus document (goal: chunking well under 5%).

Usage: ``python -m bench.chunk_speed [--corpus DIR] [--strategy S]... [FILE ...] [--json]
[--out PATH]``

For every document: parse (timed, best of ``--parse-repeat`` runs), then chunk with
each strategy (timed, best of ``--repeat`` runs; ``--clock cpu`` times CPU instead of
elapsed time) using the default embedder's tokenizer as token counter when it is
available (the approximation otherwise). Prints one row per document and the
totals; the ratio is chunking seconds / parse seconds. Both run in this process, one
after the other, so machine load affects them alike. Parsing is repeated too (default
twice) so that neither side is charged for one-time warm-up (the first PDF of a run
loads the layout model) or favoured by a single lucky or unlucky run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.options import DEFAULT_CORPUS, write_json
from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document, resolve_options
from chunkweave.chunking.models import TokenCounter
from chunkweave.parsers import ParseError, parse_document


def _counter() -> tuple[TokenCounter, int | None]:
    try:
        from chunkweave.storage.config import EmbedderConfig
        from chunkweave.storage.embedders import make_embedder

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
    ap.add_argument("--repeat", type=int, default=3, help="chunking runs per document")
    ap.add_argument(
        "--parse-repeat",
        type=int,
        default=2,
        help="parse runs per document (the best counts; 1 = the single first run)",
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, help="also write the JSON summary to this file")
    ap.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall: elapsed time; cpu: this process's CPU time (all its threads), which "
        "other jobs on a busy machine disturb less",
    )
    args = ap.parse_args()
    files = [Path(f) for f in args.files] or sorted(
        p for p in args.corpus.iterdir() if p.suffix.lower() in (".pdf", ".docx")
    )
    strategies = args.strategies or ["elements"]
    counter, limit = _counter()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    rows = []
    for path in files:
        parse_s = float("inf")
        try:
            for _ in range(max(args.parse_repeat, 1)):
                started = clock()
                doc = parse_document(path)
                parse_s = min(parse_s, clock() - started)
        except ParseError as err:
            print(f"skip {path.name}: {err}", file=sys.stderr)
            continue
        row: dict[str, Any] = {
            "doc": path.name,
            "elements": len(doc.elements),
            "parse_s": round(parse_s, 4),
        }
        for strategy in strategies:
            opts = resolve_options(ChunkOptions(strategy=strategy), limit)
            best = float("inf")
            for _ in range(args.repeat):
                t0 = clock()
                chunks = chunk_document(doc, opts, counter, doc_id=path.name)
                best = min(best, clock() - t0)
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
    worst = {
        s: max((float(r[f"{s}_pct_of_parse"] or 0) for r in rows), default=0.0) for s in strategies
    }
    summary = {
        "counter": counter.name,
        "clock": args.clock,
        "repeat": args.repeat,
        "parse_repeat": max(args.parse_repeat, 1),
        "documents": len(rows),
        "parse_s": round(total_parse, 2),
        "chunk_pct_of_parse": totals,
        "worst_document_pct_of_parse": worst,
        "rows": rows,
    }
    write_json(args.out, summary)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"total: {len(rows)} documents, parse {total_parse:.2f}s, chunking as % of parse: "
            + ", ".join(f"{s} {p}%" for s, p in totals.items())
            + f" (counter {counter.name}); worst document: "
            + ", ".join(f"{s} {p}%" for s, p in worst.items())
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

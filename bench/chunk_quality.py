"""Chunk quality of chunkweave's strategies vs peer chunkers, on the shared corpus, in one run.

Chunkers compared (budget 512 tokens everywhere, counted with the default embedder's
own WordPiece tokenizer, ``storage/models/all-MiniLM-L6-v2-int8/tokenizer.json``):

- ``chunkweave:elements`` and ``chunkweave:fixed`` (auto parse mode, max_tokens=512);
- ``langchain:recursive``: LangChain's RecursiveCharacterTextSplitter with its Markdown
  separators, on pymupdf4llm (+layout) Markdown, chunk_size=512 tokens, no overlap;
- ``unstructured:by_title``: ``chunk_by_title`` on unstructured's elements (fast PDF
  strategy), max_characters=2048 (about 512 tokens; it counts characters only);
- ``docling:hybrid``: docling-core's HybridChunker, max_tokens=512 (DOCX only: docling's
  PDF path needs hub models).

Per chunker and group (pdf, docx, outline): documents, chunks, tokens p50/p95/max,
tables kept whole (share of GT tables whose cells all sit in one chunk), heading path
correct (share of chunks whose heading path ends in the GT heading they sit under; a
chunk with no heading path metadata counts as carrying the Markdown heading it starts
with, if any). For chunkweave the chunking time is also shown as a share of parse time.

    bench/.venv-peers/bin/python -m bench.chunk_quality [--chunkers a,b] [--docs x,y]
        [--max-pages N] [--no-outline] [--timeout S] [--json bench/results/chunk_quality.json]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.chunkers import BUDGET, CHUNKERS, run_chunker
from bench.groundtruth import GroundTruth, corpus_documents, load_groundtruth
from bench.normalize import normalize_heading, tokens
from bench.options import corpus_parser, group_table, print_failures, write_json
from bench.parse_quality import group_of, truncated
from bench.peer_chunkers import WordPieceCounter
from bench.scoring import chunk_gt_headings, heading_path_correct, percentile, table_kept_whole
from bench.views import ChunkView
from bench.worker_protocol import run_worker


def outline_stream(gt: GroundTruth) -> list[tuple[bool, str]]:
    """Build a reading-order stream for an outline-only document from its text layer.

    Each page's text comes from PyMuPDF; each outline title is located in its page's
    words (in order) and marked as a heading there. Titles not found on their page are
    inserted at the top of the page (the outline says the section starts there).
    """
    import pymupdf

    by_page: dict[int, list[str]] = defaultdict(list)
    for h in gt.headings:
        by_page[h.page or 1].append(h.text)
    stream: list[tuple[bool, str]] = []
    with pymupdf.open(gt.doc) as pdf:
        for number, page in enumerate(pdf, start=1):
            words = tokens(page.get_text())
            pos = 0
            for title in by_page.get(number, []):
                needle = normalize_heading(title).split()
                hit = _find(words, needle, pos)
                if hit is None:
                    stream.append((True, title))
                    continue
                end = hit + len(needle)
                # the outline may omit the number the page prints ("1.1 The R environment")
                while hit > pos and _is_number_token(words[hit - 1]):
                    hit -= 1
                stream.append((False, " ".join(words[pos:hit])))
                stream.append((True, " ".join(words[hit:end])))
                pos = end
            stream.append((False, " ".join(words[pos:])))
    return stream


def _is_number_token(word: str) -> bool:
    return word.isdigit()


def _find(words: list[str], needle: list[str], start: int) -> int | None:
    if not needle:
        return None
    for i in range(start, len(words) - len(needle) + 1):
        if words[i : i + len(needle)] == needle:
            return i
    return None


def score(
    gt: GroundTruth, stream: list[tuple[bool, str]], views: list[ChunkView], counter: Any
) -> dict[str, Any]:
    """Score one document's chunks: sizes, tables kept whole, heading paths."""
    texts = [v.text for v in views]
    expected = chunk_gt_headings(stream, views)
    partial = gt.source == "outline"
    correct = sum(
        heading_path_correct(v.heading_path, e, partial_gt=partial)
        for v, e in zip(views, expected, strict=True)
    )
    whole = sum(table_kept_whole(t.cells, texts) for t in gt.tables)
    return {
        "chunks": len(views),
        "tokens": [counter.count(t) for t in texts],
        "tables": len(gt.tables),
        "tables_whole": whole,
        "heading_ok": correct,
        "located": sum(e is not None for e in expected),
    }


def run(args: argparse.Namespace) -> dict[str, dict[str, dict[str, Any]]]:
    """Chunk every selected document with every selected chunker; return the rows."""
    docs = corpus_documents(args.corpus, include_outline=not args.no_outline)
    if args.docs:
        wanted = set(args.docs.split(","))
        docs = [d for d in docs if d.name in wanted or d.stem in wanted]
    counter = WordPieceCounter()
    names = args.chunkers or list(CHUNKERS)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        gts: dict[Path, GroundTruth] = {}
        inputs: dict[Path, Path] = {}
        streams: dict[Path, list[tuple[bool, str]]] = {}
        for d in docs:
            inputs[d] = truncated(d, args.max_pages, Path(tmpdir)) if args.max_pages else d
            gt = load_groundtruth(d)
            assert gt is not None, d
            gt.doc = inputs[d]  # the (possibly cut) file the chunkers see
            if args.max_pages and gt.source == "outline":
                gt.headings = [h for h in gt.headings if (h.page or 1) <= args.max_pages]
            gts[d] = gt
            streams[d] = outline_stream(gt) if gt.source == "outline" else gt.stream
        for name in names:
            formats, _ = CHUNKERS[name]
            mine = [d for d in docs if d.suffix.lower().lstrip(".") in formats]
            print(f"[chunk_quality] {name}: {len(mine)} documents", file=sys.stderr)
            records, error, _ = run_worker(
                "bench.chunk_quality",
                name,
                [inputs[d] for d in mine],
                timeout=args.timeout,
                extra=("--worker",),
            )
            by_name = {Path(r["path"]).name: r for r in records}
            rows: dict[str, dict[str, Any]] = defaultdict(
                lambda: (
                    {"docs": 0, "failed": [], "chunks": 0, "tokens": [], "tables": 0}
                    | {"tables_whole": 0, "heading_ok": 0, "located": 0, "parse_s": 0.0}
                    | {"chunk_s": 0.0}
                )
            )
            for d in mine:
                row = rows[group_of(gts[d])]
                rec = by_name.get(d.name)
                if rec is None or "error" in rec:
                    row["failed"].append(f"{d.name}: {rec['error'] if rec else error}")
                views = [
                    ChunkView(t, tuple(h), tuple(p), k)
                    for t, h, p, k in (rec or {}).get("chunks", [])
                ]
                s = score(gts[d], streams[d], views, counter)
                row["docs"] += 1
                for key in ("chunks", "tables", "tables_whole", "heading_ok", "located"):
                    row[key] += s[key]
                row["tokens"] += s["tokens"]
                for key in ("parse_s", "chunk_s"):
                    row[key] += (rec or {}).get(key, 0.0)
            results[name] = {g: _summary(r) for g, r in sorted(rows.items())}
    return results


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    toks = row.pop("tokens")
    out = dict(row)
    out.update(
        tokens_p50=percentile(toks, 50),
        tokens_p95=percentile(toks, 95),
        tokens_max=max(toks, default=0),
        tokens_total=sum(toks),
        tables_whole_share=row["tables_whole"] / row["tables"] if row["tables"] else None,
        heading_ok_share=row["heading_ok"] / row["chunks"] if row["chunks"] else None,
        chunk_vs_parse=row["chunk_s"] / row["parse_s"] if row["parse_s"] else None,
    )
    return out


def render(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Render the results as one plain-text table (one line per chunker and group)."""
    head = (
        f"{'chunker':22s} {'group':7s} {'docs':>4s} {'chunks':>6s} {'p50':>5s} {'p95':>5s} "
        f"{'max':>5s} {'tokens':>7s} {'tables whole':>12s} {'heading ok':>10s} {'chunk/parse':>11s}"
    )

    def row(name: str, group: str, r: Mapping[str, Any]) -> str:
        tw = f"{r['tables_whole']}/{r['tables']}" if r["tables"] else "-"
        ho = f"{r['heading_ok_share']:.2f}" if r["heading_ok_share"] is not None else "-"
        cp = f"{100 * r['chunk_vs_parse']:.1f}%" if r["chunk_vs_parse"] is not None else "-"
        return (
            f"{name:22s} {group:7s} {r['docs']:4d} {r['chunks']:6d} {r['tokens_p50']:5d} "
            f"{r['tokens_p95']:5d} {r['tokens_max']:5d} {r['tokens_total']:7d} {tw:>12s} "
            f"{ho:>10s} {cp:>11s}"
        )

    return group_table(head, results, row)


def _parser() -> argparse.ArgumentParser:
    ap = corpus_parser(__doc__, "chunkers", CHUNKERS, timeout=1800)
    ap.add_argument("--no-outline", action="store_true", help="skip the long outline PDFs")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (or, with ``--worker``, one chunker in this process)."""
    argv = sys.argv[1:] if argv is None else argv
    if "--worker" in argv:
        return run_chunker([a for a in argv if a != "--worker"])
    args = _parser().parse_args(argv)
    results = run(args)
    print(render(results))
    print_failures(results)
    write_json(args.json, {"budget": BUDGET, "max_pages": args.max_pages, "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())

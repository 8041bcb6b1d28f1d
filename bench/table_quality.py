"""Table structure of chunkweave and its peers on every table ground truth, in one run.

For every document of a corpus whose ground truth states its tables (docling JSON,
``.tables.json``), each system parses it in a child process of its own, and its
tables are scored:

- **adjacency** (the ICDAR 2013 table-structure measure, :mod:`bench.adjacency`):
  precision, recall and F1 of the relations between neighbouring non-empty cells,
  per document; macro figures are the mean over documents (a document a system
  fails on scores 0), micro figures pool the relations;
- **spans**: ground-truth cells spanning columns that the system spans over exactly
  the cells below them;
- **shape** (as in :mod:`bench.parse_quality`): matched tables whose rows x columns
  equal the ground truth's, and table detection (matched / predicted / GT).

    bench/.venv-peers/bin/python -m bench.table_quality [--corpus ../shared/corpus-extra]
        [--systems chunkweave:auto,pymupdf4llm+layout] [--docs x,y] [--json PATH]
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.adjacency import AdjacencyScore, score_adjacency
from bench.groundtruth import GroundTruth, load_groundtruth
from bench.options import DEFAULT_CORPUS, add_names, bench_parser, write_json
from bench.peers import PARSERS
from bench.scoring import match_tables
from bench.worker_protocol import item_from_json, run_worker

#: The systems compared by default: chunkweave's default mode and the strongest peer.
DEFAULT_SYSTEMS = ("chunkweave:auto", "pymupdf4llm+layout")


def table_documents(corpus: Path) -> dict[Path, GroundTruth]:
    """Documents of ``corpus`` whose ground truth lists at least one table, by path."""
    out: dict[Path, GroundTruth] = {}
    for p in sorted(corpus.iterdir()):
        if p.suffix.lower() not in (".pdf", ".docx"):
            continue
        gt = load_groundtruth(p)
        if gt is not None and gt.tables_known and gt.tables:
            out[p] = gt
    return out


def doc_row(adj: AdjacencyScore, shape_ok: int, tp: int, n_pred: int, n_gt: int) -> dict[str, Any]:
    """Return the figures of one (system, document)."""
    return {
        "adj_precision": adj.precision,
        "adj_recall": adj.recall,
        "adj_f1": adj.f1,
        "adj_counts": [adj.tp, adj.n_pred, adj.n_gt],
        "spans": [adj.spans_ok, adj.spans],
        "shape": [shape_ok, tp],
        "tables": [tp, n_pred, n_gt],
    }


def summary(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Return a system's macro (mean over documents) and micro (pooled) figures."""
    n = len(rows) or 1

    def total(key: str, i: int) -> int:
        return sum(r[key][i] for r in rows.values())

    tp, pred, gt = total("adj_counts", 0), total("adj_counts", 1), total("adj_counts", 2)
    micro = AdjacencyScore(tp, pred, gt)
    return {
        "docs": len(rows),
        "macro_precision": sum(r["adj_precision"] for r in rows.values()) / n,
        "macro_recall": sum(r["adj_recall"] for r in rows.values()) / n,
        "macro_f1": sum(r["adj_f1"] for r in rows.values()) / n,
        "micro_precision": micro.precision,
        "micro_recall": micro.recall,
        "micro_f1": micro.f1,
        "spans": [total("spans", 0), total("spans", 1)],
        "shape": [total("shape", 0), total("shape", 1)],
        "tables": [total("tables", 0), total("tables", 1), total("tables", 2)],
    }


def run(
    corpus: Path, systems: list[str], docs: str | None, timeout: float
) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, list[str]]]:
    """Parse and score every table document; return per-document rows and failures."""
    gts = table_documents(corpus)
    if docs:
        wanted = set(docs.split(","))
        gts = {d: g for d, g in gts.items() if d.name in wanted or d.stem in wanted}
    per_doc: dict[str, dict[str, dict[str, Any]]] = {}
    failed: dict[str, list[str]] = {}
    for name in systems:
        system = PARSERS[name]
        mine = [d for d in gts if d.suffix.lower().lstrip(".") in system.formats]
        print(f"[table_quality] {name}: {len(mine)} documents", file=sys.stderr)
        records, error, _ = run_worker(
            "bench.peers", name, mine, timeout=timeout, extra=("--items",)
        )
        by_name = {Path(r["path"]).name: r for r in records}
        for d in mine:
            rec = by_name.get(d.name)
            if rec is None or "error" in rec:
                failed.setdefault(name, []).append(
                    f"{d.name}: {rec['error'] if rec else (error or 'no output')}"
                )
            items = [item_from_json(i) for i in rec.get("items", [])] if rec else []
            gt = gts[d].tables
            ts = match_tables(items, gt)
            per_doc.setdefault(name, {})[d.name] = doc_row(
                score_adjacency(items, gt), ts.shape_ok, ts.tp, ts.n_pred, ts.n_gt
            )
    return per_doc, failed


def _f(x: float) -> str:
    return f"{x:5.2f}"


def render(per_doc: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """Render one line per (document, system), then one summary line per system."""
    head = (
        f"{'document':34s} {'system':20s} {'adj-P':>5s} {'adj-R':>5s} {'adjF1':>5s} "
        f"{'relations':>13s} {'spans':>6s} {'shape':>6s} {'tables':>8s}"
    )
    out = [head, "-" * len(head)]
    names = sorted({d for rows in per_doc.values() for d in rows})

    def frac(pair: list[int]) -> str:
        return f"{pair[0]}/{pair[1]}"

    for doc in names:
        for system, rows in per_doc.items():
            r = rows.get(doc)
            if r is None:
                continue
            tp, n_pred, n_gt = r["adj_counts"]
            out.append(
                f"{doc[:34]:34s} {system:20s} {_f(r['adj_precision'])} {_f(r['adj_recall'])} "
                f"{_f(r['adj_f1'])} {f'{tp}/{n_pred}/{n_gt}':>13s} {frac(r['spans']):>6s} "
                f"{frac(r['shape']):>6s} {'/'.join(map(str, r['tables'])):>8s}"
            )
    out += ["", f"{'system':20s} docs macro P/R/F1     micro P/R/F1     spans  shape  tables"]
    for system, rows in per_doc.items():
        s = summary(rows)
        out.append(
            f"{system:20s} {s['docs']:4d} {_f(s['macro_precision'])} {_f(s['macro_recall'])} "
            f"{_f(s['macro_f1'])}  {_f(s['micro_precision'])} {_f(s['micro_recall'])} "
            f"{_f(s['micro_f1'])}  {frac(s['spans']):>5s} {frac(s['shape']):>6s} "
            f"{'/'.join(map(str, s['tables']))}"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the tables; optionally write JSON."""
    ap = bench_parser(__doc__)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    add_names(ap, "systems", list(PARSERS))
    ap.add_argument("--docs", help="comma list of document names or stems")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per system run")
    args = ap.parse_args(argv)
    systems = args.systems or list(DEFAULT_SYSTEMS)
    per_doc, failed = run(args.corpus, systems, args.docs, args.timeout)
    print(render(per_doc))
    for name, fails in failed.items():
        for f in fails:
            print(f"  ! {name} {f}")
    write_json(
        args.json,
        {
            "corpus": str(args.corpus),
            "per_doc": per_doc,
            "summary": {name: summary(rows) for name, rows in per_doc.items()},
            "failed": failed,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Parse speed and peak memory on the long documents: chunkweave (each mode) vs the peers.

Each (system, document) pair runs in a fresh child process (``python -m bench.peers``),
so every measurement starts cold and the child's own peak RSS is read from
``os.wait4``. Pages/s is pages over the child's parse time, which includes what the
first parse of a process pays: the adapters import their library lazily, so library
imports and model loading count (as they do for one ``chunkweave parse`` run). The
table shows each system's pages/s as a ratio to pymupdf4llm with pymupdf-layout, the
strongest offline PDF peer.

    bench/.venv-peers/bin/python -m bench.parse_speed [--systems a,b] [--docs x,y]
        [--max-pages N] [--timeout S] [--warm] [--repeat N]
        [--json bench/results/parse_speed_100pages.json]

``--max-pages`` cuts the PDFs to their first N pages (the DOCX cannot be cut);
``--timeout`` bounds each (system, document) run; a timed-out run is reported as such.
``--warm`` has each child parse the document a second time and also reports that
parse's pages/s (``warm``: imports done, models loaded: a long-running worker's
throughput); peak RSS then covers both parses. ``--repeat N`` runs N interleaved
rounds and keeps each system's fastest (the highest peak RSS): on a shared, busy
machine the minimum time is the least disturbed measurement. The last column, the
child's CPU seconds (start-up, imports and every parse it ran), is the figure least
moved by other load.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.options import corpus_parser, write_json
from bench.parse_quality import truncated
from bench.peers import PARSERS, page_count
from bench.worker_protocol import run_worker

LONG_DOCS = ("pdf2image-memory-error-test-400p.pdf", "R-intro.pdf", "handbook-872p.docx")
#: Page counts for DOCX files that carry none (no ``docProps/app.xml``, no rendered page
#: breaks); the handbook's comes from the corpus README and MANIFEST notes ("872 pp").
DOCX_PAGES = {"handbook-872p.docx": 872}
BASELINE = "pymupdf4llm+layout"


def measure(
    system: str, doc: Path, pages: int, timeout: float, warm: bool = False
) -> dict[str, Any]:
    """Parse ``doc`` with ``system`` in a child process; return its speed and memory.

    With ``warm`` the child parses ``doc`` twice; ``warm_pages_per_s`` is the second
    parse's speed (None when it did not finish).
    """
    files = [doc, doc] if warm else [doc]
    records, error, usage = run_worker("bench.peers", system, files, timeout=timeout)
    rec = records[0] if records else {}
    error = rec.get("error") or error
    seconds = rec.get("seconds")
    out: dict[str, Any] = {
        "pages": pages,
        "seconds": seconds,
        "pages_per_s": pages / seconds if seconds and not error else None,
        "peak_rss_mb": usage.ru_maxrss / 1024 if usage is not None else None,
        # CPU seconds of the whole child (interpreter start, imports, every parse):
        # unlike wall time, barely moved by other load on a shared machine.
        "child_cpu_s": usage.ru_utime + usage.ru_stime if usage is not None else None,
        "counts": rec.get("counts", {}),
        "error": error,
    }
    if warm:
        again = records[1] if len(records) > 1 and not records[1].get("error") else {}
        out["warm_seconds"] = again.get("seconds")
        out["warm_pages_per_s"] = pages / again["seconds"] if again.get("seconds") else None
    return out


def run(args: argparse.Namespace) -> dict[str, dict[str, dict[str, Any]]]:
    """Measure every selected system on every selected long document."""
    names = args.docs.split(",") if args.docs else list(LONG_DOCS)
    systems = args.systems or list(PARSERS)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        for name in names:
            doc = args.corpus / name
            if args.max_pages:
                doc = truncated(doc, args.max_pages, Path(tmpdir))
            pages = page_count(doc) or DOCX_PAGES.get(name, 0)
            fmt = doc.suffix.lower().lstrip(".")
            results[name] = {}
            # Rounds interleave the systems, so a burst of load elsewhere on the
            # machine hits them alike; each system keeps its fastest round.
            for _ in range(args.repeat):
                for system in systems:
                    if fmt not in PARSERS[system].formats:
                        continue
                    print(f"[parse_speed] {system} on {name} ({pages} pp)", file=sys.stderr)
                    r = measure(system, doc, pages, args.timeout, args.warm)
                    # progress on stderr, so a long run that is cut short still tells something
                    print(f"[parse_speed]   -> {json.dumps(r)}", file=sys.stderr)
                    results[name][system] = best_of(results[name].get(system), r)
    return results


def best_of(kept: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """Merge two measurements of one (system, document): fastest speeds, highest peak RSS.

    Speed is taken from the faster successful round (cold and warm separately),
    child CPU from the cheapest; memory from the round that used most, so
    repeating never hides a peak.
    """
    if kept is None:
        return {**new, "rounds": 1}

    def speed(r: dict[str, Any], key: str) -> float:
        return r.get(key) or 0.0

    out = dict(kept if speed(kept, "pages_per_s") >= speed(new, "pages_per_s") else new)
    if "warm_pages_per_s" in new:
        warm = kept if speed(kept, "warm_pages_per_s") >= speed(new, "warm_pages_per_s") else new
        out["warm_seconds"] = warm.get("warm_seconds")
        out["warm_pages_per_s"] = warm.get("warm_pages_per_s")
    peaks = [r["peak_rss_mb"] for r in (kept, new) if r.get("peak_rss_mb") is not None]
    out["peak_rss_mb"] = max(peaks) if peaks else None
    cpus = [r["child_cpu_s"] for r in (kept, new) if r.get("child_cpu_s") and not r.get("error")]
    out["child_cpu_s"] = min(cpus) if cpus else None
    out["rounds"] = kept.get("rounds", 1) + 1
    return out


def render(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Render one block per document: pages/s, ratio to the baseline, peak RSS, output.

    When the results hold warm figures (``--warm``), a warm pages/s column follows.
    """
    lines: list[str] = []
    for doc, rows in results.items():
        base = rows.get(BASELINE, {}).get("pages_per_s")
        pages = next(iter(rows.values()), {}).get("pages", "?")
        warm = any("warm_pages_per_s" in r for r in rows.values())
        lines.append(f"{doc} ({pages} pages)")
        head = (
            f"  {'system':20s} {'pages/s':>8s} {'x ' + BASELINE:>21s} {'seconds':>8s} "
            f"{'peak RSS MB':>11s} {'headings':>8s} {'tables':>6s}"
        )
        head += f" {'warm p/s':>9s}" if warm else ""
        head += f" {'child CPU s':>11s}"
        lines += [head, "  " + "-" * (len(head) - 2)]
        for system, r in rows.items():
            pps = r["pages_per_s"]
            ratio = f"{pps / base:.2f}x" if pps and base else "-"
            rss = f"{r['peak_rss_mb']:.0f}" if r["peak_rss_mb"] is not None else "-"
            secs = f"{r['seconds']:.1f}" if r["seconds"] is not None else "-"
            counts = r["counts"]
            line = (
                f"  {system:20s} {pps if pps else 0:8.2f} {ratio:>21s} {secs:>8s} {rss:>11s} "
                f"{counts.get('heading', 0):8d} {counts.get('table', 0):6d}"
            )
            if warm:
                wps = r.get("warm_pages_per_s")
                line += f" {wps:9.2f}" if wps else f" {'-':>9s}"
            cpu = r.get("child_cpu_s")
            line += f" {cpu:11.2f}" if cpu else f" {'-':>11s}"
            if r["error"]:
                line += f"  ! {r['error'][:90]}"
            lines.append(line)
        lines.append("")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    ap = corpus_parser(
        __doc__,
        "systems",
        PARSERS,
        timeout=900,
        docs_help=f"comma list (default: {','.join(LONG_DOCS)})",
    )
    ap.add_argument("--warm", action="store_true", help="also time a second parse per child")
    ap.add_argument(
        "--repeat", type=int, default=1, help="rounds per system; the fastest counts (noisy hosts)"
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table; optionally write JSON."""
    args = _parser().parse_args(argv)
    results = run(args)
    print(render(results))
    payload = {
        "max_pages": args.max_pages,
        "warm": args.warm,
        "repeat": args.repeat,
        "baseline": BASELINE,
        "results": results,
    }
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())

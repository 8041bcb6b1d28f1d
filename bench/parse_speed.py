"""Parse speed and peak memory on the long documents: chunkweave (each mode) vs the peers.

Each (system, document) pair runs in a fresh child process (``python -m bench.peers``),
so every measurement starts cold and the child's own peak RSS is read from
``os.wait4``. Pages/s is pages over the child's parse time (library imports excluded,
model loading included). The table shows each system's pages/s as a ratio to
pymupdf4llm with pymupdf-layout, the strongest offline PDF peer.

    bench/.venv-peers/bin/python -m bench.parse_speed [--systems a,b] [--docs x,y]
        [--max-pages N] [--timeout S] [--json bench/results/parse_speed.json]

``--max-pages`` cuts the PDFs to their first N pages (the DOCX cannot be cut);
``--timeout`` bounds each (system, document) run; a timed-out run is reported as such.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.parse_quality import DEFAULT_CORPUS, truncated
from bench.peers import PARSERS, page_count, run_worker

LONG_DOCS = ("pdf2image-memory-error-test-400p.pdf", "R-intro.pdf", "handbook-872p.docx")
#: Page counts for DOCX files that carry none (no ``docProps/app.xml``, no rendered page
#: breaks); the handbook's comes from the corpus README and MANIFEST notes ("872 pp").
DOCX_PAGES = {"handbook-872p.docx": 872}
BASELINE = "pymupdf4llm+layout"


def measure(system: str, doc: Path, pages: int, timeout: float) -> dict[str, Any]:
    """Parse ``doc`` with ``system`` in a child process; return its speed and memory."""
    records, error, usage = run_worker("bench.peers", system, [doc], timeout=timeout)
    rec = records[0] if records else {}
    error = rec.get("error") or error
    seconds = rec.get("seconds")
    return {
        "pages": pages,
        "seconds": seconds,
        "pages_per_s": pages / seconds if seconds and not error else None,
        "peak_rss_mb": usage.ru_maxrss / 1024 if usage is not None else None,
        "counts": rec.get("counts", {}),
        "error": error,
    }


def run(args: argparse.Namespace) -> dict[str, dict[str, dict[str, Any]]]:
    """Measure every selected system on every selected long document."""
    names = args.docs.split(",") if args.docs else list(LONG_DOCS)
    systems = args.systems.split(",") if args.systems else list(PARSERS)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        for name in names:
            doc = args.corpus / name
            if args.max_pages:
                doc = truncated(doc, args.max_pages, Path(tmpdir))
            pages = page_count(doc) or DOCX_PAGES.get(name, 0)
            fmt = doc.suffix.lower().lstrip(".")
            results[name] = {}
            for system in systems:
                if fmt not in PARSERS[system].formats:
                    continue
                print(f"[parse_speed] {system} on {name} ({pages} pp)", file=sys.stderr)
                r = results[name][system] = measure(system, doc, pages, args.timeout)
                # progress on stderr, so a long run that is cut short still tells something
                print(f"[parse_speed]   -> {json.dumps(r)}", file=sys.stderr)
    return results


def render(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Render one block per document: pages/s, ratio to the baseline, peak RSS, output."""
    lines: list[str] = []
    for doc, rows in results.items():
        base = rows.get(BASELINE, {}).get("pages_per_s")
        pages = next(iter(rows.values()), {}).get("pages", "?")
        lines.append(f"{doc} ({pages} pages)")
        head = (
            f"  {'system':20s} {'pages/s':>8s} {'x ' + BASELINE:>21s} {'seconds':>8s} "
            f"{'peak RSS MB':>11s} {'headings':>8s} {'tables':>6s}"
        )
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
            if r["error"]:
                line += f"  ! {r['error'][:90]}"
            lines.append(line)
        lines.append("")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--systems", help=f"comma list (default all: {','.join(PARSERS)})")
    ap.add_argument("--docs", help=f"comma list (default: {','.join(LONG_DOCS)})")
    ap.add_argument("--max-pages", type=int, default=0, help="cut PDFs to N pages (0: all)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per system and document")
    ap.add_argument("--json", type=Path, help="also write the results here")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table; optionally write JSON."""
    args = _parser().parse_args(argv)
    unknown = set((args.systems or "").split(",")) - set(PARSERS) - {""}
    if unknown:
        print(f"unknown systems: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    results = run(args)
    print(render(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"max_pages": args.max_pages, "baseline": BASELINE, "results": results}
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Parse quality of chunkweave (each PDF mode) and its peers, on the same documents, in one run.

For every corpus document with ground truth, every system parses it (each system in its
own child process, so one system's global state, e.g. pymupdf4llm switching PyMuPDF's
layout engine on, cannot leak into another's), and the normalised results are scored
with the shared functions in :mod:`bench.scoring`:

- headings: precision / recall / F1 of heading texts, and level accuracy (rank of the
  level, only where the ground truth has more than one level);
- tables: precision / recall (matched by cell-text overlap) and shape agreement
  (rows x cols equal to the ground truth's, share of matched tables);
- text: unigram and bigram token F1 against the ground-truth Markdown;
- furniture: GT running headers/footers found in body text more often than the GT
  body itself holds their text (leaked / total).

Groups are scored separately: ``pdf`` and ``docx`` (docling ground truth),
``outline`` (PDF bookmarks; recall is the meaningful number there; tables too where a
``.tables.json`` lies next to it) and ``tables`` (a ``.tables.json`` only, as in
``corpus-extra``). Where there is no header/footer annotation (``outline``,
``tables``), furniture is the proxy :func:`bench.scoring.running_line_leaks`:
page numbers and running lines at the page edges of the body, per page.

``--outline-blind`` removes the outline (bookmarks) from every PDF before any system
reads it, so heading detection is scored on fonts, numbering and layout alone.

    bench/.venv-peers/bin/python -m bench.parse_quality [--systems a,b] [--docs x,y]
        [--max-pages N] [--no-outline] [--outline-blind] [--timeout S]
        [--corpus ../shared/corpus-extra] [--json bench/results/parse_quality.json]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.groundtruth import GroundTruth, corpus_documents, load_groundtruth
from bench.normalize import markdown_body_text
from bench.options import (
    corpus_parser,
    group_table,
    print_failures,
    write_json,
)
from bench.peers import PARSERS
from bench.scoring import (
    furniture_leaks,
    level_accuracy,
    match_headings,
    match_tables,
    prf,
    running_line_leaks,
    token_f1,
)
from bench.views import Item
from bench.worker_protocol import item_from_json, run_worker


@dataclass
class Tally:
    """Running sums for one (system, group) row of the results table."""

    docs: int = 0
    failed: list[str] = field(default_factory=list)
    h_tp: int = 0
    h_pred: int = 0
    h_gt: int = 0
    level_ok: float = 0.0
    level_n: int = 0
    t_tp: int = 0
    t_pred: int = 0
    t_gt: int = 0
    t_shape: int = 0
    text_f1: list[float] = field(default_factory=list)
    bigram_f1: list[float] = field(default_factory=list)
    leaked: int = 0
    furniture: int = 0
    proxy_leaked: int = 0
    proxy_pages: int = 0
    seconds: float = 0.0

    def add(self, gt: GroundTruth, items: list[Item]) -> None:
        """Score one document's items against its ground truth and add them in."""
        self.docs += 1
        if gt.source != "tables":  # a .tables.json alone knows no headings
            hs = match_headings(items, gt.headings)
            self.h_tp, self.h_pred, self.h_gt = (
                self.h_tp + hs.tp,
                self.h_pred + hs.n_pred,
                self.h_gt + hs.n_gt,
            )
            if gt.levels_informative:
                # Ranked per document (a system's level offsets differ from one
                # document to the next; pooled, they would count as errors).
                pairs = [(g, p) for g, p in hs.level_pairs if g != 0]
                acc = level_accuracy(pairs)
                if acc is not None:
                    self.level_ok += acc * len(pairs)
                    self.level_n += len(pairs)
        if gt.tables_known:
            ts = match_tables(items, gt.tables)
            self.t_tp += ts.tp
            self.t_pred += ts.n_pred
            self.t_gt += ts.n_gt
            self.t_shape += ts.shape_ok
        if gt.source != "docling":
            leaked, pages = running_line_leaks(items, gt.headings)
            self.proxy_leaked += leaked
            self.proxy_pages += pages
            return  # no text or furniture annotation
        body = [i.text for i in items if i.kind != "furniture"]
        if gt.markdown is not None:
            reference = markdown_body_text(gt.markdown)
            self.text_f1.append(token_f1("\n".join(body), reference))
            self.bigram_f1.append(token_f1("\n".join(body), reference, n=2))
        gt_body = [text for _, text in gt.stream]
        leaked, total = furniture_leaks(body, gt.furniture, gt_body)
        self.leaked += leaked
        self.furniture += total

    def row(self) -> dict[str, Any]:
        """Summarise as the figures printed (and written to JSON)."""
        hp, hr, hf = prf(self.h_tp, self.h_pred, self.h_gt)
        tp, tr, _ = prf(self.t_tp, self.t_pred, self.t_gt)

        def mean(xs: list[float]) -> float | None:
            return sum(xs) / len(xs) if xs else None

        return {
            "docs": self.docs,
            "failed": self.failed,
            "heading_precision": hp,
            "heading_recall": hr,
            "heading_f1": hf,
            "heading_counts": [self.h_tp, self.h_pred, self.h_gt],
            "level_accuracy": self.level_ok / self.level_n if self.level_n else None,
            "level_pairs": self.level_n,
            "table_precision": tp if self.t_pred or self.t_gt else None,
            "table_recall": tr if self.t_gt else None,
            "table_shape": self.t_shape / self.t_tp if self.t_tp else None,
            "table_counts": [self.t_tp, self.t_pred, self.t_gt, self.t_shape],
            "text_f1": mean(self.text_f1),
            "bigram_f1": mean(self.bigram_f1),
            "furniture_leaked": self.leaked,
            "furniture_total": self.furniture,
            "furniture_proxy_per_page": (
                self.proxy_leaked / self.proxy_pages if self.proxy_pages else None
            ),
            "seconds": self.seconds,
        }


def group_of(gt: GroundTruth) -> str:
    """Return the results group of a document: ``outline``, ``pdf`` or ``docx``."""
    if gt.source in ("outline", "tables"):
        return gt.source
    return gt.doc.suffix.lower().lstrip(".")


def truncated(doc: Path, max_pages: int, tmp: Path, *, blind: bool = False) -> Path:
    """Return ``doc`` cut to its first ``max_pages`` pages (PDF only; others unchanged).

    ``max_pages`` 0 keeps every page. A cut copy keeps the outline entries of its
    pages; with ``blind`` the copy has no outline (bookmarks) at all. A PDF that
    needs neither change is returned as it is.
    """
    if doc.suffix.lower() != ".pdf":
        return doc
    import pymupdf

    with pymupdf.open(doc) as src:
        cut = 0 < max_pages < src.page_count
        unmark = blind and bool(src.get_toc())
        if not (cut or unmark):
            return doc
        out = pymupdf.open()
        out.insert_pdf(src, from_page=0, to_page=(max_pages if cut else src.page_count) - 1)
        # insert_pdf copies no outline: keep the entries that point into the kept pages
        # (before, every cut PDF was scored outline-blind without saying so).
        last = out.page_count
        toc = [] if blind else [e for e in src.get_toc(simple=True) if 1 <= e[2] <= last]
        out.set_toc(_top_down(toc))
        target = tmp / doc.name
        out.save(target)
        out.close()
    return target


def _top_down(toc: list[list[Any]]) -> list[list[Any]]:
    """Return outline rows whose levels never jump by more than one (``set_toc`` rule)."""
    out: list[list[Any]] = []
    for level, title, page in toc:
        level = min(int(level), (out[-1][0] + 1) if out else 1)
        out.append([level, title, page])
    return out


def run(
    args: argparse.Namespace, per_doc: dict[str, dict[str, dict[str, Any]]] | None = None
) -> dict[str, dict[str, dict[str, Any]]]:
    """Parse every selected document with every selected system; return the score rows.

    With ``per_doc`` (a dict), each document's own row is also put there, under its
    system and file name.
    """
    docs = corpus_documents(args.corpus, include_outline=not args.no_outline)
    if args.docs:
        wanted = set(args.docs.split(","))
        docs = [d for d in docs if d.name in wanted or d.stem in wanted]
    gts = {d: load_groundtruth(d) for d in docs}
    systems = args.systems or list(PARSERS)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        inputs: dict[Path, Path] = {}
        for d in docs:
            inputs[d] = truncated(d, args.max_pages, Path(tmpdir), blind=args.outline_blind)
        for name in systems:
            system = PARSERS[name]
            mine = [d for d in docs if d.suffix.lower().lstrip(".") in system.formats]
            print(f"[parse_quality] {name}: {len(mine)} documents", file=sys.stderr)
            records, error, _ = run_worker(
                "bench.peers",
                name,
                [inputs[d] for d in mine],
                timeout=args.timeout,
                extra=("--items",),
            )
            by_path = {Path(r["path"]).name: r for r in records}
            tallies: dict[str, Tally] = defaultdict(Tally)
            for d in mine:
                gt = gts[d]
                assert gt is not None
                if args.max_pages and gt.source == "outline":
                    gt.headings = [
                        h for h in gt.headings if h.page is None or h.page <= args.max_pages
                    ]
                tally = tallies[group_of(gt)]
                rec = by_path.get(d.name)
                if rec is None or "error" in rec:
                    reason = rec["error"] if rec else (error or "no output")
                    tally.failed.append(f"{d.name}: {reason}")
                items = [item_from_json(i) for i in rec.get("items", [])] if rec else []
                tally.seconds += rec["seconds"] if rec else 0.0
                tally.add(gt, items)  # a failure scores as an empty parse
                if per_doc is not None:
                    one = Tally()
                    one.add(gt, items)
                    per_doc.setdefault(name, {})[d.name] = one.row()
            results[name] = {g: t.row() for g, t in sorted(tallies.items())}
    return results


def _fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:5.2f}"


def render(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Render the results as one plain-text table (one line per system and group)."""
    head = (
        f"{'system':20s} {'group':7s} {'docs':>4s} {'H-P':>5s} {'H-R':>5s} {'H-F1':>5s} "
        f"{'level':>5s} {'T-P':>5s} {'T-R':>5s} {'shape':>5s} {'txtF1':>5s} {'biF1':>5s} "
        f"{'furn.leak':>9s} {'sec':>7s}"
    )

    def row(system: str, group: str, r: Mapping[str, Any]) -> str:
        leak = f"{r['furniture_leaked']}/{r['furniture_total']}"
        if r.get("furniture_proxy_per_page") is not None:
            leak = f"~{r['furniture_proxy_per_page']:.2f}/p"  # the proxy, per page
        return (
            f"{system:20s} {group:7s} {r['docs']:4d} {_fmt(r['heading_precision'])} "
            f"{_fmt(r['heading_recall'])} {_fmt(r['heading_f1'])} "
            f"{_fmt(r['level_accuracy'])} {_fmt(r['table_precision'])} "
            f"{_fmt(r['table_recall'])} {_fmt(r['table_shape'])} {_fmt(r['text_f1'])} "
            f"{_fmt(r['bigram_f1'])} {leak:>9s} {r['seconds']:7.1f}"
        )

    return group_table(head, results, row)


def render_per_doc(per_doc: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Render one line per (document, system): headings, levels, tables, furniture."""
    out = [
        f"{'document':44s} {'system':20s} {'H-P':>5s} {'H-R':>5s} {'level':>5s} "
        f"{'T-P':>5s} {'T-R':>5s} {'furn':>6s}"
    ]
    names = sorted({d for rows in per_doc.values() for d in rows})
    for doc in names:
        for system, rows in per_doc.items():
            r = rows.get(doc)
            if r is None:
                continue
            furn = r.get("furniture_proxy_per_page")
            leak = f"{furn:.2f}" if furn is not None else f"{r['furniture_leaked']}"
            out.append(
                f"{doc[:44]:44s} {system:20s} {_fmt(r['heading_precision'])} "
                f"{_fmt(r['heading_recall'])} {_fmt(r['level_accuracy'])} "
                f"{_fmt(r['table_precision'])} {_fmt(r['table_recall'])} {leak:>6s}"
            )
    return "\n".join(out)


def _parser() -> argparse.ArgumentParser:
    ap = corpus_parser(__doc__, "systems", list(PARSERS), timeout=1800)
    ap.add_argument("--no-outline", action="store_true", help="skip the long outline PDFs")
    ap.add_argument(
        "--outline-blind",
        action="store_true",
        help="remove every PDF's outline before parsing (score the font/numbering path)",
    )
    ap.add_argument(
        "--per-doc",
        action="store_true",
        help="also print (and write to the JSON) each document's own scores",
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table; optionally write JSON."""
    args = _parser().parse_args(argv)
    per_doc: dict[str, dict[str, dict[str, Any]]] | None = {} if args.per_doc else None
    results = run(args, per_doc)
    if per_doc:
        print(render_per_doc(per_doc))
    print(render(results))
    print_failures(results)
    write_json(
        args.json,
        {
            "corpus": str(args.corpus),
            "max_pages": args.max_pages,
            "outline_blind": args.outline_blind,
            "results": results,
            **({"per_doc": per_doc} if per_doc else {}),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

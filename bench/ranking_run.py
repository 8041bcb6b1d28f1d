"""The ``run`` phase of :mod:`bench.ranking`: one scratch collection per chunking, many rankings."""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from chunkweave.storage.evaluate import load_qa
from chunkweave.storage.ranking import Ranking

#: Weaviate's own hybrid defaults (alpha 0.75, relative-score fusion, every
#: searchable property weighted alike): what was served before ``Ranking``.
SERVER_DEFAULT = Ranking(
    alpha=0.75, fields=("text", "heading_path", "caption"), vector_languages=()
)

#: Seconds to wait after the write: Weaviate flushes memtables after 60 s, and BM25
#: ranks a little differently before and after (``evaluate_served_rankings``).
SETTLE_S = 75.0

_FIELDS = {
    "flat": ("text", "heading_path", "caption"),
    "h2c2": ("text", "heading_path^2", "caption^2"),
    "h3c3": ("text", "heading_path^3", "caption^3"),
    "h2c1": ("text", "heading_path^2", "caption"),
    "h1c2": ("text", "heading_path", "caption^2"),
    "h1c3": ("text", "heading_path", "caption^3"),
    "text": ("text",),
}


def variants(name: str) -> dict[str, Ranking]:
    """Return the named set of rankings: label -> ranking."""
    # The first pass over a fresh collection is slow (cold caches): asked, not reported.
    out: dict[str, Ranking] = {"warmup": Ranking(), "server-default": SERVER_DEFAULT}
    if name == "default":
        out["default"] = Ranking()
        return out
    if name == "tune":
        for alpha in (0.5, 0.6, 0.7, 0.75, 0.8):
            for tag in ("flat", "h2c2", "h3c3"):
                out[f"a{alpha}/{tag}"] = Ranking(alpha=alpha, fields=(*_FIELDS[tag], "text_cjk"))
        return out
    if name == "repeat":  # the same ranking asked again: the run-to-run spread
        for i in range(4):
            out[f"default#{i}"] = Ranking()
        return out
    if name == "check":
        base = Ranking()
        out["default"] = base
        out["no-field-weights"] = base.model_copy(
            update={"fields": tuple(f.split("^", 1)[0] for f in base.fields)}
        )
        out["no-cjk-field"] = base.model_copy(
            update={"fields": tuple(f for f in base.fields if f != "text_cjk")}
        )
        out["no-language-alpha"] = base.model_copy(update={"vector_languages": ()})
        out["alpha-0.75"] = base.model_copy(update={"alpha": 0.75})
        return out
    if name == "alpha":
        for alpha in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 1.0):
            out[f"a{alpha}/flat"] = Ranking(alpha=alpha, fields=_FIELDS["flat"])
        out["a0.5/ranked/flat"] = Ranking(alpha=0.5, fusion="ranked", fields=_FIELDS["flat"])
        return out
    if name.startswith("fields@"):
        alpha = float(name.split("@", 1)[1])
        for tag, fields in _FIELDS.items():
            out[f"a{alpha}/{tag}"] = Ranking(alpha=alpha, fields=fields)
        return out
    if name.startswith("grid"):
        for alpha in (0.7, 0.8, 0.85, 0.9):
            for tag in ("h2c2", "h3c3", "h1c2", "h1c3"):
                out[f"a{alpha}/{tag}"] = Ranking(alpha=alpha, fields=_FIELDS[tag])
        return out
    raise SystemExit(f"unknown variant set {name!r}")


def _language(text: str) -> str:
    from chunkweave.storage.language import detect_language

    return detect_language(text) or "und"


def run(qa: str, cache: Path, variant_set: str, chunkings: list[str]) -> dict[str, Any]:
    """Write each chunking once, ask every variant, return the JSON report."""
    import click

    from bench.ranking import load
    from chunkweave.storage.embedders import make_embedder
    from chunkweave.storage.served_eval import (
        evaluate_served_rankings,
        new_run_id,
        scratch_config,
    )
    from chunkweave.worker.cli.store import weaviate_config
    from chunkweave.worker.settings import get_settings

    data = load(cache)
    settings = get_settings()
    questions = load_qa(qa)
    embedder = make_embedder(settings.embedder)
    rankings = variants(variant_set)
    langs = [_language(q.question) for q in questions]
    out: dict[str, Any] = {
        "qa": qa,
        "questions": len(questions),
        "embedder": embedder.name,
        "variants": {k: v.model_dump(mode="json") for k, v in rankings.items()},
        "reports": [],
    }
    run_id = new_run_id()
    with click.Context(click.Command("bench")), weaviate_config(settings) as wcfg:
        for chunking in chunkings:
            started = time.perf_counter()
            reports = evaluate_served_rankings(
                chunking,
                questions,
                data["chunkings"][chunking],
                embedder,
                scratch_config(wcfg, run_id, f"rank_{chunking}"),
                {f"{chunking}|{label}": r for label, r in rankings.items()},
                cache=data["vectors"],
                query_cache=data["queries"],
                settle_s=SETTLE_S,
            )
            for report in reports[1:]:  # reports[0] is the warm-up
                row = report.model_dump()
                row["by_language"] = _by_language(report.ranks, langs)
                out["reports"].append(row)
                _print(report, row["by_language"])
            print(f"{chunking}: {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return out


def _by_language(ranks: tuple[int | None, ...], langs: list[str]) -> dict[str, Any]:
    groups: dict[str, list[int | None]] = defaultdict(list)
    for rank, lang in zip(ranks, langs, strict=True):
        groups[lang].append(rank)
    return {
        lang: {"n": len(rs), "recall_at_5": sum(1 for r in rs if r and r <= 5) / len(rs)}
        for lang, rs in sorted(groups.items())
    }


def _print(report: Any, by_language: dict[str, Any]) -> None:
    o = report.overall
    kinds = " ".join(
        f"{k}={s.recall_at_5:.3f}/{s.ndcg_at_10:.3f}" for k, s in report.by_kind.items()
    )
    langs = " ".join(f"{k}:{v['recall_at_5']:.2f}({v['n']})" for k, v in by_language.items())
    print(
        f"{report.strategy:<32} R@5 {o.recall_at_5:.3f} nDCG {o.ndcg_at_10:.3f} "
        f"MRR {o.mrr:.3f} p95 {o.latency_p95_ms:.0f}ms tok {o.hit_tokens:.0f} | {kinds} | {langs}",
        file=sys.stderr,
    )

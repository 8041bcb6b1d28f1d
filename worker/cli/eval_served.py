"""The served half of ``chunkweave eval``: a scratch collection per strategy, asked as served.

:func:`served_scorer` opens the configured Weaviate once per command and returns the
function scoring one strategy's chunks through
:func:`chunkweave.storage.served_eval.evaluate_served_rankings` (with its ranking
variants and, with ``--small-to-big``, with match units too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import click

from chunkweave.chunking.models import Chunk
from chunkweave.storage.embedders import Embedder

#: ``--small-to-big``: which runs score each strategy (without, with match units).
UNIT_RUNS: dict[str, tuple[bool, ...]] = {"on": (True,), "off": (False,), "both": (False, True)}


def unit_runs(choice: str) -> tuple[bool, ...]:
    """Return the small-to-big runs of ``--small-to-big`` ``choice`` (on, off, both)."""
    return UNIT_RUNS[choice]


def served_scorer(
    settings: Any,
    questions: list[Any],
    embedder: Embedder,
    mode: str,
    k: int,
    keep: bool,
    compare: bool = False,
    *,
    units: tuple[bool, ...] = (False,),
    settle_s: float = 0.0,
) -> Callable[[str, dict[str, list[Chunk]], dict[str, list[float]]], list[Any]] | None:
    """For a served ``mode``: open the Weaviate (till the command ends), return the scorer.

    ``units``: score each strategy without (``False``) and/or with (``True``) match
    units, small-to-big (with both, the second's reports are named ``<label>+s2b``).
    ``settle_s``: seconds each collection rests after its write before it is asked.
    """
    if mode == "numpy":
        return None
    from chunkweave.storage.served_eval import (
        SearchMode,
        evaluate_served_rankings,
        new_run_id,
        ranking_variants,
        scratch_config,
    )
    from chunkweave.worker.cli.store import weaviate_config

    # Entered on the click context: a local server started here stops when the command ends.
    wcfg = click.get_current_context().with_resource(weaviate_config(settings))
    run = new_run_id()
    queries: dict[str, list[float]] = {}
    search_mode = cast("SearchMode", mode)
    pattern = scratch_config(wcfg, run, "STRATEGY").collection
    click.echo(f"served eval, {mode} search: scratch collections {pattern}", err=True)

    def score(
        label: str, chunks: dict[str, list[Chunk]], cache: dict[str, list[float]]
    ) -> list[Any]:
        reports: list[Any] = []
        for small_to_big in units:
            name = f"{label}+s2b" if small_to_big and len(units) > 1 else label
            cfg = scratch_config(wcfg, run, name)
            named = ranking_variants(wcfg.ranking).items() if compare else ()
            variants = {name: None, **{f"{name}|{n}": r for n, r in named if n != "ranking"}}
            reports += evaluate_served_rankings(
                name,
                questions,
                chunks,
                embedder,
                cfg,
                variants,
                mode=search_mode,
                k=k,
                cache=cache,
                query_cache=queries,
                keep=keep,
                small_to_big=small_to_big,
                settle_s=settle_s,
            )
            if keep:
                click.echo(f"kept {cfg.collection}", err=True)
        return reports

    return score

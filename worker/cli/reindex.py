"""``chunkweave reindex``: rebuild the store with new chunking or embedder, without downtime."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, get_args

import click

from chunkweave.chunking.models import Strategy
from chunkweave.worker.cli.common import echo_json, friendly_errors


def _chunking(settings: Any, options: dict[str, Any]) -> Any:
    """Return the settings' chunk options with the flags given on the command line."""
    given = {k: v for k, v in options.items() if v is not None}
    return settings.chunking.model_copy(update=given) if given else settings.chunking


@click.command()
@click.option("--strategy", type=click.Choice(get_args(Strategy)), help="Target chunking strategy.")
@click.option("--max-tokens", type=click.IntRange(9), help="Target hard chunk size.")
@click.option("--target-tokens", type=click.IntRange(9), help="Target chunk size aimed at.")
@click.option("--min-tokens", type=click.IntRange(0), help="Target merge threshold.")
@click.option(
    "--qa",
    "qa_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="QA set (format of `chunkweave eval`): switch only if retrieval does not drop.",
)
@click.option(
    "--margin",
    type=click.FloatRange(0, 1),
    default=0.02,
    show_default=True,
    help="Allowed drop of recall@5 and of MRR.",
)
@click.option(
    "--force", is_flag=True, help="Switch even if the gate refuses (never if incomplete)."
)
@click.option(
    "--keep",
    type=click.IntRange(0),
    default=1,
    show_default=True,
    help="Retired versions kept after the switch (the newest is the rollback target).",
)
@click.option("--no-reuse", is_flag=True, help="Embed every chunk again (no embedding cache).")
@click.option("--dry-run", is_flag=True, help="Print the plan; change nothing.")
@click.option("--rollback", is_flag=True, help="Point the alias back at the previous version.")
@click.option("--prune", is_flag=True, help="Drop retired versions beyond --keep, then exit.")
@click.option("--abandon", is_flag=True, help="Drop an unfinished reindex's target first.")
@click.option("--list", "list_versions", is_flag=True, help="List the versions, then exit.")
@click.option("--no-wait", is_flag=True, help="Start it on the workers and return.")
@click.option("--json", "as_json", is_flag=True, help="Print the final state as JSON.")
@friendly_errors
def reindex(
    strategy: str | None,
    max_tokens: int | None,
    target_tokens: int | None,
    min_tokens: int | None,
    qa_file: Path | None,
    margin: float,
    force: bool,
    keep: int,
    no_reuse: bool,
    dry_run: bool,
    rollback: bool,
    prune: bool,
    abandon: bool,
    list_versions: bool,
    no_wait: bool,
    as_json: bool,
) -> None:
    """Build the next version of the store alongside the live one, check it, switch to it.

    The target is chunked with the configured options (CHUNKWEAVE_CHUNKING__*) and
    the flags given here, and embedded with the configured embedder
    (CHUNKWEAVE_EMBEDDER__*). Every source of the live ledger is written into it by
    the running workers; vectors of unchanged embed texts are taken from the live
    collection. Searches keep using the live version; documents ingested meanwhile
    are replayed onto the target. Once the target accounts for every source (and
    passes the --qa gate), the alias switches atomically. Run it again with the same
    options to resume an interrupted reindex. A stored document whose source is gone
    (an HTTP upload deleted once stored, by the default CHUNKWEAVE_API__UPLOAD_RETENTION)
    cannot be rebuilt: such documents are named, by --dry-run too, and the reindex
    refuses to start until they are uploaded again or deleted.
    """
    from chunkweave.worker import reindex as rx
    from chunkweave.worker.cli.service import _discovered

    found = _discovered()  # a running `serve`'s Redis and Weaviate when none is configured
    settings = found.settings
    if settings.weaviate.url is None:
        raise click.ClickException(found.missing("Weaviate"))
    if rollback:
        restored = rx.rollback(settings)
        click.echo(f"{settings.weaviate.collection} -> {restored.collection} (rolled back)")
        return
    if prune or list_versions:
        if prune:
            for version in rx.prune(settings, keep):
                click.echo(f"dropped {version.collection}")
        for version in rx.versions(settings):
            click.echo(
                f"{version.collection:<32} {version.state:<9} {version.embedder} "
                f"({version.dimension}-d) {version.chunker or '-'}"
            )
        return
    options: dict[str, Any] = {
        "chunking": _chunking(
            settings,
            {
                "strategy": strategy,
                "max_tokens": max_tokens,
                "target_tokens": target_tokens,
                "min_tokens": min_tokens,
            },
        ),
        "margin": margin,
        "force": force,
        "keep": keep,
        "reuse": not no_reuse,
    }
    if qa_file is not None:
        from chunkweave.storage.evaluate import load_qa

        options["qa"] = tuple(load_qa(qa_file))
    factory = rx.SpecFactory(settings, **options)
    from chunkweave.worker.sources.rebuild import live_unrebuildable, refusal

    gone = live_unrebuildable(settings)  # said before anything starts
    if dry_run:
        plan = rx.dry_run(settings, factory)
        if as_json:
            echo_json({**plan.model_dump(mode="json"), "cannot_rebuild": dict(gone)})
        else:
            click.echo("\n".join(plan.lines()))
            for source, why in gone:
                click.echo(f"cannot rebuild: {source}: {why}")
        return
    if gone:
        raise click.ClickException(refusal(gone))
    state = rx.start(settings, factory, abandon=abandon)
    if no_wait:
        from chunkweave.worker.celery_app import make_app

        app = make_app(settings)
        app.send_task("chunkweave.reindex_advance", queue=settings.tasks.queue)
        app.close()
        click.echo(state.line())
        return
    state = _drive(settings, state)
    if as_json:
        echo_json(state.model_dump(mode="json"))
    else:
        click.echo(state.line())
        if state.gate:
            click.echo(state.gate)
        click.echo("timings: " + ", ".join(f"{k} {v:.1f}s" for k, v in state.timings.items()))
    if state.phase != "done":
        sys.exit(1)


def _drive(settings: Any, state: Any) -> Any:
    """Step the reindex until it ends, with a progress line on a terminal."""
    from chunkweave.worker import reindex as rx

    tty = sys.stderr.isatty()
    while state.phase not in rx.FINAL:
        state = rx.advance(settings)
        if tty:
            click.echo("\r" + state.line()[:150].ljust(150), nl=False, err=True)
        time.sleep(1.0)
    if tty:
        click.echo("", err=True)
    return state


def register(group: click.Group) -> None:
    """Add ``reindex`` to the root group."""
    group.add_command(reindex)

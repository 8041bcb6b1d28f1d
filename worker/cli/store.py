"""``chunkweave ingest | search | delete | docs``: the store from the command line.

With no Weaviate URL configured every command starts the project's local Weaviate
(persistent data under ``Settings.data_dir / "weaviate"``) and says so on stderr.
"""

from __future__ import annotations

import contextlib
import glob
import multiprocessing
import os
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, get_args

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from chunkweave.chunking.models import ChunkOptions, Strategy
from chunkweave.parsers.document import SUPPORTED_SUFFIXES, ParseOptions
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.config import EmbedderConfig, FilesConfig, WeaviateConfig
from chunkweave.storage.embedders import Embedder, make_embedder
from chunkweave.storage.errors import StoreError
from chunkweave.storage.filters import FILTERABLE, Condition, SearchRequest
from chunkweave.storage.hits import Hit
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.ingest import Pipeline, open_pipeline
from chunkweave.storage.protocols import ChunkStore
from chunkweave.storage.stores import open_store
from chunkweave.storage.values import DocOutcome, EmbedderIdentity
from chunkweave.storage.weaviate.server.local import LocalWeaviate
from chunkweave.worker.cli.common import echo_json, friendly_errors
from chunkweave.worker.settings import Settings, get_settings

_stderr = Console(stderr=True)


@contextlib.contextmanager
def weaviate_config(settings: Settings) -> Iterator[WeaviateConfig]:
    """Yield the configured server, or start (and stop) a local one around the block."""
    cfg = settings.weaviate
    if cfg.url:
        yield cfg
        return
    data_dir = Path(cfg.data_dir) if cfg.data_dir else settings.data_dir / "weaviate"
    with LocalWeaviate(data_dir) as server:
        how = "using the local Weaviate already running" if server.attached else "started"
        click.echo(
            f"no Weaviate URL configured (CHUNKWEAVE_WEAVIATE__URL): {how} on {server.url} "
            f"with data in {data_dir}",
            err=True,
        )
        yield server.config(cfg)


def expand_paths(patterns: Sequence[str]) -> tuple[list[Path], list[str]]:
    """Files named by ``patterns`` (files, folders searched recursively, globs).

    Returns the PDF/DOCX files in a stable order (duplicates removed) and the
    patterns that matched nothing.
    """
    found: dict[Path, None] = {}
    unmatched: list[str] = []
    for pattern in patterns:
        path = Path(pattern).expanduser()
        if path.is_dir():
            hits = sorted(p for p in path.rglob("*") if p.suffix.lower() in SUPPORTED_SUFFIXES)
        elif path.is_file():
            hits = [path]
        else:
            hits = [
                Path(p) for p in sorted(glob.glob(pattern, recursive=True)) if Path(p).is_file()
            ]
        if not hits:
            unmatched.append(pattern)
        found.update(dict.fromkeys(p.resolve() for p in hits))
    return list(found), unmatched


#: The ingest pool's worker processes each build one pipeline (embedder and client) once.
_PIPELINE: Pipeline | None = None


def _init_worker(
    wcfg: WeaviateConfig,
    ecfg: EmbedderConfig,
    popts: ParseOptions,
    copts: ChunkOptions,
    files: FilesConfig | None = None,
) -> None:
    global _PIPELINE
    _PIPELINE = open_pipeline(wcfg, make_embedder(ecfg), popts, copts, files)


def _ingest_one(path: str, force: bool) -> DocOutcome:
    assert _PIPELINE is not None, "worker not initialised"
    return _PIPELINE.ingest(path, force=force)


def summarize(outcomes: Sequence[DocOutcome], seconds: float) -> dict[str, Any]:
    """Build the ``--json`` summary of an ingest run."""
    failed = [o for o in outcomes if o.status == "failed"]
    return {
        "documents": len(outcomes),
        "pages": sum(o.pages for o in outcomes),
        "chunks_added": sum(o.chunks_added for o in outcomes),
        "chunks_unchanged": sum(o.chunks_unchanged for o in outcomes),
        "chunks_deleted": sum(o.chunks_deleted for o in outcomes),
        "skipped": sum(o.status == "unchanged" for o in outcomes),
        "failed": [
            {"source": o.source, "error_code": o.error_code, "error": o.error} for o in failed
        ],
        "seconds": round(seconds, 3),
    }


def _print_summary(summary: dict[str, Any]) -> None:
    click.echo(
        f"{summary['documents']} documents, {summary['pages']} pages: "
        f"{summary['chunks_added']} chunks added, {summary['chunks_unchanged']} unchanged, "
        f"{summary['chunks_deleted']} deleted; {summary['skipped']} skipped (unchanged), "
        f"{len(summary['failed'])} failed; {summary['seconds']:.1f}s"
    )
    for item in summary["failed"]:
        click.echo(f"  failed: {item['source']}: [{item['error_code']}] {item['error']}")


def _run_all(
    files: list[Path], settings: Settings, wcfg: WeaviateConfig, copts: ChunkOptions, **kw: Any
) -> list[DocOutcome]:
    workers, force, show = kw["workers"], kw["force"], kw["progress"]
    init = (wcfg, settings.embedder, settings.parse, copts, settings.files)
    columns = (TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=_stderr, transient=True, disable=not show) as bar:
        task = bar.add_task("ingest", total=len(files))
        _init_worker(*init)
        assert _PIPELINE is not None
        with contextlib.closing(_PIPELINE.store):
            return _run_pending(files, _PIPELINE, init, workers, force, bar, task)


def _run_pending(
    files: list[Path],
    pipeline: Pipeline,
    init: tuple[Any, ...],
    workers: int,
    force: bool,
    bar: Progress,
    task: Any,
) -> list[DocOutcome]:
    outcomes: list[DocOutcome] = []
    todo: list[Path] = []
    for path in files:
        # Unchanged documents are skipped here, before any worker process starts.
        skip = None if force else _check(pipeline, path)
        if skip is None:
            todo.append(path)
        else:
            outcomes.append(skip)
            bar.advance(task)
    if workers <= 1 or len(todo) <= 1:
        for path in todo:
            outcomes.append(_ingest_one(str(path), force))
            bar.advance(task)
        return outcomes
    # spawn, not fork: the gRPC client and onnxruntime threads do not survive fork.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(workers, len(todo)), context, _init_worker, init) as pool:
        for outcome in pool.map(_ingest_one, map(str, todo), [force] * len(todo)):
            outcomes.append(outcome)
            bar.advance(task)
    return outcomes


def _check(pipeline: Pipeline, path: Path) -> DocOutcome | None:
    try:
        return pipeline.check_unchanged(path)
    except (OSError, StoreError):
        return None  # the full ingest reports the failure properly


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--strategy", type=click.Choice(get_args(Strategy)), help="Chunking strategy.")
@click.option("--workers", type=click.IntRange(min=1), help="Processes (default: CPUs, max 4).")
@click.option("--force", is_flag=True, help="Re-parse even documents the ledger says are current.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary object.")
@friendly_errors
def ingest(
    paths: tuple[str, ...], strategy: str | None, workers: int | None, force: bool, as_json: bool
) -> None:
    """Ingest PDF/DOCX files, folders or globs into Weaviate (incrementally)."""
    started = time.monotonic()
    settings = get_settings()
    copts = settings.chunking
    if strategy:
        copts = copts.model_copy(update={"strategy": strategy})
    files, unmatched = expand_paths(paths)
    missing = [
        DocOutcome(
            source=p,
            doc_id=doc_id_for(p),
            status="failed",
            error_code=ErrorCode.NOT_FOUND,
            error=f"{p}: no PDF or DOCX file matches",
        )
        for p in unmatched
    ]
    outcomes: list[DocOutcome] = []
    if files:
        with weaviate_config(settings) as wcfg:
            n = workers or min(4, os.cpu_count() or 1)
            outcomes = _run_all(
                files, settings, wcfg, copts, workers=n, force=force, progress=not as_json
            )
    summary = summarize([*outcomes, *missing], time.monotonic() - started)
    echo_json(summary) if as_json else _print_summary(summary)
    if summary["failed"]:
        raise SystemExit(1)


def _open_store(settings: Settings, wcfg: WeaviateConfig) -> tuple[ChunkStore, Embedder]:
    embedder = make_embedder(settings.embedder)
    identity = EmbedderIdentity(embedder.name, embedder.dimension)
    return open_store(wcfg, identity, settings.files), embedder


def _parse_filters(items: Sequence[str]) -> tuple[Condition, ...]:
    where: list[Condition] = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r}: expected KEY=VALUE", param_hint="--filter")
        if key not in FILTERABLE:
            allowed = ", ".join(sorted(FILTERABLE))
            raise click.BadParameter(
                f"{key!r} is not a filterable chunk property (one of: {allowed})",
                param_hint="--filter",
            )
        # Typed as stored: ``pages=3`` must be the integer 3 (the server refuses "3").
        where.append(Condition(key, "equal", FILTERABLE[key](value)))
    return tuple(where)


def hit_json(hit: Hit) -> dict[str, Any]:
    """One hit of ``search --json``: its fields, regions as ``{"page", "bbox"}`` objects."""
    return {**hit.__dict__, "regions": [r.model_dump(mode="json") for r in hit.regions]}


@click.command()
@click.argument("query")
@click.option("-k", "k", default=5, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--filter",
    "filters",
    multiple=True,
    help="KEY=VALUE on a filterable chunk property (doc_id, source, type, pages, ...).",
)
@click.option(
    "--hybrid/--vector",
    default=True,
    help="Hybrid (BM25 + vector) or vector only (a collection without the keyword "
    "index is always searched by vector).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
@friendly_errors
def search(query: str, k: int, filters: tuple[str, ...], hybrid: bool, as_json: bool) -> None:
    """Search the stored chunks: text, heading path, pages and source of each hit."""
    settings = get_settings()
    where = _parse_filters(filters)
    with weaviate_config(settings) as wcfg:
        store, embedder = _open_store(settings, wcfg)
        try:
            vector = embedder.embed_query(query) if embedder.dimension else None
            if hybrid and vector is not None and not store.keyword_index:
                click.echo(
                    f"note: collection {wcfg.collection} has no keyword index; "
                    "searching by vector only",
                    err=True,
                )
            hits = store.search(SearchRequest(query, vector, k=k, where=where, hybrid=hybrid))
        finally:
            store.close()
    if as_json:
        echo_json([hit_json(hit) for hit in hits])
        return
    if not hits:
        click.echo("no results")
    for rank, hit in enumerate(hits, 1):
        pages = ",".join(map(str, hit.pages)) or "-"
        # score: higher is better (hybrid/BM25 score, or 1 - cosine distance by vector)
        score = f"{hit.score:.3f}" if hit.score is not None else "-"
        distance = f"  distance {hit.distance:.3f}" if hit.distance is not None else ""
        click.echo(f"[{rank}] {hit.source}  pages {pages}  score {score}{distance}")
        if hit.heading_path:
            click.echo("    " + " > ".join(hit.heading_path))
        click.echo("    " + hit.text.replace("\n", "\n    "))
        click.echo()


@click.command()
@click.argument("source")
@friendly_errors
def delete(source: str) -> None:
    """Delete a source's chunks and ledger entry (path or URI, as ingested)."""
    settings = get_settings()
    doc_id = doc_id_for(source)
    with weaviate_config(settings) as wcfg:
        store, embedder = _open_store(settings, wcfg)
        try:
            pipeline = Pipeline(store=store, embedder=embedder)
            known = pipeline.ledger.get(doc_id) is not None
            outcome = pipeline.delete(doc_id)
        finally:
            store.close()
    if not known and outcome.chunks_deleted == 0:
        raise click.ClickException(f"nothing stored for {source} (doc_id {doc_id})")
    click.echo(f"deleted {outcome.source}: {outcome.chunks_deleted} chunks")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the ledger as a JSON list.")
@friendly_errors
def docs(as_json: bool) -> None:
    """List the document ledger: doc_id, source, status, chunk count, error."""
    settings = get_settings()
    with weaviate_config(settings) as wcfg:
        store, _ = _open_store(settings, wcfg)
        try:
            ledger = store.open_ledger()
            ledger.ensure_schema()
            entries = sorted(ledger.entries(), key=lambda e: e.source)
        finally:
            store.close()
    if as_json:
        echo_json([e.model_dump(mode="json") for e in entries])
        return
    for e in entries:
        error = f"  [{e.error_code}] {e.error}" if e.status == "failed" else ""
        click.echo(f"{e.status:6}  {e.chunk_count:6}  {e.source}{error}")
    click.echo(f"{len(entries)} documents", err=True)


def register(group: click.Group) -> None:
    """Add ``ingest``, ``search``, ``delete`` and ``docs`` to the root command."""
    for command in (ingest, search, delete, docs):
        group.add_command(command)

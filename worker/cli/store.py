"""``chunkweave ingest | search | delete | docs``: the store from the command line.

With no Weaviate URL configured every command starts the project's local Weaviate
(persistent data under ``Settings.data_dir / "weaviate"``) and says so on stderr.
"""

from __future__ import annotations

import contextlib
import glob
import json
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
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
from chunkweave.storage.filters import Condition, SearchRequest, filterable
from chunkweave.storage.hits import Hit
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.ingest import Pipeline, open_pipeline
from chunkweave.storage.metadata import MetadataConfig, MetadataError
from chunkweave.storage.protocols import ChunkStore
from chunkweave.storage.stores import open_store
from chunkweave.storage.values import DocOutcome, EmbedderIdentity
from chunkweave.storage.weaviate.server.local import LocalWeaviate
from chunkweave.worker.cli.common import (
    echo_json,
    friendly_errors,
    metadata_options,
    password_option,
)
from chunkweave.worker.enqueue import Enqueuer, check_job_tenant, command_line_metadata
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


def _ingest_one(
    path: str, force: bool, metadata: dict[str, Any] | None = None, tenant: str | None = None
) -> DocOutcome:
    assert _PIPELINE is not None, "worker not initialised"
    return _PIPELINE.ingest(path, force=force, metadata=metadata, tenant=tenant)


def _file_metadata(
    files: list[Path], given: dict[str, object], settings: Settings
) -> tuple[dict[Path, dict[str, Any]], list[DocOutcome]]:
    """Each file's metadata: its sidecar under ``given``; a refused one fails that file."""
    metas: dict[Path, dict[str, Any]] = {}
    failed: list[DocOutcome] = []
    for path in files:
        try:
            metas[path] = Enqueuer.doc_metadata(str(path), given, None, settings)
        except MetadataError as err:
            failed.append(
                DocOutcome(
                    source=str(path),
                    doc_id=doc_id_for(path),
                    status="failed",
                    error_code=ErrorCode.BAD_METADATA,
                    error=str(err),
                )
            )
    return metas, failed


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
    extra = (kw["metas"], kw["tenant"])
    init = (wcfg, settings.embedder, settings.parse, copts, settings.files)
    columns = (TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=_stderr, transient=True, disable=not show) as bar:
        task = bar.add_task("ingest", total=len(files))
        _init_worker(*init)
        assert _PIPELINE is not None
        with contextlib.closing(_PIPELINE.store):
            return _run_pending(files, _PIPELINE, init, workers, force, bar, task, extra)


def _run_pending(
    files: list[Path],
    pipeline: Pipeline,
    init: tuple[Any, ...],
    workers: int,
    force: bool,
    bar: Progress,
    task: Any,
    extra: tuple[dict[Path, dict[str, Any]], str | None],
) -> list[DocOutcome]:
    metas, tenant = extra
    outcomes: list[DocOutcome] = []
    todo: list[Path] = []
    for path in files:
        # Unchanged documents are skipped here, before any worker process starts.
        skip = None if force else _check(pipeline, path, metas.get(path), tenant)
        if skip is None:
            todo.append(path)
        else:
            outcomes.append(skip)
            bar.advance(task)
    if workers <= 1 or len(todo) <= 1:
        for path in todo:
            outcomes.append(_ingest_one(str(path), force, metas.get(path), tenant))
            bar.advance(task)
        return outcomes
    # spawn, not fork: the gRPC client and onnxruntime threads do not survive fork.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(workers, len(todo)), context, _init_worker, init) as pool:
        for outcome in pool.map(
            _ingest_one,
            map(str, todo),
            [force] * len(todo),
            [metas.get(p) for p in todo],
            [tenant] * len(todo),
        ):
            outcomes.append(outcome)
            bar.advance(task)
    return outcomes


def _check(
    pipeline: Pipeline, path: Path, metadata: dict[str, Any] | None, tenant: str | None
) -> DocOutcome | None:
    try:
        return pipeline.check_unchanged(path, metadata=metadata, tenant=tenant)
    except (OSError, StoreError):
        return None  # the full ingest reports the failure properly


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--strategy", type=click.Choice(get_args(Strategy)), help="Chunking strategy.")
@click.option("--workers", type=click.IntRange(min=1), help="Processes (default: CPUs, max 4).")
@click.option("--force", is_flag=True, help="Re-parse even documents the ledger says are current.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary object.")
@metadata_options
@password_option
@friendly_errors
def ingest(
    paths: tuple[str, ...],
    strategy: str | None,
    workers: int | None,
    force: bool,
    as_json: bool,
    meta: tuple[str, ...],
    meta_file: str | None,
    tenant: str | None,
) -> None:
    """Ingest PDF/DOCX files, folders or globs into Weaviate (incrementally).

    A file's sidecar NAME.meta.json (e.g. report.pdf.meta.json) gives its metadata;
    a bad one fails that file only, naming the sidecar, the key and why.
    """
    started = time.monotonic()
    settings = get_settings()
    given = command_line_metadata(meta, meta_file, settings)
    tenant = check_job_tenant(tenant, settings)
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
    metas, refused = _file_metadata(files, given, settings)
    files = [p for p in files if p in metas]
    outcomes: list[DocOutcome] = []
    if files:
        with weaviate_config(settings) as wcfg:
            n = workers or min(4, os.cpu_count() or 1)
            outcomes = _run_all(
                files,
                settings,
                wcfg,
                copts,
                workers=n,
                force=force,
                progress=not as_json,
                metas=metas,
                tenant=tenant,
            )
    summary = summarize([*outcomes, *refused, *missing], time.monotonic() - started)
    echo_json(summary) if as_json else _print_summary(summary)
    if summary["failed"]:
        raise SystemExit(1)


def _open_store(settings: Settings, wcfg: WeaviateConfig) -> tuple[ChunkStore, Embedder]:
    embedder = make_embedder(settings.embedder)
    identity = EmbedderIdentity(embedder.name, embedder.dimension)
    return open_store(wcfg, identity, settings.files), embedder


def _parse_filters(
    items: Sequence[str], metadata: MetadataConfig | None = None
) -> tuple[Condition, ...]:
    allowed_keys = filterable(metadata or MetadataConfig())
    where: list[Condition] = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r}: expected KEY=VALUE", param_hint="--filter")
        if key not in allowed_keys:
            allowed = ", ".join(sorted(allowed_keys))
            raise click.BadParameter(
                f"{key!r} is not a filterable chunk property (one of: {allowed})",
                param_hint="--filter",
            )
        # Typed as stored: ``pages=3`` must be the integer 3 (the server refuses "3").
        try:
            where.append(Condition(key, "equal", _typed(allowed_keys[key], value)))
        except ValueError as err:
            raise click.BadParameter(f"{item!r}: {err}", param_hint="--filter") from None
    return tuple(where)


def _typed(kind: type, value: str) -> str | int | float | bool | datetime:
    if kind is bool:
        if value.lower() not in ("true", "false"):
            raise ValueError("expected true or false")
        return value.lower() == "true"
    if kind is datetime:
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    typed: str | int | float = kind(value)
    return typed


def hit_json(hit: Hit) -> dict[str, Any]:
    """One hit of ``search --json``: its fields, regions as ``{"page", "bbox"}`` objects."""
    return {
        **hit.__dict__,
        "regions": [r.model_dump(mode="json") for r in hit.regions],
        "metadata": {
            k: v.isoformat() if isinstance(v, datetime) else v for k, v in hit.metadata.items()
        },
    }


@click.command()
@click.argument("query")
@click.option("-k", "k", default=5, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--filter",
    "filters",
    multiple=True,
    help="KEY=VALUE on a filterable chunk property (doc_id, source, type, pages, ...) "
    "or a declared metadata key; repeatable, all must hold.",
)
@click.option(
    "--hybrid/--vector",
    default=True,
    help="Hybrid (BM25 + vector) or vector only (a collection without the keyword "
    "index is always searched by vector).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
@click.option(
    "--principal",
    "principals",
    multiple=True,
    help="Search as this principal (repeatable): only chunks whose acl names one of "
    "them (documents without an acl only if public_without_acl).",
)
@click.option(
    "--as-nobody",
    is_flag=True,
    help="Search with no principals at all: only documents public by the ACL rule.",
)
@click.option("--tenant", default=None, help="Search this tenant (required when multi-tenant).")
@friendly_errors
def search(
    query: str,
    k: int,
    filters: tuple[str, ...],
    hybrid: bool,
    as_json: bool,
    principals: tuple[str, ...],
    as_nobody: bool,
    tenant: str | None,
) -> None:
    """Search the stored chunks: text, heading path, pages and source of each hit.

    --filter takes the chunk's own properties and every declared metadata key
    (``--filter version=3``). Without --principal or --as-nobody no access filter
    applies (the operator sees everything).
    """
    settings = get_settings()
    where = _parse_filters(filters, settings.weaviate.metadata)
    asking = principals if principals or as_nobody else None
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
            request = SearchRequest(
                query,
                vector,
                k=k,
                where=where,
                hybrid=hybrid,
                principals=asking,
                tenant=tenant or wcfg.tenant,
            )
            hits = store.search(request)
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
        if hit.metadata:
            click.echo("    " + json.dumps(hit.metadata, default=str, sort_keys=True))
        click.echo("    " + hit.text.replace("\n", "\n    "))
        click.echo()


@click.command()
@click.argument("source", required=False)
@click.option(
    "--tenant",
    default=None,
    help="The document's tenant; without SOURCE, delete the whole tenant (every "
    "chunk and ledger entry of it).",
)
@friendly_errors
def delete(source: str | None, tenant: str | None) -> None:
    """Delete a source's chunks and ledger entry (path or URI, as ingested), or a tenant."""
    settings = get_settings()
    if source is None:
        if tenant is None:
            raise click.UsageError("name a SOURCE, or --tenant T to delete a whole tenant")
        with weaviate_config(settings) as wcfg:
            store, _ = _open_store(settings, wcfg)
            try:
                existed = store.delete_tenant(tenant)
            finally:
                store.close()
        if not existed:
            raise click.ClickException(f"no tenant {tenant!r}")
        click.echo(f"deleted tenant {tenant}")
        return
    doc_id = doc_id_for(source)
    with weaviate_config(settings) as wcfg:
        store, embedder = _open_store(settings, wcfg)
        try:
            pipeline = Pipeline(store=store, embedder=embedder)
            known = pipeline.scope(tenant).ledger.get(doc_id) is not None
            outcome = pipeline.delete(doc_id, tenant=tenant)
        finally:
            store.close()
    if not known and outcome.chunks_deleted == 0:
        raise click.ClickException(f"nothing stored for {source} (doc_id {doc_id})")
    click.echo(f"deleted {outcome.source}: {outcome.chunks_deleted} chunks")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the ledger as a JSON list.")
@click.option(
    "--filter",
    "filters",
    multiple=True,
    metavar="KEY=VALUE",
    help="Only documents whose metadata has KEY=VALUE (a list: holds VALUE); repeatable.",
)
@click.option("--tenant", default=None, help="The tenant's ledger (required when multi-tenant).")
@friendly_errors
def docs(as_json: bool, filters: tuple[str, ...], tenant: str | None) -> None:
    """List the document ledger: status, chunk count, doc_id, source, metadata, error.

    The doc_id is what `delete`, `search --filter doc_id=` and /ui/inspect take: a
    local file's file:// URI, or doc://NAME for a document stored under a name.
    """
    settings = get_settings()
    wanted = [_ledger_filter(item) for item in filters]
    with weaviate_config(settings) as wcfg:
        store, _ = _open_store(settings, wcfg)
        try:
            scoped = store.for_tenant(tenant) if tenant else store
            ledger = scoped.open_ledger()
            ledger.ensure_schema()
            entries = sorted(
                (e for e in ledger.entries() if all(test(e.metadata) for test in wanted)),
                key=lambda e: e.source,
            )
        finally:
            store.close()
    if as_json:
        echo_json([e.model_dump(mode="json") for e in entries])
        return
    for e in entries:
        error = f"  [{e.error_code}] {e.error}" if e.status == "failed" else ""
        meta = f"  {json.dumps(e.metadata, sort_keys=True)}" if e.metadata else ""
        click.echo(f"{e.status:6}  {e.chunk_count:6}  {e.doc_id}  {e.source}{meta}{error}")
    click.echo(f"{len(entries)} documents", err=True)


def _ledger_filter(item: str) -> Callable[[dict[str, Any]], bool]:
    """``KEY=VALUE`` on a ledger entry's metadata, compared as text (lists: any item)."""
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise click.BadParameter(f"{item!r}: expected KEY=VALUE", param_hint="--filter")

    def test(metadata: dict[str, Any]) -> bool:
        have = metadata.get(key)
        items = have if isinstance(have, list) else [have]
        return any(_as_text(v) == value for v in items if v is not None)

    return test


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def register(group: click.Group) -> None:
    """Add ``ingest``, ``search``, ``delete`` and ``docs`` to the root command."""
    for command in (ingest, search, delete, docs):
        group.add_command(command)

"""``chunkweave ingest``: files into the store through the one document pipeline.

The parent process runs the pipeline's check stage on every file (one hash, one
ledger read) and skips the current ones before any worker process starts; the rest
go through :meth:`chunkweave.storage.pipeline.conductor.Pipeline.ingest` in a pool of
processes, each with its own pipeline, given the hash the check took. A transient
failure (the store or the embedder unreachable) is reported as that file's failure,
recorded in the ledger when the store can still be reached.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, get_args

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from chunkweave import tracing
from chunkweave.chunking.models import ChunkOptions, Strategy
from chunkweave.parsers.document import ParseOptions
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.config import EmbedderConfig, FilesConfig, WeaviateConfig
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.embedders.errors import EmbedderError
from chunkweave.storage.errors import StoreError
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.metadata import MetadataError
from chunkweave.storage.pipeline.conductor import Pipeline, open_pipeline, transient
from chunkweave.storage.values import DocOutcome
from chunkweave.worker.cli.common import (
    echo_json,
    friendly_errors,
    metadata_options,
    password_option,
)
from chunkweave.worker.cli.store import expand_paths, weaviate_config
from chunkweave.worker.enqueue import Enqueuer
from chunkweave.worker.job_inputs import check_job_tenant, command_line_metadata
from chunkweave.worker.settings import Settings, get_settings

_stderr = Console(stderr=True)


def register(group: click.Group) -> None:
    """Add ``ingest`` to the root command."""
    group.add_command(ingest)


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
    path: str,
    force: bool,
    metadata: dict[str, Any] | None = None,
    tenant: str | None = None,
    sha1: str | None = None,
) -> DocOutcome:
    assert _PIPELINE is not None, "worker not initialised"
    try:
        with tracing.span("ingest", source=path):  # the document's trace (tracing on)
            return _PIPELINE.ingest(path, force=force, metadata=metadata, tenant=tenant, sha1=sha1)
    except (StoreError, EmbedderError) as err:
        if not transient(err):
            raise
        # A task would retry later; a command reports it as this file's failure.
        source = str(Path(path).expanduser().resolve())
        return _PIPELINE.failed(source, doc_id_for(source), err.code, str(err), tenant=tenant)
    finally:
        tracing.flush()  # pool processes end without running atexit


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
            for failed in kw["refused"]:  # a refused sidecar: the ledger says why too
                _PIPELINE.failed(
                    failed.source,
                    failed.doc_id,
                    ErrorCode.BAD_METADATA,
                    failed.error or "",
                    tenant=kw["tenant"],
                )
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
    sha1s: dict[Path, str | None] = {}
    for path in files:
        # Unchanged documents are skipped here, before any worker process starts.
        skip, sha1s[path] = (
            (None, None) if force else _check(pipeline, path, metas.get(path), tenant)
        )
        if skip is None:
            todo.append(path)
        else:
            outcomes.append(skip)
            bar.advance(task)
    if workers <= 1 or len(todo) <= 1:
        for path in todo:
            outcomes.append(_ingest_one(str(path), force, metas.get(path), tenant, sha1s[path]))
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
            [sha1s[p] for p in todo],
        ):
            outcomes.append(outcome)
            bar.advance(task)
    return outcomes


def _check(
    pipeline: Pipeline, path: Path, metadata: dict[str, Any] | None, tenant: str | None
) -> tuple[DocOutcome | None, str | None]:
    """Run the pipeline's check stage: the ``unchanged`` outcome (or None), the file's hash."""
    try:
        checked = pipeline.check(path, metadata=metadata, tenant=tenant)
    except (OSError, StoreError):
        return None, None  # the full ingest reports the failure properly
    return (checked.unchanged() if checked.verdict == "unchanged" else None), checked.sha1


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
    if files or refused:
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
                refused=refused,
            )
    summary = summarize([*outcomes, *refused, *missing], time.monotonic() - started)
    echo_json(summary) if as_json else _print_summary(summary)
    if summary["failed"]:
        raise SystemExit(1)

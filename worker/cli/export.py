"""``chunkweave export SOURCE... --to DIR``: chunks as Markdown files, for another vector store.

Runs the document pipeline's stages (:mod:`chunkweave.storage.pipeline`) with the
files as the target: each file is checked, parsed and chunked exactly as
``chunkweave ingest`` would (the same chunker, the same document ids, so the same
chunk IDs), and written with :class:`chunkweave.storage.files.FileSink`. No Weaviate
and no embedding: only the tokenizer is loaded. A document whose file and chunker
are those the manifest records (and whose files are all present) is skipped before
parsing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, get_args

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from chunkweave.chunking.models import ChunkOptions, Strategy
from chunkweave.parsers import ParseError, parse_document
from chunkweave.storage.embedders import Embedder, make_embedder
from chunkweave.storage.errors import StoreError
from chunkweave.storage.files import FileSink, SinkResult
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.pipeline.check import file_version
from chunkweave.storage.pipeline.chunker import Chunker
from chunkweave.worker.cli.common import echo_json, friendly_errors, password_option
from chunkweave.worker.cli.store import expand_paths
from chunkweave.worker.settings import get_settings

_stderr = Console(stderr=True)


def register(group: click.Group) -> None:
    """Add the ``export`` command to the root command group."""
    group.add_command(export)


class Exporter:
    """The document pipeline's stages with a :class:`FileSink` as the target.

    check (the manifest's record of the file's version and chunker), parse, chunk
    (a :class:`~chunkweave.storage.pipeline.chunker.Chunker`, as ``ingest``'s), write.
    """

    def __init__(self, sink: FileSink, embedder: Embedder, opts: ChunkOptions, settings: Any):
        self.sink = sink
        self.chunker = Chunker(opts, embedder)
        self.fingerprint = self.chunker.fingerprint
        self.parse_opts = settings.parse

    def export(self, path: Path, *, force: bool = False) -> tuple[str, SinkResult | str]:
        """Export one file: its status and what the sink did (or the error, naming the file).

        The status is ``written``, ``unchanged``, ``skipped`` (current, not parsed) or
        ``failed``.
        """
        source = str(path)
        doc_id = doc_id_for(source)
        try:
            if not force and self.sink.is_current(doc_id, file_version(path), self.fingerprint):
                return "skipped", SinkResult()
            doc = parse_document(path, self.parse_opts)
            chunks = self.chunker.chunk(doc, doc_id=doc_id, source=source)
            if not chunks:
                return "failed", f"{source}: no chunks (document has no text content)"
            result = self.sink.write_document(doc_id, chunks)
        except ParseError as err:
            return "failed", f"{err} [{err.code}]"
        except (OSError, StoreError, ValueError) as err:
            return "failed", f"{source}: {err}"
        return ("written" if result.written or result.removed else "unchanged"), result


@click.command()
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "--to",
    "to",
    required=True,
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of the export (created if missing).",
)
@click.option("--strategy", type=click.Choice(get_args(Strategy)), help="Chunking strategy.")
@click.option("--force", is_flag=True, help="Re-chunk documents the manifest says are current.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary object.")
@password_option
@friendly_errors
def export(
    sources: tuple[str, ...], to: Path, strategy: str | None, force: bool, as_json: bool
) -> None:
    """Write the chunks of PDF/DOCX files, folders or globs as Markdown files in DIR.

    One file per chunk, DIR/<doc slug>/NNN-<slug>.md, with YAML front matter (ids,
    heading path, section number, pages, regions, token count, parent id), and
    DIR/manifest.jsonl listing them. Incremental: unchanged files are not touched,
    stale ones are removed.
    """
    started = time.monotonic()
    settings = get_settings()
    opts = settings.chunking
    if strategy:
        opts = opts.model_copy(update={"strategy": strategy})
    files, unmatched = expand_paths(sources)
    for pattern in unmatched:
        click.echo(f"warning: {pattern}: no PDF or DOCX files", err=True)
    if not files:
        raise click.ClickException("no PDF or DOCX files to export")
    exporter = Exporter(FileSink(to), make_embedder(settings.embedder), opts, settings)
    counts = {"written": 0, "unchanged": 0, "skipped": 0}
    files_written = files_removed = 0
    failed: list[str] = []
    columns = (TextColumn("export"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=_stderr, transient=True, disable=len(files) < 2) as bar:
        task = bar.add_task("export", total=len(files))
        for path in files:
            status, result = exporter.export(path, force=force)
            if isinstance(result, str):
                failed.append(result)
            else:
                counts[status] += 1
                files_written += result.written
                files_removed += result.removed
            bar.advance(task)
    summary = {
        "documents": len(files),
        **counts,
        "files_written": files_written,
        "files_removed": files_removed,
        "failed": failed,
        "seconds": round(time.monotonic() - started, 3),
    }
    if as_json:
        echo_json(summary)
    else:
        click.echo(
            f"{len(files)} documents: {counts['written']} written, {counts['unchanged']} "
            f"unchanged, {counts['skipped']} skipped (current); {files_written} files "
            f"written, {files_removed} removed; {len(failed)} failed; "
            f"{summary['seconds']:.1f}s -> {to}"
        )
        for reason in failed:
            click.echo(f"  failed: {reason}", err=True)
    if failed:
        raise SystemExit(1)

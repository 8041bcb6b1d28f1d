"""``chunkweave inspect FILE [-o report.html]``: a self-contained HTML view of FILE's chunks."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from chunkweave.worker.cli.chunk import chunk_command
from chunkweave.worker.cli.common import friendly_errors, password_option

#: The chunking options of ``chunkweave chunk``, shared (same names, types and help).
_CHUNK_OPTIONS = (
    "strategy",
    "max_tokens",
    "target_tokens",
    "overlap_tokens",
    "parents",
    "no_context",
    "table_format",
)


def register(group: click.Group) -> None:
    """Add the ``inspect`` command to the root command group."""
    group.add_command(inspect_command)


@click.command("inspect")
@click.argument("file", type=click.Path(dir_okay=False, exists=True, path_type=str))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True, path_type=str),
    default=None,
    help="Report file. Default: FILE's name with .inspect.html, in the current folder.",
)
@click.option(
    "--dpi",
    type=click.IntRange(36, 200),
    default=96,
    show_default=True,
    help="Page image resolution (each image is also at most 1800 px on its long side).",
)
@password_option
@friendly_errors
def inspect_command(file: str, output: str | None, dpi: int, **chunking: Any) -> None:
    """Chunk FILE and write one HTML file showing its chunks on the page images.

    Takes the chunking options of ``chunkweave chunk`` (write two reports with two
    strategies to compare them). PDF pages are drawn with each chunk's regions in
    its own colour and what no chunk holds (running headers, contents entries)
    greyed; DOCX has no page images, so its report is the panel and a chunk list.
    The file needs no network: open it in any browser.
    """
    from chunkweave.worker.inspect import build_report, parse_with_routes, write_report

    started = time.perf_counter()
    chunker = _chunking(chunking)
    from chunkweave.worker.cli.chunk import _doc_id
    from chunkweave.worker.settings import get_settings

    settings = get_settings()
    doc, routes = parse_with_routes(file, settings.parse)
    chunks = chunker.chunk(doc, doc_id=_doc_id(file), source=file)
    note = None
    if doc.format != "pdf":
        note = f"{doc.format.upper()} has no pages to draw: this report shows the chunks only."
    report = build_report(
        chunks,
        source=file,
        format=doc.format,
        title=doc.title,
        page_count=doc.page_count,
        parser=doc.parser,
        elements=doc.elements,
        warnings=doc.warnings,
        routes=routes,
        source_pdf=file if doc.format == "pdf" else None,
        note=note,
    )
    out = Path(output) if output else Path.cwd() / (Path(file).stem + ".inspect.html")
    password = settings.parse.password
    secret = password.get_secret_value() if password is not None else None
    stats = write_report(report, out, dpi=dpi, password=secret)
    click.echo(
        f"{out}: {len(chunks)} chunks, {stats.pages} pages, {stats.regions} regions, "
        f"{stats.bytes / 1e6:.1f} MB in {time.perf_counter() - started:.1f}s",
        err=True,
    )
    click.echo(str(out))


def _chunking(values: dict[str, Any]) -> Any:
    """Return the chunker of these options and the embedder (or none), as ``chunk`` does."""
    from chunkweave.chunking import needs_embedder
    from chunkweave.storage.pipeline.chunker import Chunker
    from chunkweave.worker.cli.chunk import _embedder, _options
    from chunkweave.worker.settings import get_settings

    settings = get_settings()
    overrides: dict[str, Any] = {
        "strategy": values["strategy"],
        "max_tokens": values["max_tokens"],
        "target_tokens": values["target_tokens"],
        "overlap_tokens": values["overlap_tokens"],
        "table_format": values["table_format"],
    }
    if values["parents"]:
        overrides["parent_chunks"] = True
    if values["no_context"]:
        overrides["contextualize"] = False
    opts = _options(settings.chunking, overrides)
    embedder = _embedder(settings, need_vectors=needs_embedder(opts))
    return Chunker(opts, embedder)


inspect_command.params.extend(p for p in chunk_command.params if p.name in _CHUNK_OPTIONS)

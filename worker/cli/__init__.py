"""The ``chunkweave`` command line."""

from __future__ import annotations

import importlib

import click

#: Modules that each register their commands on the root group via ``register(group)``.
_COMMAND_MODULES = (
    "chunkweave.worker.cli.parse",  # parse
    "chunkweave.worker.cli.chunk",  # chunk, eval
    "chunkweave.worker.cli.store",  # ingest, search, delete, docs
    "chunkweave.worker.cli.service",  # worker, watch, serve, enqueue, backfill, status, api
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(package_name="chunkweave")
def main(debug: bool) -> None:
    """chunkweave: structure-aware PDF/DOCX ingestion into Weaviate."""


for _name in _COMMAND_MODULES:
    importlib.import_module(_name).register(main)

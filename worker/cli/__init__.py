"""The ``chunkweave`` command line.

Each module of this package registers a group of commands (``register(group)``).
Modules are imported only when one of their commands runs (or ``--help`` lists
them all), so ``chunkweave status`` does not pay for the Weaviate client or the
parsers: a command in a second terminal should answer at once.
"""

from __future__ import annotations

import importlib

import click

#: Command name -> the module that registers it.
_COMMANDS = {
    "parse": "chunkweave.worker.cli.parse",
    "chunk": "chunkweave.worker.cli.chunk",
    "eval": "chunkweave.worker.cli.chunk",
    "inspect": "chunkweave.worker.cli.inspect",
    "mcp": "chunkweave.worker.cli.mcp",
    "ingest": "chunkweave.worker.cli.ingest",
    "search": "chunkweave.worker.cli.store",
    "delete": "chunkweave.worker.cli.store",
    "export": "chunkweave.worker.cli.export",
    "docs": "chunkweave.worker.cli.store",
    "worker": "chunkweave.worker.cli.service",
    "watch": "chunkweave.worker.cli.service",
    "serve": "chunkweave.worker.cli.service",
    "enqueue": "chunkweave.worker.cli.service",
    "backfill": "chunkweave.worker.cli.service",
    "status": "chunkweave.worker.cli.service",
    "api": "chunkweave.worker.cli.service",
    "reindex": "chunkweave.worker.cli.reindex",
}


class _LazyGroup(click.Group):
    """A group whose commands are imported from their module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, without importing anything."""
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the command's module and return the command it registers."""
        module = _COMMANDS.get(cmd_name)
        if module is None:
            return None
        registered = click.Group()
        importlib.import_module(module).register(registered)
        return registered.commands.get(cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(package_name="chunkweave")
def main(debug: bool) -> None:
    """chunkweave: structure-aware PDF/DOCX ingestion into Weaviate."""

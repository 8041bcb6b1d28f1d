"""Shared CLI plumbing: one-line errors, JSON output, option parsing helpers."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from chunkweave.errors import ChunkweaveError
from chunkweave.parsers.errors import ParseError

F = TypeVar("F", bound=Callable[..., Any])


def friendly_errors(func: F) -> F:
    """Turn expected errors into one clear line on stderr and exit code 1.

    With ``--debug`` on the root command the traceback is shown instead.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        debug = bool(ctx.find_root().params.get("debug"))
        try:
            return func(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
        except ParseError as err:
            if debug:
                raise
            click.echo(f"error: {err} [{err.code}]", err=True)
            sys.exit(1)
        except Exception as err:  # noqa: BLE001 - the CLI's last line of defence
            if debug:
                raise
            if _redis_down(err):  # configured, or a running serve's, but not answering
                click.echo(f"error: Redis unreachable: {err}", err=True)
            elif isinstance(err, ChunkweaveError):  # its message says what and why
                click.echo(f"error: {err}", err=True)
            else:
                click.echo(f"error: {type(err).__name__}: {err}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def _redis_down(err: Exception) -> bool:
    """Tell whether ``err`` is a failure to reach Redis (without importing redis for it)."""
    exceptions = sys.modules.get("redis.exceptions")
    return exceptions is not None and isinstance(err, exceptions.ConnectionError)


def echo_json(obj: Any) -> None:
    """Print one JSON document on stdout (sorted keys, UTF-8)."""
    click.echo(json.dumps(obj, ensure_ascii=False, sort_keys=True))


#: The setting an encrypted PDF's password comes from when no --password is given.
PASSWORD_SETTING = "CHUNKWEAVE_PARSE__PASSWORD"


def password_option(func: F) -> F:
    """Add ``--password``, the password of encrypted PDFs, to a command that parses.

    Given, it is the parse settings' ``password`` for this run (the command reads its
    settings after the options are parsed), as ``CHUNKWEAVE_PARSE__PASSWORD`` is.
    """

    def given(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is None:
            return
        import os

        from chunkweave.worker.settings import get_settings

        os.environ[PASSWORD_SETTING] = value  # worker processes it starts read it too
        get_settings.cache_clear()

    option = click.option(
        "--password",
        default=None,
        expose_value=False,
        is_eager=True,
        callback=given,
        help=f"Password of encrypted PDFs (default: {PASSWORD_SETTING}).",
    )
    return option(func)


def metadata_options(func: F) -> F:
    """Add ``--meta``, ``--meta-file`` and ``--tenant``, as ``enqueue`` and ``ingest`` take them.

    Precedence (``worker.enqueue.command_line_metadata``, ``Enqueuer.doc_metadata``):
    ``--meta`` over ``--meta-file``, both over a file's sidecar ``NAME.meta.json``.
    """
    options = (
        click.option(
            "--meta",
            "meta",
            multiple=True,
            metavar="KEY=VALUE",
            help="Caller metadata on every chunk (a declared key, or acl); repeatable.",
        ),
        click.option(
            "--meta-file",
            type=click.Path(dir_okay=False),
            help="A JSON object of metadata (--meta wins over it; it wins over sidecars).",
        ),
        click.option("--tenant", default=None, help="Store the documents in this tenant."),
    )
    for option in reversed(options):
        func = option(func)
    return func


def check_watchable(value: str | None, hint: str) -> None:
    """Refuse a watched folder that is not there, before anything starts.

    A URI (``s3://bucket/prefix``) is checked by its watcher; a local path must be a
    folder now (a typo would otherwise start the whole service and then stop it).
    ``hint`` names the parameter in the usage error.
    """
    if value is None or "://" in value:
        return
    path = Path(value).expanduser()
    if not path.is_dir():
        what = "not a folder" if path.exists() else "no such folder"
        raise click.BadParameter(
            f"{value}: {what} (create it first: mkdir -p {value})", param_hint=hint
        )

"""``chunkweave mcp``: the MCP server on stdio (see :mod:`chunkweave.worker.mcp_server`)."""

from __future__ import annotations

import click

from chunkweave.worker.cli.common import friendly_errors


def register(group: click.Group) -> None:
    """Add the ``mcp`` command to the root command group."""
    group.add_command(mcp_command)


@click.command("mcp")
@click.option(
    "--principal",
    "principals",
    multiple=True,
    help="Search as this principal (repeatable; with CHUNKWEAVE_MCP_PRINCIPALS): only "
    "chunks whose acl names one of them. None: only documents without an acl.",
)
@click.option(
    "--tenant",
    default=None,
    help="Serve this tenant's documents only (a multi-tenant store needs one; "
    "default: CHUNKWEAVE_WEAVIATE__TENANT).",
)
@friendly_errors
def mcp_command(principals: tuple[str, ...], tenant: str | None) -> None:
    """Serve the store to MCP clients (agents) on stdin/stdout.

    Tools: search (with filters), enqueue (paths under CHUNKWEAVE_SOURCES__ROOTS or
    allowed s3:// buckets, as POST /jobs), job_status, list_jobs, list_documents.
    Uses the configured Redis and Weaviate, else those of a `chunkweave serve` running
    on the same data directory (said in one line on stderr); with no Weaviate at all,
    the local one is started as for `chunkweave search`. Needs the `mcp` extra.
    Searches apply the ACL as the given principals; with none, no document that
    carries an acl is ever returned. On a multi-tenant store an agent sees one
    tenant: --tenant names it, and without one every search is refused.
    """
    try:
        import mcp  # noqa: F401
    except ImportError as err:
        raise click.ClickException(
            f"chunkweave mcp needs the MCP SDK ({err}): pip install 'chunkweave[mcp]'"
        ) from err
    from chunkweave.worker.cli.store import weaviate_config
    from chunkweave.worker.discovery import discover
    from chunkweave.worker.mcp_server import Tools, build_server

    found = discover()
    if (line := found.line()) is not None:
        click.echo(line, err=True)  # stdout is the protocol's
    settings = found.settings
    debug = bool(click.get_current_context().find_root().params.get("debug"))
    if tenant is not None:
        from chunkweave.storage.metadata import check_tenant

        try:
            check_tenant(tenant)
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="--tenant") from err
        settings = settings.model_copy(
            update={"weaviate": settings.weaviate.model_copy(update={"tenant": tenant})}
        )
    with weaviate_config(settings) as wcfg:
        principals = (*settings.mcp_principals, *principals)
        tools = Tools(settings.model_copy(update={"weaviate": wcfg}), principals)
        try:
            build_server(tools, debug=debug).run("stdio")
        finally:
            tools.close()

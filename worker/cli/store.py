"""``chunkweave search | delete | docs``: the store from the command line.

With no Weaviate URL configured every command starts the project's local Weaviate
(persistent data under ``Settings.data_dir / "weaviate"``) and says so on stderr.
"""

from __future__ import annotations

import contextlib
import glob
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from chunkweave.parsers.document import SUPPORTED_SUFFIXES
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.embedders import Embedder, make_embedder
from chunkweave.storage.filters import Condition, SearchRequest, filterable
from chunkweave.storage.hits import Hit
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.metadata import MetadataConfig
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.protocols import ChunkStore
from chunkweave.storage.stores import local_server, open_store
from chunkweave.storage.values import EmbedderIdentity
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
    with local_server(data_dir) as server:
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
        "matched": [asdict(m) for m in hit.matched],
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
@click.option(
    "--small-to-big/--chunks-only",
    "small_to_big",
    default=None,
    help="Match table rows and sentences too and return their chunks, naming what "
    "matched (default: CHUNKWEAVE_WEAVIATE__SMALL_TO_BIG; needs units indexed).",
)
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
    small_to_big: bool | None,
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
                small_to_big=small_to_big,
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
        for unit in hit.matched:  # small-to-big: the rows and sentences that matched
            at = f"row {unit.row}" if unit.row is not None else f"chars {unit.span}"
            click.echo(f"    matched {unit.kind} ({at}): {unit.text[:120]}")
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
    """List the document ledger: status, chunk count, doc_id, source, metadata, error, warnings.

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
        for warning in e.warnings:
            click.echo(f"        warning: {warning}")
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
    """Add ``search``, ``delete`` and ``docs`` to the root command."""
    for command in (search, delete, docs):
        group.add_command(command)

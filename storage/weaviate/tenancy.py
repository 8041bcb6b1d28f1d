"""Checks made before an existing collection is used: its tenancy and its metadata properties.

Multi-tenancy is chosen when a collection is created and Weaviate cannot switch it
on later, so an existing single-tenant collection is refused when the config asks
for tenants (and the reverse), with the migration to use. Metadata properties are
only ever added to a collection, never changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from weaviate.classes.config import Property
from weaviate.exceptions import WeaviateBaseError

from chunkweave.storage.errors import StoreError
from chunkweave.storage.metadata import MetadataError, check_tenant
from chunkweave.storage.weaviate.client import WeaviateSession


def check_tenant_name(tenant: str) -> str:
    """Return ``tenant`` if Weaviate accepts it; raise :class:`StoreError` before it is sent."""
    try:
        return check_tenant(tenant)
    except MetadataError as err:
        raise StoreError(str(err)) from None


def migration(name: str, *, to_tenants: bool) -> str:
    """Return the steps that move a collection's documents to the other tenancy."""
    how = "true" if to_tenants else "false"
    return (
        f"to migrate, point CHUNKWEAVE_WEAVIATE__COLLECTION and "
        f"CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION at new names with "
        f"CHUNKWEAVE_WEAVIATE__MULTI_TENANCY={how}, re-ingest every document "
        f"(with its tenant), then delete {name!r}"
    )


def check_tenancy(session: WeaviateSession) -> None:
    """Refuse an existing chunk or ledger collection whose tenancy is not the config's."""
    cfg = session.cfg
    for name in (cfg.collection, cfg.ledger_collection):

        def _enabled(name: str = name) -> bool | None:
            collections = session.client.collections
            if not collections.exists(name):
                return None
            config = collections.use(name).config.get()
            return bool(config.multi_tenancy_config.enabled)

        try:
            enabled = session.retry(f"reading collection {name}", _enabled)
        except WeaviateBaseError as err:  # pragma: no cover - retry wraps these
            raise StoreError(f"reading collection {name}: {err}") from err
        if enabled is None or enabled == cfg.multi_tenancy:
            continue
        if cfg.multi_tenancy:
            raise StoreError(
                f"collection {name!r} is single-tenant and multi-tenancy cannot be switched "
                f"on for it; {migration(name, to_tenants=True)}"
            )
        raise StoreError(
            f"collection {name!r} is multi-tenant but CHUNKWEAVE_WEAVIATE__MULTI_TENANCY is "
            f"off; turn it on, or {migration(name, to_tenants=False)}"
        )


def add_missing_properties(
    session: WeaviateSession, props: Sequence[Property], collection: str | None = None
) -> None:
    """Add those of ``props`` the chunk collection lacks (an existing one; never changed).

    ``collection``: the collection the configured name serves when it is an alias
    (schema changes do not follow an alias). A property that exists with another
    type is refused: its stored values would not be what the config declares.
    """
    name = collection or session.cfg.collection
    collections = session.client.collections

    def _have() -> dict[str, Any]:
        return {p.name: p.data_type for p in collections.use(name).config.get().properties}

    def _add() -> None:
        have = _have()
        for prop in props:
            kind = have.get(prop.name)
            if kind is None:
                try:
                    collections.use(name).config.add_property(prop)
                    continue
                except WeaviateBaseError:
                    # Another worker starting at the same time may have added it first
                    # (or created the collection with it): then it is there now.
                    have = _have()
                    kind = have.get(prop.name)
                    if kind is None:
                        raise
            if kind.value != prop.dataType.value:
                raise StoreError(
                    f"collection {name!r} has property {prop.name!r} as {kind.value}, "
                    f"but the metadata config declares {prop.dataType.value}; use another "
                    "key or a new collection"
                )

    session.retry(f"adding metadata properties to {name}", _add)

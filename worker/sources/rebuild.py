"""Which stored documents a rebuild (``chunkweave reindex``) cannot read again, and why.

A reindex re-reads every source of the live ledger. A document whose source is gone
cannot be rebuilt, so the target would end ``incomplete`` and never be switched:
:func:`unrebuildable` says so before a reindex starts, from a cheap look at each
local source (no parsing; ``s3://`` sources are not looked at here: the dry run reads
them). An HTTP upload is the usual case: with ``CHUNKWEAVE_API__UPLOAD_RETENTION=delete``
(the default) the uploaded file is removed once its document is stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from chunkweave.storage.values import LedgerEntry

if TYPE_CHECKING:
    from chunkweave.worker.settings import Settings


def _local_path(source: str) -> Path | None:
    if source.startswith("file://"):
        return Path(unquote(urlsplit(source).path))
    if "://" in source:
        return None  # another scheme: not looked at here
    return Path(source)


def why_gone(source: str, settings: Settings) -> str | None:
    """Return why ``source`` cannot be read again, or None when it can (or is not local)."""
    path = _local_path(source)
    if path is None or path.is_file():
        return None
    if path.resolve().is_relative_to(settings.upload_dir.resolve()):
        return (
            "an HTTP upload, removed once its document was stored "
            f"(CHUNKWEAVE_API__UPLOAD_RETENTION={settings.api.upload_retention}); upload it again"
        )
    return "its file is gone; restore it, or delete the document"


def unrebuildable(entries: Iterable[LedgerEntry], settings: Settings) -> list[tuple[str, str]]:
    """Return ``(source, why)`` for every stored document whose source is gone."""
    out: list[tuple[str, str]] = []
    for entry in entries:
        if entry.status != "ok":
            continue
        if (why := why_gone(entry.source, settings)) is not None:
            out.append((entry.source, why))
    return out


def live_unrebuildable(settings: Settings) -> list[tuple[str, str]]:
    """:func:`unrebuildable` over the live version's ledger (nothing stored: none)."""
    from chunkweave.storage.versions import open_catalog

    with open_catalog(settings.weaviate) as catalog:
        live = catalog.live()
        if live is None:
            return []
        entries = catalog.ledger_entries(live.ledger)
    return unrebuildable(entries, settings)


def refusal(gone: list[tuple[str, str]], *, shown: int = 10) -> str:
    """One message naming the documents a reindex could not rebuild, and why."""
    lines = [f"{source}: {why}" for source, why in gone[:shown]]
    more = f"; and {len(gone) - shown} more" if len(gone) > shown else ""
    return (
        f"{len(gone)} stored document(s) cannot be rebuilt, so the reindex would end "
        f"incomplete: {'; '.join(lines)}{more}"
    )

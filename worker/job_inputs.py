"""A job's inputs, checked before anything is queued: webhook, document ids, tenant, metadata.

Every door of :mod:`chunkweave.worker.enqueue` (Python, the CLI, the HTTP API, the
watchers) checks what a caller gives with these, so a bad input is refused with the
same reason whichever door it came through.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from chunkweave.storage.metadata import MetadataError, check_tenant, jsonable, validate_metadata
from chunkweave.worker.settings import Settings
from chunkweave.worker.webhook import WebhookRefusedError, check_url

#: Scheme of document ids that callers choose (``document_id``), e.g. ``doc://report-q3``.
DOC_ID_SCHEME = "doc://"
_DOCUMENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,255}")


def check_webhook(url: str, settings: Settings) -> None:
    """Refuse a webhook the workers would not send: no signing key, or not http(s).

    Where the URL resolves is checked again at delivery, when it is called.
    """
    if settings.webhook.secret is None:
        raise WebhookRefusedError(
            "webhooks are always signed: set CHUNKWEAVE_WEBHOOK__SECRET to use one"
        )
    check_url(url)


def named_doc_id(document_id: str) -> str:
    """Return the doc id for a caller-chosen ``document_id`` (``doc://<document_id>``).

    A caller that names its document (``report-q3``) gets the same doc id for every
    version it uploads, so a new version replaces the old one incrementally (unchanged
    chunks are kept, stale ones pruned) instead of adding a second document. Without a
    name, a document's id is its source: the path or ``s3://`` URI.
    Raises ``ValueError`` for an empty or odd id (up to 256 of ``A-Z a-z 0-9 . _ : / @ + -``).
    """
    name = document_id.removeprefix(DOC_ID_SCHEME)
    if not _DOCUMENT_ID.fullmatch(name):
        raise ValueError(
            f"document_id {document_id!r}: use 1-256 of A-Z a-z 0-9 . _ : / @ + - "
            "(starting with a letter or digit)"
        )
    return DOC_ID_SCHEME + name


def check_job_tenant(tenant: str | None, settings: Settings) -> str | None:
    """Return the tenant a job's documents go to; raise ``ValueError`` for one not usable.

    With multi-tenancy off no tenant may be named; with it on a job must name one
    (or the process has a default, ``CHUNKWEAVE_WEAVIATE__TENANT``). Names are
    checked against what Weaviate accepts before anything is queued.
    """
    cfg = settings.weaviate
    if tenant is None:
        tenant = cfg.tenant
    if tenant is None:
        if cfg.multi_tenancy:
            raise ValueError(
                "multi-tenancy is on (CHUNKWEAVE_WEAVIATE__MULTI_TENANCY): name a tenant"
            )
        return None
    if not cfg.multi_tenancy:
        raise ValueError(
            f"tenant {tenant!r} given but multi-tenancy is off: set "
            "CHUNKWEAVE_WEAVIATE__MULTI_TENANCY=true (on a new collection)"
        )
    return check_tenant(tenant)


def command_line_metadata(
    pairs: Sequence[str], meta_file: str | None, settings: Settings
) -> dict[str, object]:
    """Metadata from ``--meta-file FILE`` (a JSON object) and ``--meta KEY=VALUE`` options.

    Values of ``--meta`` are text read as the key's declared type (a list: items
    separated by commas, or the option repeated); ``--meta`` wins over the file.
    Raises ``ValueError`` naming the option or file, the key and why.
    """
    cfg = settings.weaviate.metadata
    merged: dict[str, object] = {}
    if meta_file:
        try:
            raw = json.loads(Path(meta_file).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise MetadataError(f"{meta_file}: not a readable JSON file: {err}") from None
        if not isinstance(raw, dict):
            raise MetadataError(f"{meta_file}: expected a JSON object of metadata")
        merged.update(jsonable(validate_metadata(raw, cfg, where=meta_file)))
    given: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise MetadataError(f"--meta {pair!r}: expected KEY=VALUE")
        given.setdefault(key, []).append(value)
    texts = {k: v[0] if len(v) == 1 else json.dumps(v) for k, v in given.items()}
    merged.update(jsonable(validate_metadata(texts, cfg, where="--meta", from_text=True)))
    if meta_file and texts:
        validate_metadata(merged, cfg, where="--meta and --meta-file")
    return merged


def caller_metadata(
    raw: Mapping[str, object] | None, settings: Settings, *, where: str, from_text: bool = False
) -> dict[str, object]:
    """Validate a caller's metadata (``ValueError`` naming ``where``, the key and why)."""
    if not raw:
        return {}
    cfg = settings.weaviate.metadata
    return jsonable(validate_metadata(raw, cfg, where=where, from_text=from_text))

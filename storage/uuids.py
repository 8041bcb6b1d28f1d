"""The one mapping from a chunk's SHA1 id to the UUID every chunk store keys it by."""

from __future__ import annotations

import uuid

#: Fixed namespace for chunk UUIDs. Changing it would re-key every stored chunk.
CHUNK_NAMESPACE = uuid.UUID("5b0c2e3a-8f1d-5c6e-9a47-c4a1d2e0f7b3")


def chunk_uuid(chunk_id: str) -> str:
    """Weaviate UUID (canonical lowercase string) for a chunk SHA1 hex id.

    ``uuid5(CHUNK_NAMESPACE, chunk_id)``: deterministic, so the same chunk always
    lands on the same object (re-ingest overwrites instead of duplicating); pure, so
    any worker computes it without asking the store. Raises ``ValueError`` for an
    id that is not 40 lowercase hex digits, so a malformed id never becomes an object.
    """
    if len(chunk_id) != 40 or chunk_id.strip("0123456789abcdef"):
        raise ValueError(f"chunk id must be a 40-digit lowercase SHA1 hex string: {chunk_id!r}")
    return str(uuid.uuid5(CHUNK_NAMESPACE, chunk_id))


def ledger_uuid(doc_id: str) -> str:
    """Weaviate UUID of the ledger entry for ``doc_id`` (one entry per document)."""
    return str(uuid.uuid5(CHUNK_NAMESPACE, "doc:" + doc_id))

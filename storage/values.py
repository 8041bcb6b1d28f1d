"""The values that cross the storage boundary, whatever the store: no client imported here.

The protocols (:mod:`.protocols`), the pipeline (:mod:`.ingest`), the document write
(:mod:`.write`), every store module and the worker all speak in these: what a
collection's vectors were made with (:class:`EmbedderIdentity`), where a stored chunk
sits (:class:`StoredPosition`), the ledger's record of a document (:class:`LedgerEntry`),
what a write did (:class:`UpsertResult`, :class:`WritePlan`) and what happened to a
document (:class:`DocOutcome`, small enough to return from a Celery task).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from chunkweave.parsers.errors import ErrorCode

if TYPE_CHECKING:
    from chunkweave.chunking.models import Region

OutcomeStatus = Literal["added", "updated", "unchanged", "deleted", "failed"]
LedgerStatus = Literal["ok", "failed"]


@dataclass(frozen=True)
class EmbedderIdentity:
    """What a collection's vectors were made with; recorded on it and on the ledger."""

    name: str
    dimension: int

    def __str__(self) -> str:
        return f"{self.name} ({self.dimension}-d)"


class StoredPosition(NamedTuple):
    """Where a stored chunk was, as it was written: positional fields, not its content.

    ``regions`` is ``None`` when the store keeps no regions (an older collection).
    """

    chunk_index: int
    regions: tuple[Region, ...] | None
    #: Hash of the metadata the chunk was written with (``""``: none, or written before
    #: chunks carried metadata).
    meta_sha1: str = ""


class LedgerEntry(BaseModel):
    """The ledger's record of one document (its last completed attempt)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str
    source: str
    doc_sha1: str = ""
    chunker: str = ""
    embedder: str = ""
    chunk_count: int = 0
    pages: int = 0
    status: LedgerStatus
    error: str | None = None
    error_code: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    #: The caller metadata of the stored version (JSON values, dates as ISO strings),
    #: its hash, and the tenant it is stored in: what a re-index replays.
    metadata: dict[str, Any] = Field(default_factory=dict)
    meta_sha1: str = ""
    tenant: str | None = None
    #: The parser's warnings on the last attempt (pages OCRed or dropped, a repaired file).
    warnings: tuple[str, ...] = ()


class DocOutcome(BaseModel):
    """What happened to one document (small: safe to return from a Celery task)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    doc_id: str
    status: OutcomeStatus
    pages: int = 0
    chunks_added: int = 0
    chunks_unchanged: int = 0
    chunks_deleted: int = 0
    error_code: ErrorCode | None = None
    error: str | None = None
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    #: Seconds per stage (:mod:`.timing`): where this document's time went.
    timings: dict[str, float] = Field(default_factory=dict)


class UpsertResult(BaseModel):
    """What writing one part of a document did: chunks written vs already stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    added: int
    unchanged: int
    #: Of the unchanged, how many were written again at a new position (no embedding).
    moved: int = 0
    uuids: frozenset[str]
    #: Match units embedded and written (small-to-big; they are not in ``uuids``).
    units_added: int = 0


class WritePlan(BaseModel):
    """Which version of which document a write is writing: fixed when the write begins.

    Small and plain, so a write begun in one process can be written in parts and
    committed in others (the fan-out keeps it in Redis between its tasks).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str
    source: str
    #: The version being written (what the ledger records once it is committed).
    doc_sha1: str
    pages: int = 0
    #: The ledger knew the document when the write began: the outcome is "updated",
    #: not "added" (any earlier entry counts, failed ones too).
    existed: bool
    #: The caller metadata every chunk is written with (JSON values, validated).
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: The tenant the document is stored in (``None``: single-tenant collection).
    tenant: str | None = None
    #: The parser's warnings, recorded in the ledger with the version.
    warnings: tuple[str, ...] = ()

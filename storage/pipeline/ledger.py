"""The ledger beside the write: failures, re-tags and deletions of a document.

A failure is recorded with its code and reason; a re-tag (new metadata, nothing else
new) as the stored version; a deletion removes the chunks, then the entry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from chunkweave.errors import TransientError
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.errors import StoreError
from chunkweave.storage.timing import StageTimer
from chunkweave.storage.values import DocOutcome, LedgerEntry, WritePlan

if TYPE_CHECKING:
    from chunkweave.storage.protocols import ChunkStore, DocumentLedger
    from chunkweave.storage.write import ChunkWriter

log = logging.getLogger(__name__)


def record_failed(
    ledger: DocumentLedger,
    doc_id: str,
    source: str,
    code: ErrorCode,
    error: str,
    *,
    tenant: str | None = None,
    warnings: tuple[str, ...] = (),
    sha1: str | None = None,
    since: datetime | None = None,
) -> bool:
    """Mark the last attempt on ``doc_id`` as failed (stored chunks stay as they were).

    Keeps the previous version's ``doc_sha1``, counts and metadata, so the entry
    still describes what is stored while the failed status forces a retry next run.
    Returns False, writing nothing, when the entry is ``ok`` for the very version the
    attempt was on (``sha1``: a duplicate attempt failed, the document is stored) or
    was written ``ok`` after ``since`` (a late record of an older failure): the ledger
    never says ``failed`` for a document stored as it is.
    """
    previous = ledger.get(doc_id)
    if previous is not None and previous.status == "ok":
        same = sha1 is not None and previous.doc_sha1 == sha1
        later = (
            since is not None and previous.updated_at is not None and previous.updated_at > since
        )
        if same or later:
            log.info("%s: stored and current; failure not recorded: [%s] %s", doc_id, code, error)
            return False
    base: dict[str, Any] = (
        previous.model_dump() if previous else {"doc_id": doc_id, "source": source}
    )
    base.update(
        source=source,
        status="failed",
        error=error,
        error_code=code,
        tenant=tenant,
        warnings=warnings,
    )
    ledger.put(LedgerEntry(**base))
    return True


def failed_outcome(
    record: Callable[[ErrorCode, str], object],
    source: str,
    doc_id: str,
    code: ErrorCode,
    error: str,
    started: float,
    warnings: tuple[str, ...] = (),
    timer: StageTimer | None = None,
) -> DocOutcome:
    """Record the failure with ``record`` and return the ``failed`` outcome.

    A store that refuses the record (not transiently) is logged and only the outcome
    carries the failure. A store that is unreachable raises its
    :class:`~chunkweave.storage.errors.StoreUnavailableError`: the caller retries the
    document (a task) or reports the store down (the CLI), so no failure goes unrecorded
    because the store blinked.
    """
    try:
        record(code, error)
    except StoreError as err:
        if isinstance(err, TransientError):
            raise
        log.warning("could not record failure of %s in the ledger: %s", source, err)
    return DocOutcome(
        source=source,
        doc_id=doc_id,
        status="failed",
        error_code=code,
        error=error,
        warnings=warnings,
        seconds=time.monotonic() - started,
        timings=timer.rounded() if timer else {},
    )


def delete_document(store: ChunkStore, ledger: DocumentLedger, doc_id: str) -> DocOutcome:
    """Remove a document: all its chunks, then its ledger entry."""
    started = time.monotonic()
    entry = ledger.get(doc_id)
    deleted = store.delete_doc(doc_id)
    ledger.delete(doc_id)
    return DocOutcome(
        source=entry.source if entry else doc_id,
        doc_id=doc_id,
        status="deleted",
        pages=entry.pages if entry else 0,
        chunks_deleted=deleted,
        seconds=time.monotonic() - started,
    )


def retag(
    store: ChunkStore,
    writer: ChunkWriter,
    previous: LedgerEntry,
    metadata: Mapping[str, Any],
    tenant: str | None,
    started: float,
    timer: StageTimer,
) -> DocOutcome | None:
    """Give a document whose metadata alone changed its new metadata, in place.

    Its stored chunks are written again with their vectors: nothing is parsed,
    chunked or embedded. ``None`` when the store does not hold the chunks the
    ledger counts (a write cut short): the caller then ingests the document whole.
    """
    with timer.stage("upsert"):
        written = store.retag(previous.doc_id, metadata)
    if written != previous.chunk_count:
        return None
    plan = WritePlan(
        doc_id=previous.doc_id,
        source=previous.source,
        doc_sha1=previous.doc_sha1,
        pages=previous.pages,
        existed=True,
        metadata=dict(metadata),
        tenant=tenant,
    )
    writer.record_ok(plan, chunks=written)
    return DocOutcome(
        source=previous.source,
        doc_id=previous.doc_id,
        status="updated",
        pages=previous.pages,
        chunks_unchanged=written,
        seconds=time.monotonic() - started,
        timings=timer.rounded(),
    )

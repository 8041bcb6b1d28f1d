"""The ingest pipeline: one document from file to the vector store, incrementally.

``Pipeline.ingest`` is the whole job for one file; the worker's Celery tasks and the
``chunkweave ingest`` command are thin shells over it. In order:

1. unchanged (same ``doc_sha1`` + chunker fingerprint + embedder in the ledger, status
   ok): skip before parsing;
2. parse -> chunk -> one document write (:mod:`.write`): begin, write the chunks
   (only new ones are embedded), commit (prune stale chunks, THEN the ledger entry).

The write's order keeps the document searchable at every moment (see :mod:`.write`).
Failures are returned as a ``failed`` :class:`DocOutcome` and recorded in the ledger
(best effort: when the store itself is down, only the outcome carries the failure).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from chunkweave.chunking import chunk_document
from chunkweave.chunking.api import resolve_options
from chunkweave.chunking.fingerprint import chunker_fingerprint
from chunkweave.chunking.models import Chunk, ChunkOptions
from chunkweave.parsers import ParsedDocument, ParseError, ParseOptions, parse_document
from chunkweave.parsers.document import file_sha1
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.config import FilesConfig, WeaviateConfig
from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.embedders.errors import EmbedderError
from chunkweave.storage.errors import StoreError
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.metadata import metadata_sha1
from chunkweave.storage.protocols import ChunkStore, DocumentLedger
from chunkweave.storage.stores import open_store
from chunkweave.storage.timing import StageTimer
from chunkweave.storage.values import DocOutcome, EmbedderIdentity, LedgerEntry, WritePlan
from chunkweave.storage.write import ChunkWriter, PendingWrite

if TYPE_CHECKING:
    from chunkweave.storage.protocols import IngestPipeline

log = logging.getLogger(__name__)


class _Scope(NamedTuple):
    """Where one tenant's documents go: its store view, its ledger, its writer."""

    store: ChunkStore
    ledger: DocumentLedger
    writer: ChunkWriter


class Pipeline:
    """Ingest documents into one store with one embedder (both created once per process).

    Implements :class:`chunkweave.storage.protocols.IngestPipeline` on any
    :class:`~chunkweave.storage.protocols.ChunkStore` and
    :class:`~chunkweave.storage.protocols.DocumentLedger` (default: the store's own,
    ``store.open_ledger()``). ``chunk_opts`` are resolved against the embedder's input
    limit here (:func:`chunkweave.chunking.api.resolve_options`), so no chunk is ever
    truncated by the embedder and the chunker fingerprint (and every chunk ID) records
    the real budget.
    """

    def __init__(
        self,
        *,
        store: ChunkStore,
        embedder: Embedder,
        parse_opts: ParseOptions | None = None,
        chunk_opts: ChunkOptions | None = None,
        ledger: DocumentLedger | None = None,
    ) -> None:
        identity = EmbedderIdentity(embedder.name, embedder.dimension)
        if store.identity != identity:
            raise StoreError(f"store is for {store.identity} but the embedder is {identity}")
        self.store = store
        self.embedder = embedder
        self.parse_opts = parse_opts or ParseOptions()
        self.chunk_opts = resolve_options(chunk_opts or ChunkOptions(), embedder.max_tokens)
        self.fingerprint = chunker_fingerprint(self.chunk_opts, embedder.name)
        self.embedder_id = str(identity)
        self.ledger = ledger or store.open_ledger()
        self.ledger.ensure_schema()
        self.writer = ChunkWriter(store, self.ledger, embedder, chunker=self.fingerprint)
        self._scopes: dict[str, _Scope] = {}

    def scope(self, tenant: str | None) -> _Scope:
        """Return the store, ledger and writer of ``tenant`` (``None``: the pipeline's own).

        A tenant's are opened on first use (its Weaviate tenant created then) and kept.
        """
        if tenant is None:
            return _Scope(self.store, self.ledger, self.writer)
        scope = self._scopes.get(tenant)
        if scope is None:
            store = self.store.for_tenant(tenant)
            ledger = store.open_ledger()
            writer = ChunkWriter(store, ledger, self.embedder, chunker=self.fingerprint)
            scope = self._scopes[tenant] = _Scope(store, ledger, writer)
        return scope

    def close(self) -> None:
        """Close the store's connection (the embedder belongs to whoever passed it in)."""
        self.store.close()

    def stale(self) -> bool:
        """Whether the store's alias now serves another collection (a reindex switched it)."""
        check = getattr(self.store, "stale", None)
        return bool(check()) if callable(check) else False

    def ingest(
        self,
        path: str | Path,
        *,
        source: str | None = None,
        doc_id: str | None = None,
        force: bool = False,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
    ) -> DocOutcome:
        """Ingest the file at ``path`` (skipped before parsing when unchanged).

        ``source`` defaults to the absolute path, ``doc_id`` to
        :func:`~.identity.doc_id_for` of the source. ``force`` re-parses and re-chunks
        an unchanged document (stored chunks are still not re-embedded). ``metadata``
        (validated, JSON values: :func:`~.metadata.validate_metadata`) goes on every
        chunk; a change of it alone rewrites the stored chunks with their stored
        vectors. ``tenant``: the tenant the document is stored in.
        """
        started = time.monotonic()
        timer = StageTimer()
        source = source or str(Path(path).expanduser().resolve())
        doc_id = doc_id or doc_id_for(source)
        meta = dict(metadata or {})
        try:
            with timer.stage("check"):
                skip, previous, sha1 = self._check(path, source, doc_id, started, meta, tenant)
            if skip is not None and not force:
                return skip.model_copy(update={"timings": timer.rounded()})
            if previous is not None and not force and self._same_content(previous, sha1):
                retagged = self._retag(previous, meta, tenant, started, timer)
                if retagged is not None:
                    return retagged
            with timer.stage("parse"):
                doc = parse_document(path, self.parse_opts)
        except ParseError as err:
            return self._failed(source, doc_id, err.code, str(err), started, timer=timer)
        except OSError as err:  # hashing the file: the parser would say the same
            reason = err.strerror or type(err).__name__
            missing = isinstance(err, FileNotFoundError)
            code = ErrorCode.NOT_FOUND if missing else ErrorCode.PARSE_ERROR
            return self._failed(source, doc_id, code, f"{path}: {reason}", started, timer=timer)
        except StoreError as err:
            return self._failed(
                source, doc_id, err.code, str(err), started, timer=timer, tenant=tenant
            )
        return self._ingest_parsed(
            doc, source, doc_id, started, timer, previous, metadata=meta, tenant=tenant
        )

    def check_unchanged(
        self,
        path: str | Path,
        *,
        source: str | None = None,
        doc_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
    ) -> DocOutcome | None:
        """Return an ``unchanged`` outcome if ``path`` is stored as is, else ``None``.

        Current means: same file SHA1, chunker fingerprint and embedder as the
        ledger's ``ok`` entry. Costs one file hash and one ledger read (no parsing),
        so callers may pre-filter large batches with it. Raises ``OSError`` for an
        unreadable file and :class:`StoreError` when the ledger cannot be read.
        """
        source = source or str(Path(path).expanduser().resolve())
        doc_id = doc_id or doc_id_for(source)
        meta = dict(metadata or {})
        return self._check(path, source, doc_id, time.monotonic(), meta, tenant)[0]

    def _check(
        self,
        path: str | Path,
        source: str,
        doc_id: str,
        started: float,
        metadata: Mapping[str, Any],
        tenant: str | None,
    ) -> tuple[DocOutcome | None, LedgerEntry | None, str]:
        """Return the ``unchanged`` outcome (or None), the ledger entry and the file's sha1.

        One file hash and one ledger read.
        """
        sha1 = file_sha1(path)
        previous = self.scope(tenant).ledger.get(doc_id)
        if previous is None or not self._is_current(previous, sha1, metadata):
            return None, previous, sha1
        unchanged = DocOutcome(
            source=source,
            doc_id=doc_id,
            status="unchanged",
            pages=previous.pages,
            chunks_unchanged=previous.chunk_count,
            seconds=time.monotonic() - started,
        )
        return unchanged, previous, sha1

    def ingest_parsed(
        self,
        doc: ParsedDocument,
        *,
        source: str,
        doc_id: str,
        chunks: Sequence[Chunk] | None = None,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
    ) -> DocOutcome:
        """Chunk (unless ``chunks`` is ``doc`` already chunked), then write it in one part."""
        return self._ingest_parsed(
            doc,
            source,
            doc_id,
            time.monotonic(),
            StageTimer(),
            chunks=chunks,
            metadata=dict(metadata or {}),
            tenant=tenant,
        )

    _UNREAD = LedgerEntry(doc_id="", source="", status="failed")  # "not read yet"

    def _ingest_parsed(
        self,
        doc: ParsedDocument,
        source: str,
        doc_id: str,
        started: float,
        timer: StageTimer,
        previous: LedgerEntry | None = _UNREAD,
        *,
        chunks: Sequence[Chunk] | None = None,
        metadata: dict[str, Any] | None = None,
        tenant: str | None = None,
    ) -> DocOutcome:
        warnings = doc.warnings
        meta = metadata or {}
        try:
            if previous is self._UNREAD:  # the join of a fan-out: not checked yet
                with timer.stage("check"):
                    previous = self.scope(tenant).ledger.get(doc_id)
            if chunks is None:
                with timer.stage("chunk"):
                    chunks = self.chunk(doc, source=source, doc_id=doc_id)
            if not chunks:
                reason = f"{source}: no chunks (document has no text content)"
                code = ErrorCode.EMPTY
                return self._failed(
                    source, doc_id, code, reason, started, warnings, timer, tenant=tenant
                )
            write = self._begin(
                doc, source, doc_id, existed=previous is not None, metadata=meta, tenant=tenant
            )
            write.write(chunks, timer=timer)
            with timer.stage("prune"):
                written = write.commit()
        except (ParseError, StoreError, EmbedderError) as err:
            return self._failed(
                source, doc_id, err.code, str(err), started, warnings, timer, tenant=tenant
            )
        except Exception as err:  # noqa: BLE001 - one bad document must not stop a batch
            log.exception("ingest of %s failed", source)
            reason = f"{source}: {type(err).__name__}: {err}"
            code = ErrorCode.INTERNAL
            return self._failed(
                source, doc_id, code, reason, started, warnings, timer, tenant=tenant
            )
        return written.model_copy(
            update={
                "warnings": warnings,
                "seconds": time.monotonic() - started,
                "timings": timer.rounded(),
            }
        )

    def chunk(self, doc: ParsedDocument, *, source: str, doc_id: str) -> list[Chunk]:
        """Chunk ``doc`` as :meth:`ingest` does: these options, this embedder's counter.

        The semantic strategy embeds sentences through the embedder, so it may raise
        :class:`EmbedderError` (``transient`` when the embedding service is down).
        """
        embed = self.embedder.embed_documents if self.chunk_opts.strategy == "semantic" else None
        return chunk_document(
            doc, self.chunk_opts, self.embedder, doc_id=doc_id, source=source, embed=embed
        )

    def begin(
        self,
        doc: ParsedDocument,
        *,
        source: str,
        doc_id: str,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
    ) -> PendingWrite:
        """Begin writing ``doc`` (see :mod:`.write`); reads the ledger once."""
        return self._begin(doc, source, doc_id, metadata=metadata, tenant=tenant)

    def _begin(
        self,
        doc: ParsedDocument,
        source: str,
        doc_id: str,
        *,
        existed: bool | None = None,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
    ) -> PendingWrite:
        pages = doc.page_count or 0
        return self.scope(tenant).writer.begin(
            doc_id=doc_id,
            source=source,
            doc_sha1=doc.sha1,
            pages=pages,
            existed=existed,
            metadata=metadata,
            tenant=tenant,
            warnings=doc.warnings,
        )

    def resume(
        self, plan: WritePlan, *, added: int = 0, unchanged: int = 0, uuids: Iterable[str] = ()
    ) -> PendingWrite:
        """Continue a write begun elsewhere (a fan-out's slices and its commit)."""
        writer = self.scope(plan.tenant).writer
        return writer.resume(plan, added=added, unchanged=unchanged, uuids=uuids)

    def delete(self, doc_id: str, *, tenant: str | None = None) -> DocOutcome:
        """Remove a document: all its chunks, then its ledger entry (in ``tenant``)."""
        started = time.monotonic()
        scope = self.scope(tenant)
        entry = scope.ledger.get(doc_id)
        deleted = scope.store.delete_doc(doc_id)
        scope.ledger.delete(doc_id)
        return DocOutcome(
            source=entry.source if entry else doc_id,
            doc_id=doc_id,
            status="deleted",
            pages=entry.pages if entry else 0,
            chunks_deleted=deleted,
            seconds=time.monotonic() - started,
        )

    def record_failed(
        self,
        doc_id: str,
        source: str,
        code: ErrorCode,
        error: str,
        *,
        tenant: str | None = None,
        warnings: tuple[str, ...] = (),
    ) -> None:
        """Mark the last attempt on ``doc_id`` as failed (stored chunks stay as they were).

        Keeps the previous version's ``doc_sha1``, counts and metadata, so the entry
        still describes what is stored while the failed status forces a retry next run.
        """
        ledger = self.scope(tenant).ledger
        previous = ledger.get(doc_id)
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

    def retag_unchanged(
        self,
        path: str | Path,
        *,
        source: str,
        doc_id: str,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
    ) -> DocOutcome | None:
        """Give the document its new metadata in place if nothing but that changed.

        Returns the ``updated`` outcome (nothing parsed or embedded), or ``None`` when
        the document is current or its content changed (the caller ingests it).
        Raises ``OSError`` for an unreadable file and :class:`StoreError`.
        """
        started, timer, meta = time.monotonic(), StageTimer(), dict(metadata or {})
        with timer.stage("check"):
            skip, previous, sha1 = self._check(path, source, doc_id, started, meta, tenant)
        if skip is not None or previous is None or not self._same_content(previous, sha1):
            return None
        return self._retag(previous, meta, tenant, started, timer)

    def _same_content(self, entry: LedgerEntry, sha1: str) -> bool:
        """Whether version ``sha1`` is stored as is, but perhaps for its metadata."""
        return (
            entry.status == "ok"
            and entry.doc_sha1 == sha1
            and entry.chunker == self.fingerprint
            and entry.embedder == self.embedder_id
        )

    def _retag(
        self,
        previous: LedgerEntry,
        metadata: dict[str, Any],
        tenant: str | None,
        started: float,
        timer: StageTimer,
    ) -> DocOutcome | None:
        """Give a document whose metadata alone changed its new metadata, in place.

        Its stored chunks are written again with their vectors: nothing is parsed,
        chunked or embedded. ``None`` when the store does not hold the chunks the
        ledger counts (a write cut short): the caller then ingests the document whole.
        """
        scope = self.scope(tenant)
        with timer.stage("upsert"):
            written = scope.store.retag(previous.doc_id, metadata)
        if written != previous.chunk_count:
            return None
        plan = WritePlan(
            doc_id=previous.doc_id,
            source=previous.source,
            doc_sha1=previous.doc_sha1,
            pages=previous.pages,
            existed=True,
            metadata=metadata,
            tenant=tenant,
        )
        scope.writer.record_ok(plan, chunks=written)
        return DocOutcome(
            source=previous.source,
            doc_id=previous.doc_id,
            status="updated",
            pages=previous.pages,
            chunks_unchanged=written,
            seconds=time.monotonic() - started,
            timings=timer.rounded(),
        )

    def _is_current(self, entry: LedgerEntry, sha1: str, metadata: Mapping[str, Any]) -> bool:
        return (
            entry.status == "ok"
            and entry.doc_sha1 == sha1
            and entry.chunker == self.fingerprint
            and entry.embedder == self.embedder_id
            and entry.meta_sha1 == metadata_sha1(metadata)
        )

    def _failed(
        self,
        source: str,
        doc_id: str,
        code: ErrorCode,
        error: str,
        started: float,
        warnings: tuple[str, ...] = (),
        timer: StageTimer | None = None,
        *,
        tenant: str | None = None,
    ) -> DocOutcome:
        try:
            self.record_failed(doc_id, source, code, error, tenant=tenant, warnings=warnings)
        except StoreError as err:  # Weaviate down: the outcome still carries the failure
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


def open_pipeline(
    weaviate_cfg: WeaviateConfig,
    embedder: Embedder,
    parse_opts: ParseOptions | None = None,
    chunk_opts: ChunkOptions | None = None,
    files: FilesConfig | None = None,
) -> Pipeline:
    """Open the chunk store and build a :class:`Pipeline` on it (closing the store on failure).

    The store is :func:`chunkweave.storage.stores.open_store`'s for ``weaviate_cfg``
    (mirrored into ``files`` when that names a folder).
    """
    identity = EmbedderIdentity(embedder.name, embedder.dimension)
    store = open_store(weaviate_cfg, identity, files)
    try:
        return Pipeline(
            store=store, embedder=embedder, parse_opts=parse_opts, chunk_opts=chunk_opts
        )
    except BaseException:
        store.close()
        raise


if TYPE_CHECKING:
    # mypy checks that Pipeline implements the protocol the worker is written against.
    _conforms: type[IngestPipeline] = Pipeline

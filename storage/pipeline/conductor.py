"""The pipeline on a store: :meth:`Pipeline.ingest` runs the stages for one file.

The fan-out runs the same stages spread over tasks (:meth:`~Pipeline.check`, a parse
per part, :meth:`~Pipeline.chunk`, :meth:`~Pipeline.begin`, :meth:`~Pipeline.resume`).
A bad document is a ``failed`` :class:`DocOutcome` recorded in the ledger; a transient
failure (the store or the embedder unreachable) is raised, for the caller to retry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from chunkweave.chunking.models import Chunk, ChunkOptions
from chunkweave.errors import TransientError
from chunkweave.parsers import ParsedDocument, ParseError, ParseOptions, parse_document
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.config import FilesConfig, WeaviateConfig
from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.embedders.errors import EmbedderError
from chunkweave.storage.errors import StoreError
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.metadata import metadata_sha1
from chunkweave.storage.pipeline import ledger as records
from chunkweave.storage.pipeline.check import DocumentCheck, file_version, verdict
from chunkweave.storage.pipeline.chunker import Chunker
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


def transient(err: BaseException) -> bool:
    """Whether ``err`` means "try again later" (the store or the embedder is down)."""
    return isinstance(err, TransientError)


class Pipeline:
    """:class:`~chunkweave.storage.protocols.IngestPipeline` on one store and one embedder.

    Both are created once per process; the ledger defaults to the store's own.
    ``chunk_opts`` are bound to the embedder's limit once, in a :class:`~.chunker.Chunker`.
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
        self.chunker = Chunker(chunk_opts, embedder)
        self.chunk_opts = self.chunker.opts
        self.fingerprint = self.chunker.fingerprint
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
        return self.store.stale()

    def check(
        self,
        path: str | Path,
        *,
        source: str | None = None,
        doc_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
        sha1: str | None = None,
    ) -> DocumentCheck:
        """Decide whether the file's stored version is current (:mod:`.check`; as ``ingest``)."""
        started = time.monotonic()
        source = source or str(Path(path).expanduser().resolve())
        doc_id = doc_id or doc_id_for(source)
        version = sha1 or file_version(path)
        previous = self.scope(tenant).ledger.get(doc_id)
        found = verdict(
            previous,
            version,
            chunker=self.fingerprint,
            embedder=self.embedder_id,
            metadata_hash=metadata_sha1(dict(metadata or {})),
        )
        return DocumentCheck(source, doc_id, version, previous, found, started)

    def ingest(
        self,
        path: str | Path,
        *,
        source: str | None = None,
        doc_id: str | None = None,
        force: bool = False,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
        sha1: str | None = None,
    ) -> DocOutcome:
        """Ingest the file at ``path``: check, then (unless current) parse, chunk, write.

        As :meth:`IngestPipeline.ingest <chunkweave.storage.protocols.IngestPipeline.ingest>`
        says; ``source`` defaults to the absolute path, ``doc_id`` to
        :func:`~chunkweave.storage.identity.doc_id_for` of the source.
        """
        started = time.monotonic()
        timer = StageTimer()
        source = source or str(Path(path).expanduser().resolve())
        doc_id = doc_id or doc_id_for(source)
        meta = dict(metadata or {})
        fail = self._failer(source, doc_id, started, timer, tenant, sha1=sha1)
        try:
            with timer.stage("check"):
                checked = self.check(
                    path, source=source, doc_id=doc_id, metadata=meta, tenant=tenant, sha1=sha1
                )
            fail = self._failer(source, doc_id, started, timer, tenant, sha1=checked.sha1)
            if checked.verdict == "unchanged" and not force:
                return checked.unchanged().model_copy(update={"timings": timer.rounded()})
            if checked.verdict == "metadata_only" and not force:
                assert checked.previous is not None
                scope = self.scope(tenant)
                retagged = records.retag(
                    scope.store, scope.writer, checked.previous, meta, tenant, started, timer
                )
                if retagged is not None:
                    return retagged
            with timer.stage("parse"):
                doc = self.parse(path)
        except ParseError as err:
            return fail(err.code, str(err))
        except OSError as err:  # hashing the file: the parser would say the same
            reason = err.strerror or type(err).__name__
            missing = isinstance(err, FileNotFoundError)
            return fail(
                ErrorCode.NOT_FOUND if missing else ErrorCode.PARSE_ERROR, f"{path}: {reason}"
            )
        except StoreError as err:
            if transient(err):
                raise
            return fail(err.code, str(err))
        return self._ingest_parsed(
            doc, source, doc_id, started, timer, checked.previous, metadata=meta, tenant=tenant
        )

    def retag(
        self,
        path: str | Path,
        *,
        source: str,
        doc_id: str,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
        sha1: str | None = None,
    ) -> DocOutcome | None:
        """Give the document its new metadata in place if only that changed (see the protocol)."""
        timer, meta = StageTimer(), dict(metadata or {})
        with timer.stage("check"):
            checked = self.check(
                path, source=source, doc_id=doc_id, metadata=meta, tenant=tenant, sha1=sha1
            )
        if checked.verdict != "metadata_only" or checked.previous is None:
            return None
        scope = self.scope(tenant)
        return records.retag(
            scope.store, scope.writer, checked.previous, meta, tenant, checked.started, timer
        )

    def parse(self, path: str | Path) -> ParsedDocument:
        """Parse the file with the pipeline's options (raises ``ParseError``)."""
        return parse_document(path, self.parse_opts)

    def chunk(self, doc: ParsedDocument, *, source: str, doc_id: str) -> list[Chunk]:
        """Chunk ``doc`` as :meth:`ingest` does (may raise an :class:`EmbedderError`)."""
        return self.chunker.chunk(doc, doc_id=doc_id, source=source)

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
        started, timer, meta = time.monotonic(), StageTimer(), dict(metadata or {})
        return self._ingest_parsed(
            doc, source, doc_id, started, timer, chunks=chunks, metadata=meta, tenant=tenant
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
        fail = self._failer(source, doc_id, started, timer, tenant, warnings, doc.sha1)
        try:
            if previous is self._UNREAD:  # the join of a fan-out: not checked yet
                with timer.stage("check"):
                    previous = self.scope(tenant).ledger.get(doc_id)
            if chunks is None:
                with timer.stage("chunk"):
                    chunks = self.chunk(doc, source=source, doc_id=doc_id)
            if not chunks:
                return fail(ErrorCode.EMPTY, f"{source}: no chunks (document has no text content)")
            write = self.begin(
                doc,
                source=source,
                doc_id=doc_id,
                metadata=meta,
                tenant=tenant,
                existed=previous is not None,
            )
            write.write(chunks, timer=timer)
            with timer.stage("prune"):
                written = write.commit()
        except (ParseError, StoreError, EmbedderError) as err:
            if transient(err):
                raise
            return fail(err.code, str(err))
        except Exception as err:  # noqa: BLE001 - one bad document must not stop a batch
            log.exception("ingest of %s failed", source)
            return fail(ErrorCode.INTERNAL, f"{source}: {type(err).__name__}: {err}")
        return written.model_copy(
            update={
                "warnings": warnings,
                "seconds": time.monotonic() - started,
                "timings": timer.rounded(),
            }
        )

    def begin(
        self,
        doc: ParsedDocument,
        *,
        source: str,
        doc_id: str,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
        existed: bool | None = None,
    ) -> PendingWrite:
        """Begin writing ``doc`` (see :mod:`chunkweave.storage.write`); reads the ledger once.

        ``existed``: whether the ledger knows the document, when the caller read it.
        """
        return self.scope(tenant).writer.begin(
            doc_id=doc_id,
            source=source,
            doc_sha1=doc.sha1,
            pages=doc.page_count or 0,
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
        scope = self.scope(tenant)
        return records.delete_document(scope.store, scope.ledger, doc_id)

    def record_failed(
        self,
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
        """Mark the last attempt on ``doc_id`` as failed (see :func:`.ledger.record_failed`)."""
        ledger = self.scope(tenant).ledger
        return records.record_failed(
            ledger, doc_id, source, code, error, tenant=tenant, warnings=warnings, sha1=sha1,
            since=since,
        )  # fmt: skip

    def failed(
        self, source: str, doc_id: str, code: ErrorCode, error: str, *, tenant: str | None = None
    ) -> DocOutcome:
        """Record a failure the caller met and return its ``failed`` outcome."""
        return self._failer(source, doc_id, time.monotonic(), None, tenant)(code, error)

    def _failer(
        self,
        source: str,
        doc_id: str,
        started: float,
        timer: StageTimer | None,
        tenant: str | None,
        warnings: tuple[str, ...] = (),
        sha1: str | None = None,
    ) -> Callable[[ErrorCode, str], DocOutcome]:
        record = partial(
            self.record_failed, doc_id, source, tenant=tenant, warnings=warnings, sha1=sha1
        )
        return lambda code, error: records.failed_outcome(
            record, source, doc_id, code, error, started, warnings, timer
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

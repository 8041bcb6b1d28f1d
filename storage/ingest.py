"""The ingest pipeline: one document from file to the vector store, incrementally.

``Pipeline.ingest`` is the whole job for one file; the worker's Celery tasks and the
``chunkweave ingest`` command are thin shells over it. The order of writes is the
contract that keeps a document searchable at every moment:

1. unchanged (same ``doc_sha1`` + chunker fingerprint + embedder in the ledger, status
   ok): skip before parsing;
2. parse -> chunk -> look up which chunk UUIDs already exist -> embed only the new ones
   -> upsert them (:meth:`Pipeline.upsert_chunks`);
3. THEN delete this document's stale chunks (:meth:`Pipeline.prune`);
4. ledger entry ``ok``.

A crash between 2 and 4 leaves the old chunks plus some new ones (never none); the
re-run finds the ledger out of date, re-embeds nothing already stored and finishes.
Failures are returned as a ``failed`` :class:`DocOutcome` and recorded in the ledger
(best effort: when the store itself is down, only the outcome carries the failure).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from chunkweave.chunking import chunk_document
from chunkweave.chunking.api import resolve_options
from chunkweave.chunking.fingerprint import chunker_fingerprint
from chunkweave.chunking.models import Chunk, ChunkOptions
from chunkweave.parsers import ParsedDocument, ParseError, ParseOptions, parse_document
from chunkweave.parsers.document import file_sha1
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.embedders.errors import EmbedderError
from chunkweave.storage.errors import StoreError
from chunkweave.storage.protocols import ChunkStore, DocumentLedger
from chunkweave.storage.stores import open_store
from chunkweave.storage.timing import StageTimer
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.weaviate.ledger import LedgerEntry
from chunkweave.storage.weaviate.schema import EmbedderIdentity

if TYPE_CHECKING:
    from chunkweave.storage.protocols import IngestPipeline

OutcomeStatus = Literal["added", "updated", "unchanged", "deleted", "failed"]
log = logging.getLogger(__name__)

#: Texts embedded (and objects upserted) per step, bounding memory on huge documents.
EMBED_SLICE = 512


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
    """What :meth:`Pipeline.upsert_chunks` did: chunks written vs already stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    added: int
    unchanged: int
    #: Of the unchanged, how many were written again at a new position (no embedding).
    moved: int = 0
    uuids: frozenset[str]


def doc_id_for(source: str | Path) -> str:
    """Stable identity of a source: its normalised URI (not its content).

    A URI (``scheme://...``) is kept with its scheme lower-cased; a filesystem path
    becomes the ``file://`` URI of its absolute, symlink-resolved form (the file
    need not exist any more, so a removed source maps to the same id).
    """
    text = str(source)
    if "://" in text:
        scheme, rest = text.split("://", 1)
        return f"{scheme.lower()}://{rest}"
    return Path(text).expanduser().resolve().as_uri()


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

    def close(self) -> None:
        """Close the store's connection (the embedder belongs to whoever passed it in)."""
        self.store.close()

    # -- whole documents ---------------------------------------------------------------

    def ingest(
        self,
        path: str | Path,
        *,
        source: str | None = None,
        doc_id: str | None = None,
        force: bool = False,
    ) -> DocOutcome:
        """Ingest the file at ``path`` (skipped before parsing when unchanged).

        ``source`` defaults to the absolute path, ``doc_id`` to
        :func:`doc_id_for` of the source. ``force`` re-parses and re-chunks even an
        unchanged document (stored chunks are still not re-embedded).
        """
        started = time.monotonic()
        timer = StageTimer()
        source = source or str(Path(path).expanduser().resolve())
        doc_id = doc_id or doc_id_for(source)
        try:
            with timer.stage("check"):
                skip, previous = self._check(path, source, doc_id, started)
            if skip is not None and not force:
                return skip.model_copy(update={"timings": timer.rounded()})
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
            return self._failed(source, doc_id, err.code, str(err), started, timer=timer)
        return self._ingest_parsed(doc, source, doc_id, started, timer, previous)

    def check_unchanged(
        self, path: str | Path, *, source: str | None = None, doc_id: str | None = None
    ) -> DocOutcome | None:
        """Return an ``unchanged`` outcome if ``path`` is stored as is, else ``None``.

        Current means: same file SHA1, chunker fingerprint and embedder as the
        ledger's ``ok`` entry. Costs one file hash and one ledger read (no parsing),
        so callers may pre-filter large batches with it. Raises ``OSError`` for an
        unreadable file and :class:`StoreError` when the ledger cannot be read.
        """
        source = source or str(Path(path).expanduser().resolve())
        doc_id = doc_id or doc_id_for(source)
        return self._check(path, source, doc_id, time.monotonic())[0]

    def _check(
        self, path: str | Path, source: str, doc_id: str, started: float
    ) -> tuple[DocOutcome | None, LedgerEntry | None]:
        """Return the ``unchanged`` outcome (or None) and the ledger entry: one ledger read."""
        sha1 = file_sha1(path)
        previous = self.ledger.get(doc_id)
        if previous is None or not self._is_current(previous, sha1):
            return None, previous
        unchanged = DocOutcome(
            source=source,
            doc_id=doc_id,
            status="unchanged",
            pages=previous.pages,
            chunks_unchanged=previous.chunk_count,
            seconds=time.monotonic() - started,
        )
        return unchanged, previous

    def ingest_parsed(self, doc: ParsedDocument, *, source: str, doc_id: str) -> DocOutcome:
        """Chunk, embed what is new, upsert, prune stale chunks, record in the ledger."""
        return self._ingest_parsed(doc, source, doc_id, time.monotonic(), StageTimer())

    _UNREAD = LedgerEntry(doc_id="", source="", status="failed")  # "not read yet"

    def _ingest_parsed(
        self,
        doc: ParsedDocument,
        source: str,
        doc_id: str,
        started: float,
        timer: StageTimer,
        previous: LedgerEntry | None = _UNREAD,
    ) -> DocOutcome:
        pages = doc.page_count or 0
        warnings = doc.warnings
        try:
            if previous is self._UNREAD:  # the join of a fan-out: not checked yet
                with timer.stage("check"):
                    previous = self.ledger.get(doc_id)
            with timer.stage("chunk"):
                chunks = self.chunk(doc, source=source, doc_id=doc_id)
            if not chunks:
                reason = f"{source}: no chunks (document has no text content)"
                code = ErrorCode.EMPTY
                return self._failed(source, doc_id, code, reason, started, warnings, timer)
            written = self.upsert_chunks(chunks, timer=timer)
            with timer.stage("prune"):
                deleted = self.prune(doc_id, written.uuids)
                self.record_ok(doc_id, source, doc.sha1, pages, len(written.uuids))
        except (ParseError, StoreError, EmbedderError) as err:
            return self._failed(source, doc_id, err.code, str(err), started, warnings, timer)
        except Exception as err:  # noqa: BLE001 - one bad document must not stop a batch
            log.exception("ingest of %s failed", source)
            reason = f"{source}: {type(err).__name__}: {err}"
            code = ErrorCode.INTERNAL
            return self._failed(source, doc_id, code, reason, started, warnings, timer)
        return DocOutcome(
            source=source,
            doc_id=doc_id,
            status="updated" if previous is not None else "added",
            pages=pages,
            chunks_added=written.added,
            chunks_unchanged=written.unchanged,
            chunks_deleted=deleted,
            warnings=doc.warnings,
            seconds=time.monotonic() - started,
            timings=timer.rounded(),
        )

    def delete(self, doc_id: str) -> DocOutcome:
        """Remove a document: all its chunks, then its ledger entry."""
        started = time.monotonic()
        entry = self.ledger.get(doc_id)
        deleted = self.store.delete_doc(doc_id)
        self.ledger.delete(doc_id)
        return DocOutcome(
            source=entry.source if entry else doc_id,
            doc_id=doc_id,
            status="deleted",
            pages=entry.pages if entry else 0,
            chunks_deleted=deleted,
            seconds=time.monotonic() - started,
        )

    # -- building blocks (the worker's fan-out reuses them) ------------------------------

    def chunk(self, doc: ParsedDocument, *, source: str, doc_id: str) -> list[Chunk]:
        """Chunk ``doc`` as :meth:`ingest` does: these options, this embedder's counter.

        The semantic strategy embeds sentences through the embedder, so it may raise
        :class:`EmbedderError` (``transient`` when the embedding service is down).
        """
        embed = self.embedder.embed_documents if self.chunk_opts.strategy == "semantic" else None
        return chunk_document(
            doc, self.chunk_opts, self.embedder, doc_id=doc_id, source=source, embed=embed
        )

    def upsert_chunks(
        self, chunks: Sequence[Chunk], *, timer: StageTimer | None = None
    ) -> UpsertResult:
        """Embed and write the chunks not stored yet; move stored ones that moved.

        Chunk UUIDs derive from content, so an existing UUID means an identical chunk
        (same document, chunker, text and occurrence) is already stored with its vector.
        Its positional fields (``chunk_index``, ``regions``) are not content: when an
        edit moved it (text inserted above it), it is written again with its stored
        vector, not re-embedded. ``timer`` gets the ``embed`` and ``upsert`` seconds.
        """
        timer = timer or StageTimer()
        uuids = [chunk_uuid(c.id) for c in chunks]
        if len(set(uuids)) != len(uuids):
            raise ValueError(f"duplicate chunk ids among {len(uuids)} chunks")
        with timer.stage("upsert"):
            stored = self.store.positions(uuids)
        new: list[Chunk] = []
        moved: dict[str, Chunk] = {}
        for c, u in zip(chunks, uuids, strict=True):
            was = stored.get(u)
            if was is None:
                new.append(c)
            elif was.chunk_index != c.chunk_index or (
                was.regions is not None and was.regions != c.regions
            ):
                moved[u] = c
        for start in range(0, len(new), EMBED_SLICE):
            part = new[start : start + EMBED_SLICE]
            with timer.stage("embed"):
                vectors = self._embed(part)
            with timer.stage("upsert"):
                self.store.upsert(part, vectors)
        if moved:
            with timer.stage("upsert"):
                self._rewrite(moved)
        return UpsertResult(
            added=len(new),
            unchanged=len(chunks) - len(new),
            moved=len(moved),
            uuids=frozenset(uuids),
        )

    def _rewrite(self, moved: dict[str, Chunk]) -> None:
        """Write stored chunks again with their new positions and their stored vectors."""
        ids = list(moved)
        for start in range(0, len(ids), EMBED_SLICE):
            part = ids[start : start + EMBED_SLICE]
            vectors = self.store.vectors(part)
            with_vector = [u for u in part if u in vectors]
            if with_vector:
                self.store.upsert(
                    [moved[u] for u in with_vector], [vectors[u] for u in with_vector]
                )
            without = [moved[u] for u in part if u not in vectors]
            if without:  # stored without a vector (the ``none`` embedder)
                self.store.upsert(without, None)

    def prune(self, doc_id: str, keep: Collection[str]) -> int:
        """Delete the chunks of ``doc_id`` whose UUID is not in ``keep``; return the count."""
        stale = self.store.doc_uuids(doc_id) - set(keep)
        return self.store.delete_ids(stale) if stale else 0

    def record_ok(self, doc_id: str, source: str, doc_sha1: str, pages: int, chunks: int) -> None:
        """Mark ``doc_id`` as completely stored at version ``doc_sha1``."""
        self.ledger.put(
            LedgerEntry(
                doc_id=doc_id,
                source=source,
                doc_sha1=doc_sha1,
                chunker=self.fingerprint,
                embedder=self.embedder_id,
                chunk_count=chunks,
                pages=pages,
                status="ok",
            )
        )

    def is_recorded(self, doc_id: str) -> bool:
        """Whether the ledger has an entry for ``doc_id`` (any version, any status)."""
        return self.ledger.get(doc_id) is not None

    def record_failed(self, doc_id: str, source: str, code: ErrorCode, error: str) -> None:
        """Mark the last attempt on ``doc_id`` as failed (stored chunks stay as they were).

        Keeps the previous version's ``doc_sha1`` and counts, so the entry still
        describes what is stored while the failed status forces a retry next run.
        """
        previous = self.ledger.get(doc_id)
        base = previous.model_dump() if previous else {"doc_id": doc_id, "source": source}
        base.update(source=source, status="failed", error=error, error_code=code)
        self.ledger.put(LedgerEntry(**base))

    # -- internals -----------------------------------------------------------------------

    def _is_current(self, entry: LedgerEntry, sha1: str) -> bool:
        return (
            entry.status == "ok"
            and entry.doc_sha1 == sha1
            and entry.chunker == self.fingerprint
            and entry.embedder == self.embedder_id
        )

    def _embed(self, chunks: Sequence[Chunk]) -> list[list[float]] | None:
        if self.embedder.dimension == 0:  # the "none" embedder: Weaviate-side vectors
            return None
        vectors = self.embedder.embed_documents([c.embed_text for c in chunks])
        if len(vectors) != len(chunks):
            raise EmbedderError(
                f"embedder {self.embedder.name} returned {len(vectors)} vectors "
                f"for {len(chunks)} texts"
            )
        bad = next((len(v) for v in vectors if len(v) != self.embedder.dimension), None)
        if bad is not None:
            raise EmbedderError(
                f"embedder {self.embedder.name} returned a {bad}-d vector, "
                f"expected {self.embedder.dimension}-d"
            )
        return vectors

    def _failed(
        self,
        source: str,
        doc_id: str,
        code: ErrorCode,
        error: str,
        started: float,
        warnings: tuple[str, ...] = (),
        timer: StageTimer | None = None,
    ) -> DocOutcome:
        try:
            self.record_failed(doc_id, source, code, error)
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
) -> Pipeline:
    """Open the chunk store and build a :class:`Pipeline` on it (closing the store on failure).

    The store is :func:`chunkweave.storage.stores.open_store`'s for ``weaviate_cfg``.
    """
    store = open_store(weaviate_cfg, EmbedderIdentity(embedder.name, embedder.dimension))
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

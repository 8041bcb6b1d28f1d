"""What the layers above storage call: small protocols, with Weaviate as one implementation.

The worker (tasks, fan-out, CLI) is written against these protocols only, so another
vector store is a new package (as ``storage/weaviate/``) opened by
:func:`chunkweave.storage.stores.open_store`, and another pipeline a new module, not
a rewrite of the worker.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from chunkweave.storage.values import (
    DocOutcome,
    EmbedderIdentity,
    LedgerEntry,
    StoredPosition,
    UpsertResult,
    WritePlan,
)

if TYPE_CHECKING:
    from datetime import datetime

    from chunkweave.chunking.models import Chunk
    from chunkweave.parsers.document import ParsedDocument
    from chunkweave.parsers.errors import ErrorCode
    from chunkweave.storage.embedders.base import Embedder
    from chunkweave.storage.filters import SearchRequest
    from chunkweave.storage.hits import Hit
    from chunkweave.storage.pipeline.check import DocumentCheck
    from chunkweave.storage.timing import StageTimer


class DocumentLedger(Protocol):
    """One :class:`LedgerEntry` per document: which version is stored, or why it failed.

    Failures raise ``chunkweave.storage.errors.StoreError`` (``StoreUnavailableError``
    when the store is unreachable).
    """

    def ensure_schema(self) -> None:
        """Create the ledger's storage if missing (idempotent; call once before use)."""
        ...

    def get(self, doc_id: str) -> LedgerEntry | None:
        """Return the entry for ``doc_id``, or ``None`` if the document is not known."""
        ...

    def put(self, entry: LedgerEntry) -> LedgerEntry:
        """Write (replace) the entry for ``entry.doc_id``; return it as stored."""
        ...

    def delete(self, doc_id: str) -> bool:
        """Remove the entry for ``doc_id``; ``True`` if there was one."""
        ...

    def entries(self) -> Iterator[LedgerEntry]:
        """Every entry, in no particular order."""
        ...


class ChunkStore(Protocol):
    """The chunk collection of one embedder identity: exactly what the pipeline calls.

    Chunks are keyed by ``chunkweave.storage.uuids.chunk_uuid`` of their id. Failures
    raise ``chunkweave.storage.errors.StoreError`` (``StoreUnavailableError`` when the
    store is unreachable); nothing is silently dropped.
    """

    #: What the stored vectors were made with; the pipeline refuses another embedder.
    identity: EmbedderIdentity
    #: Whether the chunks have a keyword (BM25) index; without one a hybrid
    #: :meth:`search` is by vector only.
    keyword_index: bool

    def positions(self, uuids: Iterable[str]) -> dict[str, StoredPosition]:
        """Return the stored position of each of ``uuids`` that is stored (any document)."""
        ...

    def vectors(self, uuids: Iterable[str]) -> dict[str, list[float]]:
        """Return the stored vectors of ``uuids`` (those stored with one)."""
        ...

    def upsert(
        self,
        chunks: Sequence[Chunk],
        vectors: Sequence[Sequence[float]] | None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        """Write ``chunks`` with ``vectors`` in the same order (or none); return the count.

        ``metadata`` (validated caller metadata, JSON values) goes on every chunk.
        """
        ...

    def retag(self, doc_id: str, metadata: Mapping[str, Any]) -> int:
        """Write the stored chunks of ``doc_id`` again with ``metadata`` (vectors kept)."""
        ...

    def for_tenant(self, tenant: str) -> ChunkStore:
        """Return this store scoped to ``tenant`` (created on first use; same connection)."""
        ...

    def delete_tenant(self, tenant: str) -> bool:
        """Remove ``tenant`` with all its chunks and ledger entries; True if it existed."""
        ...

    def doc_uuids(self, doc_id: str) -> set[str]:
        """UUIDs of every stored chunk of ``doc_id``."""
        ...

    def chunks(self, doc_id: str, *, limit: int) -> list[Chunk]:
        """Return the stored chunks of ``doc_id`` in ``chunk_index`` order (empty: none).

        A stored chunk has no ``embed_text`` (the vector is kept, not its text). More
        than ``limit`` raises ``chunkweave.storage.errors.TooManyChunksError``.
        """
        ...

    def delete_ids(self, uuids: Iterable[str]) -> int:
        """Delete the chunks with these UUIDs; return how many were deleted."""
        ...

    def delete_doc(self, doc_id: str) -> int:
        """Delete every chunk of ``doc_id``; return how many were deleted."""
        ...

    def search(self, request: SearchRequest) -> list[Hit]:
        """Return the top ``request.k`` chunks meeting all of its conditions, best first.

        As :class:`SearchRequest` says, but vector-only where there is no
        :attr:`keyword_index`. With no
        vector and no keyword index, or a property the store cannot filter on, raise
        ``StoreError`` (``chunkweave.storage.filters.FILTERABLE`` lists those it can).
        """
        ...

    def open_ledger(self) -> DocumentLedger:
        """Return the document ledger kept next to the chunks (same connection)."""
        ...

    def stale(self) -> bool:
        """Whether the store now serves another collection than when opened.

        True once a reindex switched the alias: the holder reopens the store. A
        store without versions always says False.
        """
        ...

    def close(self) -> None:
        """Release the connection (the ledger opened on it too)."""
        ...


class DocumentWrite(Protocol):
    """One version of one document going into the store: :meth:`write` parts, then :meth:`commit`.

    Begun by :meth:`IngestPipeline.begin`; any number of :meth:`write` calls, in any
    processes (:meth:`IngestPipeline.resume` continues the write from its :attr:`plan`),
    then one :meth:`commit`. Until the commit the document keeps its old chunks next to
    the new ones: a crash at any point leaves it searchable, never empty.
    """

    @property
    def plan(self) -> WritePlan:
        """What is being written (fixed when the write began)."""
        ...

    def write(self, chunks: Sequence[Chunk], *, timer: StageTimer | None = None) -> UpsertResult:
        """Embed and upsert the part's chunks not stored yet; report added vs unchanged."""
        ...

    def commit(self) -> DocOutcome:
        """Delete the document's chunks no part wrote, then record the version in the ledger."""
        ...


class IngestPipeline(Protocol):
    """Check, parse, chunk, embed and store documents; what every worker task needs.

    A single-task ingest calls :meth:`ingest`. A fanned-out document runs the same
    stages spread over tasks: :meth:`check` (and :meth:`retag` when only its metadata
    changed), a parse per page range, then :meth:`chunk` and either
    :meth:`ingest_parsed` or, when it has many chunks, :meth:`begin`, :meth:`resume`
    and ``write`` per slice on any worker, and ``commit`` once. Transient failures
    (the store or the embedder unreachable: a true ``transient`` attribute) are
    raised; any other failure is a ``failed`` outcome recorded in the ledger.
    """

    @property
    def embedder(self) -> Embedder | None:
        """The embedder the pipeline embeds with (``None``: it embeds nothing itself)."""
        ...

    def check(
        self,
        path: Path,
        *,
        source: str,
        doc_id: str,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
        sha1: str | None = None,
    ) -> DocumentCheck:
        """Decide ``unchanged`` / ``metadata_only`` / ``changed`` for the file's version.

        One hash of the file (none when the caller gives its ``sha1``) and one ledger
        read; no parsing. Current means same file, chunker, embedder and metadata.
        Raises ``OSError`` for an unreadable file, ``StoreError`` for the ledger.
        """
        ...

    def ingest(
        self,
        path: Path,
        *,
        source: str,
        doc_id: str,
        force: bool = False,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
        sha1: str | None = None,
    ) -> DocOutcome:
        """Ingest one file: :meth:`check`, then (unless current, or ``force``) the rest.

        ``metadata`` (validated, JSON values) goes on every chunk; ``tenant`` is the
        tenant the document is stored in; ``sha1`` the file's, when the caller hashed
        it. A change of metadata alone rewrites the chunks, embedding none. ``force``
        re-parses and re-chunks a current document (stored chunks are not re-embedded).
        """
        ...

    def retag(
        self,
        path: Path,
        *,
        source: str,
        doc_id: str,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
        sha1: str | None = None,
    ) -> DocOutcome | None:
        """Give the stored chunks new metadata when nothing else changed (else ``None``).

        The ``updated`` outcome: nothing parsed or embedded. ``None`` when the document
        is current, its content changed, or the store lacks chunks the ledger counts.
        """
        ...

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
        """Ingest an already parsed document (the join of a fan-out).

        ``chunks``: ``doc`` already chunked by :meth:`chunk`, so it is not chunked again.
        """
        ...

    def chunk(self, doc: ParsedDocument, *, source: str, doc_id: str) -> list[Chunk]:
        """Chunk ``doc`` exactly as :meth:`ingest` would (same options, counter, embedder)."""
        ...

    def begin(
        self,
        doc: ParsedDocument,
        *,
        source: str,
        doc_id: str,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
    ) -> DocumentWrite:
        """Begin writing ``doc`` (reads the ledger: the outcome will say added or updated)."""
        ...

    def resume(
        self, plan: WritePlan, *, added: int = 0, unchanged: int = 0, uuids: Iterable[str] = ()
    ) -> DocumentWrite:
        """Continue a write begun elsewhere, with what its parts wrote so far (counts, UUIDs)."""
        ...

    def delete(self, doc_id: str, *, tenant: str | None = None) -> DocOutcome:
        """Remove a document's chunks and its ledger entry (in ``tenant``, when given)."""
        ...

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
        """Record in the ledger that the last attempt on ``doc_id`` failed, and why.

        ``warnings``: what the parse warned of (a repaired text layer), kept beside it.
        Nothing is written (False) when the entry is ``ok`` for version ``sha1``, or was
        written ``ok`` after ``since``: the ledger never says failed for a stored document.
        """
        ...

    def failed(
        self, source: str, doc_id: str, code: ErrorCode, error: str, *, tenant: str | None = None
    ) -> DocOutcome:
        """Record a failure met outside the pipeline (best effort); return its outcome."""
        ...

    def stale(self) -> bool:
        """Whether the store moved under the pipeline (a reindex switched it): rebuild it."""
        ...

    def close(self) -> None:
        """Release the clients the pipeline holds."""
        ...

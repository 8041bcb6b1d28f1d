"""What the layers above storage call: small protocols, with Weaviate as one implementation.

The worker (tasks, fan-out, CLI) is written against these protocols only, so another
vector store is a new package (as ``storage/weaviate/``) opened by
:func:`chunkweave.storage.stores.open_store`, and another pipeline a new module, not
a rewrite of the worker.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from chunkweave.chunking.models import Chunk, Region
    from chunkweave.parsers.document import ParsedDocument
    from chunkweave.storage.filters import Condition
    from chunkweave.storage.hits import Hit
    from chunkweave.storage.ingest import DocOutcome, UpsertResult
    from chunkweave.storage.timing import StageTimer
    from chunkweave.storage.weaviate.ledger import LedgerEntry
    from chunkweave.storage.weaviate.schema import EmbedderIdentity


class StoredPosition(NamedTuple):
    """Where a stored chunk was, as it was written: positional fields, not its content.

    ``regions`` is ``None`` when the store keeps no regions (an older collection).
    """

    chunk_index: int
    regions: tuple[Region, ...] | None


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

    def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]] | None) -> int:
        """Write ``chunks`` with ``vectors`` in the same order (or none); return the count."""
        ...

    def doc_uuids(self, doc_id: str) -> set[str]:
        """UUIDs of every stored chunk of ``doc_id``."""
        ...

    def delete_ids(self, uuids: Iterable[str]) -> int:
        """Delete the chunks with these UUIDs; return how many were deleted."""
        ...

    def delete_doc(self, doc_id: str) -> int:
        """Delete every chunk of ``doc_id``; return how many were deleted."""
        ...

    def search(
        self,
        query: str,
        vector: Sequence[float] | None,
        *,
        k: int = 5,
        where: Sequence[Condition] = (),
        hybrid: bool = True,
    ) -> list[Hit]:
        """Return the top ``k`` chunks for ``query`` that meet all of ``where``, best first.

        Hybrid (keyword + ``vector``) by default; vector-only when ``hybrid`` is off or
        there is no :attr:`keyword_index`; keyword-only without a ``vector``. With no
        vector and no keyword index, or a property the store cannot filter on, raise
        ``StoreError`` (``chunkweave.storage.filters.FILTERABLE`` lists those it can).
        """
        ...

    def open_ledger(self) -> DocumentLedger:
        """Return the document ledger kept next to the chunks (same connection)."""
        ...

    def close(self) -> None:
        """Release the connection (the ledger opened on it too)."""
        ...


class IngestPipeline(Protocol):
    """Parse, chunk, embed and store documents; what every worker task needs.

    A single-task ingest calls :meth:`ingest`. A fanned-out document is parsed in
    parts, joined, chunked with :meth:`chunk`, written slice by slice with
    :meth:`upsert_chunks`, then committed with :meth:`prune` and :meth:`record_ok`:
    the same upsert-then-prune order as :meth:`ingest`.
    """

    def ingest(self, path: Path, *, source: str, doc_id: str, force: bool = False) -> DocOutcome:
        """Ingest one file (skipped when its stored version is current, unless ``force``)."""
        ...

    def check_unchanged(self, path: Path, *, source: str, doc_id: str) -> DocOutcome | None:
        """Return an ``unchanged`` outcome when the stored version is current, else None."""
        ...

    def ingest_parsed(self, doc: ParsedDocument, *, source: str, doc_id: str) -> DocOutcome:
        """Ingest an already parsed document (the join of a fan-out)."""
        ...

    def chunk(self, doc: ParsedDocument, *, source: str, doc_id: str) -> list[Chunk]:
        """Chunk ``doc`` exactly as :meth:`ingest` would (same options, counter, embedder)."""
        ...

    def upsert_chunks(
        self, chunks: Sequence[Chunk], *, timer: StageTimer | None = None
    ) -> UpsertResult:
        """Embed and write the chunks not stored yet; report added vs unchanged."""
        ...

    def prune(self, doc_id: str, keep: Collection[str]) -> int:
        """Delete the document's stored chunks whose UUIDs are not in ``keep``; return how many."""
        ...

    def record_ok(self, doc_id: str, source: str, doc_sha1: str, pages: int, chunks: int) -> None:
        """Record in the ledger that this version of the document is stored."""
        ...

    def is_recorded(self, doc_id: str) -> bool:
        """Tell whether the ledger has an entry for the document (any version, any status)."""
        ...

    def delete(self, doc_id: str) -> DocOutcome:
        """Remove a document's chunks and its ledger entry."""
        ...

    def close(self) -> None:
        """Release the clients the pipeline holds."""
        ...

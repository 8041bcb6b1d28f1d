"""The document write: ``begin -> write(part)... -> commit``, the one way chunks reach a store.

Every document goes through it, whole or fanned out over many workers:

1. :meth:`ChunkWriter.begin` fixes the :class:`~.values.WritePlan`: the version, and
   whether the ledger knew the document (``updated`` vs ``added``); nothing is written;
2. :meth:`PendingWrite.write` embeds and upserts a part's chunks not stored yet (one
   part for a whole document; one slice per task for a big one);
3. :meth:`PendingWrite.commit` THEN deletes the document's chunks that no part wrote,
   and only after that records the version ``ok`` in the ledger.

A crash anywhere before the ledger entry leaves the old chunks plus some new ones,
never none; the re-run finds the ledger out of date, re-embeds nothing already
stored and finishes. A write begun in one process is continued in another from its
plan (:meth:`ChunkWriter.resume`), with what its other parts wrote: that is how the
fan-out spreads one write over its tasks.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chunkweave import tracing
from chunkweave.storage.embedders.errors import EmbedderError
from chunkweave.storage.metadata import metadata_sha1
from chunkweave.storage.timing import StageTimer
from chunkweave.storage.unit_write import stale_objects, write_units, writes_units
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import (
    DocOutcome,
    EmbedderIdentity,
    LedgerEntry,
    UpsertResult,
    WritePlan,
)

if TYPE_CHECKING:
    from chunkweave.chunking.models import Chunk
    from chunkweave.storage.embedders.base import Embedder
    from chunkweave.storage.protocols import ChunkStore, DocumentLedger, DocumentWrite

#: Texts embedded (and objects upserted) per step, bounding memory on huge documents.
EMBED_SLICE = 512


class ChunkWriter:
    """The steps of every document write, on one store and ledger with one embedder.

    ``chunker`` is the chunker fingerprint the ledger records with each version.
    """

    def __init__(
        self, store: ChunkStore, ledger: DocumentLedger, embedder: Embedder, *, chunker: str
    ) -> None:
        self.store = store
        self.ledger = ledger
        self.embedder = embedder
        self.chunker = chunker
        self.embedder_id = str(EmbedderIdentity(embedder.name, embedder.dimension))

    def begin(
        self,
        *,
        doc_id: str,
        source: str,
        doc_sha1: str,
        pages: int,
        existed: bool | None = None,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
        warnings: tuple[str, ...] = (),
    ) -> PendingWrite:
        """Begin writing version ``doc_sha1`` of ``doc_id`` (nothing is written yet).

        ``existed`` is whether the ledger has an entry for the document; the ledger is
        read when the caller has not read it already. ``metadata`` (validated, JSON
        values) goes on every chunk; ``tenant`` is recorded in the plan and the ledger
        (this writer's store must be that tenant's).
        """
        if existed is None:
            existed = self.ledger.get(doc_id) is not None
        plan = WritePlan(
            doc_id=doc_id,
            source=source,
            doc_sha1=doc_sha1,
            pages=pages,
            existed=existed,
            metadata=dict(metadata or {}),
            tenant=tenant,
            warnings=warnings,
        )
        return PendingWrite(self, plan)

    def resume(
        self,
        plan: WritePlan,
        *,
        added: int = 0,
        unchanged: int = 0,
        uuids: Iterable[str] = (),
    ) -> PendingWrite:
        """Continue the write of ``plan`` begun elsewhere.

        ``added``, ``unchanged`` and ``uuids`` are what its parts written so far (in
        other processes) added, found stored, and their chunk UUIDs: what the commit
        keeps of the document.
        """
        return PendingWrite(self, plan, added=added, unchanged=unchanged, uuids=uuids)

    def upsert(
        self,
        chunks: Sequence[Chunk],
        *,
        timer: StageTimer | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> UpsertResult:
        """Embed and write the chunks not stored yet; move stored ones that moved.

        Chunk UUIDs derive from content, so an existing UUID means an identical chunk
        (same document, chunker, text and occurrence) is already stored with its vector.
        Its positional fields (``chunk_index``, ``regions``) are not content: when an
        edit moved it (text inserted above it), it is written again with its stored
        vector, not re-embedded. Metadata is not content either: a stored chunk written
        with other ``metadata`` (its ``meta_sha1``) is written again the same way.
        ``timer`` gets the ``embed`` and ``upsert`` seconds. Raises ``ValueError``
        when two of ``chunks`` have the same id.
        """
        timer = timer or StageTimer()
        meta = dict(metadata or {})
        meta_sha1 = metadata_sha1(meta)
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
            elif (
                was.chunk_index != c.chunk_index
                or (was.regions is not None and was.regions != c.regions)
                or was.meta_sha1 != meta_sha1
            ):
                moved[u] = c
        for start in range(0, len(new), EMBED_SLICE):
            part = new[start : start + EMBED_SLICE]
            with timer.stage("embed"):
                vectors = self._embed([c.embed_text for c in part])
            with timer.stage("upsert"):
                self.store.upsert(part, vectors, metadata=meta)
        if moved:
            with timer.stage("upsert"):
                self._rewrite(moved, meta)
        units = 0
        if writes_units(self.store):  # small-to-big: the chunks' match units too
            units = write_units(
                self.store,
                chunks,
                self._embed,
                metadata=meta,
                meta_sha1=meta_sha1,
                timer=timer,
                slice_size=EMBED_SLICE,
                counter=self.embedder,
                max_tokens=self.embedder.max_tokens,
            )
        return UpsertResult(
            added=len(new),
            unchanged=len(chunks) - len(new),
            moved=len(moved),
            uuids=frozenset(uuids),
            units_added=units,
        )

    def prune(self, doc_id: str, keep: Collection[str]) -> int:
        """Delete the chunks of ``doc_id`` not in ``keep``, and their match units; return the count.

        See :func:`~.unit_write.stale_objects`.
        """
        stale = stale_objects(self.store, doc_id, keep)
        return self.store.delete_ids(stale) if stale else 0

    def record_ok(self, plan: WritePlan, *, chunks: int) -> None:
        """Mark the document as completely stored at the plan's version, in ``chunks`` chunks."""
        self.ledger.put(
            LedgerEntry(
                doc_id=plan.doc_id,
                source=plan.source,
                doc_sha1=plan.doc_sha1,
                chunker=self.chunker,
                embedder=self.embedder_id,
                chunk_count=chunks,
                pages=plan.pages,
                status="ok",
                metadata=plan.metadata,
                meta_sha1=metadata_sha1(plan.metadata),
                tenant=plan.tenant,
                warnings=plan.warnings,
            )
        )

    def _rewrite(self, moved: dict[str, Chunk], meta: Mapping[str, Any]) -> None:
        """Write stored chunks again with their new positions and their stored vectors."""
        ids = list(moved)
        for start in range(0, len(ids), EMBED_SLICE):
            part = ids[start : start + EMBED_SLICE]
            vectors = self.store.vectors(part)
            with_vector = [u for u in part if u in vectors]
            if with_vector:
                self.store.upsert(
                    [moved[u] for u in with_vector],
                    [vectors[u] for u in with_vector],
                    metadata=meta,
                )
            without = [moved[u] for u in part if u not in vectors]
            if without:  # stored without a vector (the ``none`` embedder)
                self.store.upsert(without, None, metadata=meta)

    def _embed(self, texts: Sequence[str]) -> list[list[float]] | None:
        if self.embedder.dimension == 0:  # the "none" embedder: Weaviate-side vectors
            return None
        vectors = self.embedder.embed_documents(list(texts))
        if len(vectors) != len(texts):
            raise EmbedderError(
                f"embedder {self.embedder.name} returned {len(vectors)} vectors "
                f"for {len(texts)} texts"
            )
        bad = next((len(v) for v in vectors if len(v) != self.embedder.dimension), None)
        if bad is not None:
            raise EmbedderError(
                f"embedder {self.embedder.name} returned a {bad}-d vector, "
                f"expected {self.embedder.dimension}-d"
            )
        return vectors


class PendingWrite:
    """A document write that has begun and is not committed yet (a :class:`DocumentWrite`).

    Tracks what its parts wrote (counts and chunk UUIDs), starting from what it was
    resumed with.
    """

    def __init__(
        self,
        writer: ChunkWriter,
        plan: WritePlan,
        *,
        added: int = 0,
        unchanged: int = 0,
        uuids: Iterable[str] = (),
    ) -> None:
        self._writer = writer
        self._plan = plan
        self.added = added
        self.unchanged = unchanged
        self.uuids: set[str] = set(uuids)

    @property
    def plan(self) -> WritePlan:
        """What is being written (fixed when the write began)."""
        return self._plan

    def write(self, chunks: Sequence[Chunk], *, timer: StageTimer | None = None) -> UpsertResult:
        """Embed and upsert one part's chunks (see :meth:`ChunkWriter.upsert`)."""
        written = self._writer.upsert(chunks, timer=timer, metadata=self._plan.metadata)
        self.added += written.added
        self.unchanged += written.unchanged
        self.uuids |= written.uuids
        return written

    def commit(self) -> DocOutcome:
        """Delete the document's chunks no part wrote, THEN record the version ``ok``.

        The outcome counts every part written (here and in the processes it was
        resumed from) and the stale chunks deleted. Raises ``ValueError`` when no
        chunk was written: committing that would empty the document.
        """
        plan = self._plan
        if not self.uuids:
            raise ValueError(f"{plan.source}: no chunks written; a commit would empty it")
        traced = {"doc_id": plan.doc_id, "pages": plan.pages, "chunks": len(self.uuids)}
        tracing.annotate(**traced)  # on the task's span (the document's)
        with tracing.span("prune", doc_id=plan.doc_id):
            deleted = self._writer.prune(plan.doc_id, self.uuids)
        with tracing.span("ledger", **traced):
            self._writer.record_ok(plan, chunks=len(self.uuids))
        return DocOutcome(
            source=plan.source,
            doc_id=plan.doc_id,
            status="updated" if plan.existed else "added",
            pages=plan.pages,
            chunks_added=self.added,
            chunks_unchanged=self.unchanged,
            chunks_deleted=deleted,
            warnings=plan.warnings,
        )


if TYPE_CHECKING:
    # mypy checks that PendingWrite is the write the worker is written against.
    _conforms: type[DocumentWrite] = PendingWrite

"""One document written into a reindex's target version, reusing the live vectors.

:class:`Reindexer` is what the worker's ``chunkweave.reindex_document`` task calls: a
pipeline on the target collection and ledger
(:class:`~chunkweave.storage.pipeline.conductor.Pipeline`) whose embedder is the cache
(:class:`~.cache.ReusingEmbedder`). The document's write is
the normal one (:mod:`chunkweave.storage.write`), so it is idempotent and resumable: a
document already written at its current version is skipped by the target's ledger
before parsing, and a write interrupted halfway re-embeds nothing already stored.
"""

from __future__ import annotations

import time
from pathlib import Path

from chunkweave.chunking.models import ChunkOptions
from chunkweave.parsers import ParseError
from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.protocols import ChunkStore
from chunkweave.storage.reindex.cache import ReusingEmbedder, live_vectors
from chunkweave.storage.values import DocOutcome, LedgerEntry


class Reindexer:
    """Writes documents of the live ledger into the target version.

    ``live_store``/``live_chunking``/``live_counter`` say where to reuse vectors from
    (all ``None``: nothing is reused, every chunk is embedded).
    """

    def __init__(
        self,
        *,
        target: Pipeline,
        cache: ReusingEmbedder,
        live_store: ChunkStore | None = None,
        live_chunking: ChunkOptions | None = None,
        live_counter: Embedder | None = None,
    ) -> None:
        self.target = target
        self.cache = cache
        self.live_store = live_store
        self.live_chunking = live_chunking
        self.live_counter = live_counter

    def close(self) -> None:
        """Close the target's and the live store's connections."""
        self.target.close()
        if self.live_store is not None:
            self.live_store.close()

    def reindex(
        self, path: str | Path, entry: LedgerEntry, *, sha1: str | None = None
    ) -> DocOutcome:
        """Write the document ``entry`` records (read from ``path``) into the target.

        The target pipeline's stages, with the vector cache filled between parse and
        chunk: check (``sha1``: the file's, when the caller hashed it), parse, load the
        live vectors, chunk, write -> commit. The whole ledger record is the replay's
        input: its ``source``, ``doc_id``, caller ``metadata`` and ``tenant`` go to the
        target as they are. Raises ``OSError`` for an unreadable file and a transient
        ``StoreError`` when a store cannot be reached; a bad document is a ``failed``
        outcome recorded in the target's ledger.
        """
        started = time.monotonic()
        source, doc_id = entry.source, entry.doc_id
        metadata, tenant = entry.metadata or None, entry.tenant
        checked = self.target.check(
            path, source=source, doc_id=doc_id, metadata=metadata, tenant=tenant, sha1=sha1
        )
        if checked.verdict == "unchanged":
            return checked.unchanged()
        t0 = time.monotonic()
        try:
            doc = self.target.parse(path, sha1=checked.sha1)
        except ParseError as err:
            failed = self.target.failed(source, doc_id, err.code, str(err), tenant=tenant)
            return failed.model_copy(update={"seconds": time.monotonic() - started})
        t1 = time.monotonic()
        if self.live_store is not None and self.live_chunking and self.live_counter:
            self.cache.load(
                live_vectors(
                    doc,
                    self.live_chunking,
                    self.live_counter,
                    self.live_store,
                    source=source,
                    doc_id=doc_id,
                )
            )
        t2 = time.monotonic()
        try:
            outcome = self.target.ingest_parsed(
                doc, source=source, doc_id=doc_id, metadata=metadata, tenant=tenant
            )
        finally:
            self.cache.clear()
        # ``cache``: chunking the document as the live version did, reading its vectors.
        timings = {**outcome.timings, "parse": round(t1 - t0, 3), "cache": round(t2 - t1, 3)}
        return outcome.model_copy(
            update={"timings": timings, "seconds": time.monotonic() - started}
        )

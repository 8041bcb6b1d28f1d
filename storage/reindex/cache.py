"""The embedding cache: vectors keyed by (embedder identity, SHA1 of the embed text).

A reindex writes each document into the target through the target's normal write
path (:mod:`chunkweave.storage.write`), whose embedder is a :class:`ReusingEmbedder`:
texts whose SHA1 is in the cache get the cached vector, the others go to the real
embedder. The cache is filled per document from the live collection
(:func:`live_vectors`): the document is chunked again as the live collection was, and
the stored vector of every chunk whose ID is really stored there is keyed by the SHA1
of that chunk's embed text. A chunk ID derives from the chunk's text, options and
chunker version, so a vector is only ever reused for exactly the text it was made of.
The identity half of the key is checked once: vectors are reused only when the target
embedder is the live one (``ReindexSpec.live_chunking`` is ``None`` otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping

from chunkweave.chunking import needs_embedder
from chunkweave.chunking.ids import sha1_hex
from chunkweave.chunking.models import ChunkOptions
from chunkweave.parsers import ParsedDocument
from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.pipeline.chunker import Chunker
from chunkweave.storage.protocols import ChunkStore
from chunkweave.storage.uuids import chunk_uuid


class ReusingEmbedder:
    """An :class:`Embedder` that answers from a cache first (same name, dimension, counter)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.max_tokens = inner.max_tokens
        self._cache: dict[str, list[float]] = {}
        #: Texts answered from the cache, and texts sent to the real embedder.
        self.reused = 0
        self.embedded = 0

    def load(self, vectors: Mapping[str, list[float]]) -> None:
        """Use ``{sha1(embed_text): vector}`` (replacing what was loaded before)."""
        self._cache = dict(vectors)

    def clear(self) -> None:
        """Forget the loaded vectors."""
        self._cache = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors for ``texts``, in order: cached where the text's SHA1 is known."""
        keys = [sha1_hex(t) for t in texts]
        missing = [t for t, k in zip(texts, keys, strict=True) if k not in self._cache]
        fresh = iter(self.inner.embed_documents(missing) if missing else [])
        self.embedded += len(missing)
        self.reused += len(texts) - len(missing)
        return [self._cache[k] if k in self._cache else next(fresh) for k in keys]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query with the real embedder (queries are never cached)."""
        return self.inner.embed_query(text)

    def count(self, text: str) -> int:
        """Token count as the real embedder counts."""
        return self.inner.count(text)


def live_embed_keys(
    doc: ParsedDocument,
    opts: ChunkOptions,
    counter: Embedder,
    store: ChunkStore,
    *,
    source: str,
    doc_id: str,
) -> dict[str, str]:
    """``{chunk uuid: sha1(embed_text)}`` of the live chunks of ``doc`` that are stored.

    ``doc`` is chunked again with the live collection's ``opts``; only chunks whose ID
    is stored count (a chunking the live collection did not make reuses nothing). A strategy
    that embeds to chunk (``semantic``) reuses nothing here.
    """
    if needs_embedder(opts):
        return {}
    chunks = Chunker(opts, counter).chunk(doc, doc_id=doc_id, source=source)
    keys = {chunk_uuid(c.id): sha1_hex(c.embed_text) for c in chunks}
    stored = store.positions(keys)
    return {u: k for u, k in keys.items() if u in stored}


def live_vectors(
    doc: ParsedDocument,
    opts: ChunkOptions,
    counter: Embedder,
    store: ChunkStore,
    *,
    source: str,
    doc_id: str,
) -> dict[str, list[float]]:
    """``{sha1(embed_text): vector}`` for ``doc`` from the live collection (see module doc)."""
    keys = live_embed_keys(doc, opts, counter, store, source=source, doc_id=doc_id)
    if not keys:
        return {}
    stored = store.vectors(keys)
    return {keys[u]: v for u, v in stored.items()}

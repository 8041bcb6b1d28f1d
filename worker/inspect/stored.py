"""The chunks of one stored document, read back from the store for a report.

The store keeps what a report shows except ``embed_text`` (the vector is stored,
not the text it was made from) and the element orders; so a report of stored
chunks has no embedded text to compare and draws no left-out elements. At most
:data:`MAX_STORED_CHUNKS` chunks are read (a larger document is refused, not cut:
:class:`~chunkweave.storage.errors.TooManyChunksError`).
"""

from __future__ import annotations

from chunkweave.chunking import Chunk
from chunkweave.storage.protocols import ChunkStore

#: Most chunks one stored report reads.
MAX_STORED_CHUNKS = 20_000


def stored_chunks(store: ChunkStore, doc_id: str, *, limit: int = MAX_STORED_CHUNKS) -> list[Chunk]:
    """Return the stored chunks of ``doc_id`` in ``chunk_index`` order (empty: none stored)."""
    return store.chunks(doc_id, limit=limit)

"""The chunk stage: options resolved once against the embedder's input limit.

Every path that chunks a document for storage, export, reindex, inspection or the
``chunk`` command holds one :class:`Chunker`, so the token budget (and with it the
chunker fingerprint and every chunk ID) is worked out in one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chunkweave.chunking import ApproxTokenCounter, chunk_document, resolve_options
from chunkweave.chunking.fingerprint import chunker_fingerprint
from chunkweave.chunking.models import Chunk, ChunkOptions, TokenCounter

if TYPE_CHECKING:
    from chunkweave.parsers import ParsedDocument
    from chunkweave.storage.embedders.base import Embedder


class Chunker:
    """Chunk documents with ``opts`` resolved for ``embedder`` (``None``: count approximately).

    ``opts`` get their token budget from the embedder's input limit
    (:func:`chunkweave.chunking.api.resolve_options`), so no chunk is ever truncated by
    the embedder and :attr:`fingerprint` records the real budget. The embedder counts
    tokens and, for a strategy that packs by meaning, embeds sentences; without one the
    approximate counter sizes chunks and such a strategy cannot run.
    """

    def __init__(self, opts: ChunkOptions | None = None, embedder: Embedder | None = None):
        self.embedder = embedder
        self.counter: TokenCounter = embedder if embedder is not None else ApproxTokenCounter()
        limit = embedder.max_tokens if embedder is not None else None
        self.opts = resolve_options(opts or ChunkOptions(), limit)
        #: What the ledger and the export manifest record with each version (``""``
        #: without an embedder: such chunks are never stored).
        self.fingerprint = chunker_fingerprint(self.opts, embedder.name) if embedder else ""

    def chunk(self, doc: ParsedDocument, *, doc_id: str, source: str | None = None) -> list[Chunk]:
        """Chunk ``doc`` (deterministic: the same document gives the same chunk IDs).

        A strategy that embeds to chunk may raise the embedder's errors
        (:class:`~chunkweave.storage.embedders.errors.EmbedderError`, ``transient``
        when the embedding service is down).
        """
        embed = self.embedder.embed_documents if self.embedder is not None else None
        return chunk_document(
            doc, self.opts, self.counter, doc_id=doc_id, source=source, embed=embed
        )

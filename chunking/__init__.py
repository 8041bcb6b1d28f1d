"""Elements -> chunks. The public entry point is :func:`chunk_document`."""

from chunkweave.chunking.api import chunk_document, needs_embedder, resolve_options
from chunkweave.chunking.models import Chunk, ChunkOptions, TokenCounter
from chunkweave.chunking.tokens import ApproxTokenCounter

__all__ = [
    "ApproxTokenCounter",
    "Chunk",
    "ChunkOptions",
    "TokenCounter",
    "chunk_document",
    "needs_embedder",
    "resolve_options",
]

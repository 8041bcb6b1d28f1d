"""Elements -> chunks. The public entry point is :func:`chunk_document`."""

from chunking.api import chunk_document, resolve_options
from chunking.models import Chunk, ChunkOptions, TokenCounter
from chunking.tokens import ApproxTokenCounter

__all__ = [
    "ApproxTokenCounter",
    "Chunk",
    "ChunkOptions",
    "TokenCounter",
    "chunk_document",
    "resolve_options",
]

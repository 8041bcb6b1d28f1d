"""Elements -> chunks. The public entry point is :func:`chunk_document`."""

from chunking.models import Chunk, ChunkOptions, TokenCounter
from chunking.api import chunk_document

__all__ = ["Chunk", "ChunkOptions", "TokenCounter", "chunk_document"]

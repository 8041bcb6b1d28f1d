"""Errors the stores raise, whatever the vector database: each carries an :class:`ErrorCode`.

:class:`StoreUnavailableError` (the store is down or slow: "try again later") is also a
:class:`~chunkweave.errors.TransientError`, which is how the worker decides retries.
"""

from __future__ import annotations

from chunkweave.errors import ChunkweaveError, ErrorCode, TransientError


class StoreError(ChunkweaveError, RuntimeError):
    """A write or read was refused by the store (the message carries its reasons)."""

    code = ErrorCode.STORE_ERROR


class StoreUnavailableError(StoreError, TransientError):
    """The store stayed unreachable (or kept timing out) through every retry."""

    code = ErrorCode.STORE_UNAVAILABLE


class EmbedderMismatchError(StoreError):
    """The collection holds vectors from a different embedder than the configured one."""

    code = ErrorCode.EMBEDDER_MISMATCH


class TooManyChunksError(StoreError):
    """A document has more stored chunks than the caller agreed to read at once."""

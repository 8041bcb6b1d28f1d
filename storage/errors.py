"""Errors the stores raise, whatever the vector database: each carries an :class:`ErrorCode`.

``transient`` is true for the ones that mean "try again later" (the store is down or
slow), so the worker decides retries by ``getattr(err, "transient", False)``.
"""

from __future__ import annotations

from chunkweave.parsers.errors import ErrorCode


class StoreError(RuntimeError):
    """A write or read was refused by the store (the message carries its reasons)."""

    code: ErrorCode = ErrorCode.STORE_ERROR
    transient: bool = False


class StoreUnavailableError(StoreError):
    """The store stayed unreachable (or kept timing out) through every retry."""

    code = ErrorCode.STORE_UNAVAILABLE
    transient = True


class EmbedderMismatchError(StoreError):
    """The collection holds vectors from a different embedder than the configured one."""

    code = ErrorCode.EMBEDDER_MISMATCH


class TooManyChunksError(StoreError):
    """A document has more stored chunks than the caller agreed to read at once."""

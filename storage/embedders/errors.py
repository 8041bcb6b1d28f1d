"""Errors raised by embedders: each names the embedder and the reason.

Each carries an :class:`ErrorCode`; an embedding service that was down, throttled or
failing raises :class:`EmbeddingServiceUnavailableError`, a
:class:`~chunkweave.errors.TransientError` (trying again later may succeed).
"""

from __future__ import annotations

from chunkweave.errors import ChunkweaveError, ErrorCode, TransientError


class EmbedderError(ChunkweaveError, RuntimeError):
    """An embedder could not be built or could not embed (message says why)."""

    code = ErrorCode.EMBEDDER_ERROR


class EmbedderConfigError(EmbedderError, ValueError):
    """The embedder configuration is invalid or names something that is not there."""


class TextTooLongError(EmbedderError, ValueError):
    """A text has more tokens than the model reads; embedding it would truncate it.

    The chunker sizes chunks by the embedder's ``count`` and ``max_tokens`` so this
    should never fire in the pipeline; when it does, it is a bug to surface, never a
    silent cut.
    """

    def __init__(self, embedder: str, index: int, tokens: int, max_tokens: int) -> None:
        super().__init__(
            f"{embedder}: text #{index} has {tokens} tokens, more than the model's "
            f"max_tokens={max_tokens}; it would be truncated (chunk it smaller)"
        )
        self.index = index
        self.tokens = tokens
        self.max_tokens = max_tokens


class EmbeddingServiceError(EmbedderError):
    """A remote embedding service failed for good (after retries, or a non-retryable status).

    ``status`` is the last HTTP status (``None``: no response at all, e.g. refused
    or timed out). When there was no response or the status was 429 or 5xx, the error
    built is an :class:`EmbeddingServiceUnavailableError` (transient, code
    ``EMBEDDER_UNAVAILABLE``), as ``OSError(errno.ENOENT, ...)`` builds a
    ``FileNotFoundError``; otherwise this class, ``EMBEDDER_ERROR`` (the service refused
    the request or answered with something unusable).
    """

    def __new__(cls, message: str, status: int | None = None) -> EmbeddingServiceError:
        """Build the unavailable subclass when ``status`` says the service may come back."""
        if cls is EmbeddingServiceError and _may_come_back(status):
            return super().__new__(EmbeddingServiceUnavailableError, message, status)
        return super().__new__(cls, message, status)

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class EmbeddingServiceUnavailableError(EmbeddingServiceError, TransientError):
    """The embedding service did not answer, throttled (429) or failed (5xx): try later."""

    code = ErrorCode.EMBEDDER_UNAVAILABLE


def _may_come_back(status: int | None) -> bool:
    # No response at all, throttled, or a server-side failure.
    return status is None or status == 429 or status >= 500

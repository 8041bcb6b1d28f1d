"""Errors raised by embedders: each names the embedder and the reason.

Each carries an :class:`ErrorCode`; ``transient`` is true when trying again later
may succeed (an embedding service that was down, throttled or failing).
"""

from __future__ import annotations

from chunkweave.parsers.errors import ErrorCode


class EmbedderError(RuntimeError):
    """An embedder could not be built or could not embed (message says why)."""

    code: ErrorCode = ErrorCode.EMBEDDER_ERROR
    transient: bool = False


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
    or timed out). Transient, with code ``EMBEDDER_UNAVAILABLE``, when there was no
    response or the status was 429 or 5xx; otherwise ``EMBEDDER_ERROR`` (the
    service refused the request or answered with something unusable).
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    @property
    def transient(self) -> bool:  # type: ignore[override]
        """Whether the service may well answer if asked again later."""
        return self.status is None or self.status == 429 or self.status >= 500

    @property
    def code(self) -> ErrorCode:  # type: ignore[override]
        """``EMBEDDER_UNAVAILABLE`` when :attr:`transient`, else ``EMBEDDER_ERROR``."""
        return ErrorCode.EMBEDDER_UNAVAILABLE if self.transient else ErrorCode.EMBEDDER_ERROR

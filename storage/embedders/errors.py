"""Errors raised by embedders: each names the embedder and the reason."""

from __future__ import annotations


class EmbedderError(RuntimeError):
    """An embedder could not be built or could not embed (message says why)."""


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
    """A remote embedding service failed for good (after retries, or a non-retryable status)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

"""The ``none`` embedder: chunks are stored without vectors.

For collections whose vectors a Weaviate-side vectorizer module computes. Nothing
is embedded in the worker; search must then go through Weaviate's own
vectorizer (``near_text`` / hybrid), so :meth:`NoneEmbedder.embed_query` refuses.
"""

from __future__ import annotations

from chunkweave.storage.embedders.counting import approx_token_count
from chunkweave.storage.embedders.errors import EmbedderError

DEFAULT_MAX_TOKENS = 512


class NoneEmbedder:
    """Dimension 0: ``embed_documents`` yields one empty vector per text.

    ``max_tokens`` is the chunk budget to give the chunker (the server-side
    model's input limit); ``count`` is :func:`approx_token_count`.
    """

    name = "none"
    dimension = 0

    def __init__(self, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        self.max_tokens = max_tokens

    def count(self, text: str) -> int:
        """Over-estimated token count (the real tokenizer lives in Weaviate's module)."""
        return approx_token_count(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Return one empty vector per text: the store writes these objects without vectors."""
        return [[] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        """Refuse: with no worker-side model there is no query vector to compute."""
        raise EmbedderError(
            "the 'none' embedder computes no vectors; search with the collection's "
            "Weaviate-side vectorizer (near_text or hybrid) or configure an embedder"
        )

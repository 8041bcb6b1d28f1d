"""The embedder protocol: what storage and the worker need from any embedder."""

from __future__ import annotations

from typing import Protocol


class Embedder(Protocol):
    """Turns texts into vectors. Created once per process and passed in.

    - ``name``: stable identity (model + variant), recorded on the collection and
      ledger; a different name means different vectors.
    - ``dimension``: vector length (0 for the ``none`` embedder).
    - ``max_tokens``: the most tokens one input may have before the model would
      truncate it; the chunker's budget follows it.
    - ``count``: tokens of a text as this model counts them (specials included),
      so ``name``/``count`` also satisfy ``chunking.TokenCounter``.
    """

    name: str
    dimension: int
    max_tokens: int

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed passages for storage, one vector per text, in order."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query (some models prefix queries differently)."""
        ...

    def count(self, text: str) -> int:
        """Token count of ``text`` for this model (``chunking.TokenCounter``)."""
        ...

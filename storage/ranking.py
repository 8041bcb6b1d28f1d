"""How the served search ranks: hybrid weight, weighted keyword fields, optional rerank.

:class:`Ranking` is part of the store's configuration (``WeaviateConfig.ranking``,
``CHUNKWEAVE_WEAVIATE__RANKING__*``), so ``chunkweave search``, the API, the MCP tool
and ``chunkweave eval`` rank alike; a :class:`~chunkweave.storage.filters.SearchRequest`
may carry its own (the eval compares several on one collection). Its defaults were
chosen by the served eval (README, "Ranking").

The rerank stage is behind :class:`Reranker`; :mod:`chunkweave.storage.rerank` holds
the HTTP client for a ``/rerank`` endpoint.
"""

from __future__ import annotations

import re
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from chunkweave.storage.language import CJK, detect_language

#: The keyword field only CJK queries search (:data:`...weaviate.schema.TEXT_CJK`).
CJK_FIELD = "text_cjk"

#: ``name`` or ``name^weight``: a keyword field and its BM25 weight (Weaviate's syntax).
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\^[0-9]+(\.[0-9]+)?)?$")


class RerankConfig(BaseModel):
    """An optional rerank stage: an HTTP ``/rerank`` endpoint scoring (query, text) pairs.

    ``url`` ``None`` (the default): no rerank. ``api``: the request shape,
    ``tei`` (Hugging Face text-embeddings-inference: ``{query, texts}`` ->
    ``[{index, score}]``) or ``cohere`` (Cohere, Jina, Infinity, vLLM:
    ``{model, query, documents, top_n}`` -> ``{results: [{index, relevance_score}]}``).
    ``candidates``: how many hits of the first stage are reranked (at least ``k``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str | None = None
    api: Literal["tei", "cohere"] = "tei"
    model: str | None = None
    api_key: SecretStr | None = None
    candidates: int = Field(default=20, gt=0, le=200)
    timeout_s: float = Field(default=10.0, gt=0)


class Ranking(BaseModel):
    """The served search's ranking knobs.

    - ``alpha``: weight of the vector side in hybrid search (1: vector only, 0: BM25
      only).
    - ``fusion``: how the two sides' scores are fused: ``relative`` (scores scaled
      to 0-1, then weighted; Weaviate's default) or ``ranked`` (reciprocal rank).
    - ``fields``: the keyword (BM25) fields with their weights, ``name^weight``:
      the heading path and caption are separate fields of the chunk (the stored
      text does not repeat them), weighted apart from the body.
    - ``vector_languages``: the languages the embedder's vectors rank well (the
      default MiniLM: English); a query detected in another language
      (:func:`~chunkweave.storage.language.detect_language`) is ranked with
      ``foreign_alpha``, mostly by keyword: an English-only embedder's vector of a
      Korean question is noise. Empty: every language (a multilingual embedder).
    - ``rerank``: the optional rerank stage.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    alpha: float = Field(default=0.5, ge=0.0, le=1.0)
    fusion: Literal["relative", "ranked"] = "relative"
    fields: tuple[str, ...] = ("text", "heading_path^2", "caption^2", "text_cjk")
    vector_languages: tuple[str, ...] = ("en",)
    foreign_alpha: float = Field(default=0.25, ge=0.0, le=1.0)
    rerank: RerankConfig = RerankConfig()

    @field_validator("fields")
    @classmethod
    def _check_fields(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [f for f in value if not _FIELD.match(f)]
        if bad or not value:
            raise ValueError(f"keyword fields must be name or name^weight, got {list(value)}")
        return value

    def alpha_for(self, query: str) -> float:
        """Return the hybrid weight for ``query`` (``foreign_alpha`` in a foreign language)."""
        if not self.vector_languages:
            return self.alpha
        language = detect_language(query)
        if language is None or language in self.vector_languages:
            return self.alpha
        return self.foreign_alpha

    def fields_for(self, query: str) -> tuple[str, ...]:
        """Return :attr:`fields` for ``query``: the CJK trigram field only for a CJK query.

        An English query's trigrams match stray Latin and digit runs of CJK chunks
        (qa_extra: English R@5 0.95 without the field, 0.91 with it).
        """
        if detect_language(query) in CJK:
            return self.fields
        kept = tuple(f for f in self.fields if f.split("^", 1)[0] != CJK_FIELD)
        return kept or self.fields

    def field_names(self) -> list[str]:
        """Return the names of :attr:`fields`, weights dropped."""
        return [f.split("^", 1)[0] for f in self.fields]


class Reranker(Protocol):
    """Scores texts against a query; higher is more relevant."""

    def rerank(self, query: str, texts: list[str]) -> list[float]:
        """Return one score per text, in the order of ``texts``."""
        ...

    def close(self) -> None:
        """Release the client's connections."""
        ...

"""The optional rerank stage: an HTTP ``/rerank`` endpoint, and reordering hits with it.

Two request shapes are spoken (:attr:`RerankConfig.api`):

- ``tei`` (Hugging Face text-embeddings-inference): ``POST {url}`` with
  ``{"query": q, "texts": [...]}``; the answer is ``[{"index": i, "score": s}, ...]``.
- ``cohere`` (Cohere, Jina, Infinity, vLLM and other OpenAI-style servers):
  ``{"model": m, "query": q, "documents": [...], "top_n": n}``; the answer is
  ``{"results": [{"index": i, "relevance_score": s}, ...]}``.

``url`` is the full endpoint (``http://host:8080/rerank``, ``.../v1/rerank``); a key
is sent as ``Authorization: Bearer``. A failed rerank raises
:class:`RerankError`: the caller sees it rather than silently getting the
unreranked order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import httpx

from chunkweave.storage.errors import StoreError
from chunkweave.storage.hits import Hit
from chunkweave.storage.ranking import RerankConfig, Reranker


class RerankError(StoreError):
    """The rerank endpoint failed or answered something else than the documented shape."""


class HttpReranker:
    """A :class:`~chunkweave.storage.ranking.Reranker` on an HTTP ``/rerank`` endpoint."""

    def __init__(self, cfg: RerankConfig) -> None:
        if cfg.url is None:
            raise ValueError("HttpReranker needs a url")
        self.cfg = cfg
        headers = {"Content-Type": "application/json"}
        if cfg.api_key is not None:
            headers["Authorization"] = f"Bearer {cfg.api_key.get_secret_value()}"
        self._client = httpx.Client(timeout=cfg.timeout_s, headers=headers)

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    def rerank(self, query: str, texts: list[str]) -> list[float]:
        """Return one score per text, in the order of ``texts`` (higher: more relevant)."""
        if not texts:
            return []
        url = str(self.cfg.url)
        if self.cfg.api == "tei":
            body: dict[str, Any] = {"query": query, "texts": texts}
        else:
            body = {"query": query, "documents": texts, "top_n": len(texts)}
            if self.cfg.model:
                body["model"] = self.cfg.model
        try:
            resp = self._client.post(url, json=body)
        except httpx.HTTPError as exc:
            raise RerankError(f"rerank at {url}: {type(exc).__name__}: {exc}") from exc
        if resp.status_code != 200:
            raise RerankError(f"rerank at {url}: HTTP {resp.status_code}: {resp.text[:200]}")
        try:
            data = resp.json()
            items = data if self.cfg.api == "tei" else data["results"]
            key = "score" if self.cfg.api == "tei" else "relevance_score"
            scores: list[float | None] = [None] * len(texts)
            for item in items:
                scores[int(item["index"])] = float(item[key])
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise RerankError(f"rerank at {url}: unexpected answer: {resp.text[:200]}") from exc
        missing = [i for i, s in enumerate(scores) if s is None]
        if missing:
            raise RerankError(f"rerank at {url}: no score for texts {missing[:5]}")
        return [float(s) for s in scores if s is not None]


class Rerankers:
    """The rerank clients of one store, one per configuration, made on first use."""

    def __init__(self) -> None:
        self._made: dict[RerankConfig, Reranker | None] = {}

    def get(self, cfg: RerankConfig) -> Reranker | None:
        """Return the reranker ``cfg`` configures, or ``None`` when it has no ``url``."""
        if cfg not in self._made:
            self._made[cfg] = HttpReranker(cfg) if cfg.url else None
        return self._made[cfg]

    def close(self) -> None:
        """Close every client made."""
        for reranker in self._made.values():
            if reranker is not None:
                reranker.close()
        self._made.clear()


def rerank_text(hit: Hit) -> str:
    """Return the text a reranker reads for ``hit``: its heading path, then its text.

    The stored text does not repeat the headings (they are the chunk's context,
    as in the embedded text), and a question often names the section.
    """
    path = " > ".join(hit.heading_path)
    return f"{path}\n{hit.text}" if path else hit.text


def rerank_hits(reranker: Reranker, query: str, hits: Sequence[Hit], k: int) -> list[Hit]:
    """Return the best ``k`` of ``hits`` by ``reranker``'s scores (the hit's new score).

    Ties keep the first stage's order (the sort is stable).
    """
    scores = reranker.rerank(query, [rerank_text(h) for h in hits])
    order = sorted(range(len(hits)), key=lambda i: -scores[i])
    return [replace(hits[i], score=scores[i]) for i in order[:k]]

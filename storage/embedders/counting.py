"""Token counters for embedders whose model is not in this process (remote or none)."""

from __future__ import annotations

import math
from pathlib import Path

from tokenizers import Tokenizer

from chunkweave.storage.embedders.errors import EmbedderConfigError


def approx_token_count(text: str) -> int:
    """Over-estimate of the tokens ``text`` becomes in a typical subword tokenizer.

    One token per 3 UTF-8 bytes, plus 2 for specials. BPE and WordPiece vocabularies
    average ~4 bytes per token on English and ~3 on CJK, so this errs on the side of
    smaller chunks: a chunk sized by it never overflows the model's input.
    """
    return math.ceil(len(text.encode("utf-8")) / 3) + 2


def load_tokenizer(path: Path) -> Tokenizer:
    """Load a local ``tokenizer.json`` with truncation off, so counts are true lengths."""
    if not path.is_file():
        raise EmbedderConfigError(f"tokenizer file {path} does not exist")
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception on bad files
        raise EmbedderConfigError(f"{path}: not a tokenizers JSON file ({exc})") from exc
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer

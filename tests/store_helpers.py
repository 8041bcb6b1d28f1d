"""Helpers for the storage tests: hand-built chunks and a deterministic test embedder.

The embedder here exercises store logic only (its vectors mean nothing); end-to-end
tests use the real embedder.
"""

from __future__ import annotations

import hashlib
import struct

from chunkweave.chunking.models import Chunk
from chunkweave.storage.weaviate_store import EmbedderIdentity

#: The identity every storage test's 16-d deterministic vectors belong to.
ID16 = EmbedderIdentity("test-embedder", 16)


def make_chunk(doc_id: str, index: int, text: str | None = None, chunker: str = "t/v1/x") -> Chunk:
    """A valid chunk of ``doc_id`` whose id depends on its text (like the real chunker)."""
    text = text if text is not None else f"paragraph {index} of {doc_id}"
    content = hashlib.sha1(text.encode()).hexdigest()
    return Chunk(
        id=hashlib.sha1(f"{doc_id}|{chunker}|{text}".encode()).hexdigest(),
        doc_id=doc_id,
        source=f"/docs/{doc_id}.pdf",
        text=text,
        embed_text=f"{doc_id}\n{text}",
        type="text",
        heading_path=("Intro", f"Part {index // 10}"),
        page_start=index // 5 + 1,
        page_end=index // 5 + 1,
        pages=(index // 5 + 1,),
        chunk_index=index,
        token_count=len(text.split()),
        content_sha1=content,
        doc_sha1="d" * 40,
        chunker=chunker,
    )


def det_vector(text: str, dim: int) -> list[float]:
    """A deterministic pseudo-random unit-ish vector for ``text``."""
    out: list[float] = []
    counter = 0
    while len(out) < dim:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        out.extend(v / 2**31 for v in struct.unpack("<8i", digest))
        counter += 1
    return out[:dim]


class CountingEmbedder:
    """Deterministic test embedder that counts how many texts it embedded."""

    def __init__(self, name: str = "test-embedder", dimension: int = 16, max_tokens: int = 256):
        self.name = name
        self.dimension = dimension
        self.max_tokens = max_tokens
        self.embedded: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return [det_vector(t, self.dimension) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return det_vector(text, self.dimension)

    def count(self, text: str) -> int:
        return len(text.split())


def vectors(chunks: list[Chunk], dim: int = 16) -> list[list[float]]:
    """Deterministic vectors for ``chunks`` (from their embed text)."""
    return [det_vector(c.embed_text, dim) for c in chunks]

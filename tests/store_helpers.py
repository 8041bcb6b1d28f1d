"""Helpers for the storage tests: hand-built chunks, a deterministic test embedder, and an
in-memory store and ledger (the storage protocols without a server).

The embedder here exercises store logic only (its vectors mean nothing); end-to-end
tests use the real embedder.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from chunkweave.chunking.models import Chunk
from chunkweave.storage.metadata import metadata_sha1
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import EmbedderIdentity, LedgerEntry, StoredPosition

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


class MemoryLedger:
    """An in-memory ``DocumentLedger`` (pipeline logic without a server)."""

    def __init__(self) -> None:
        self.rows: dict[str, LedgerEntry] = {}

    def ensure_schema(self) -> None:
        pass

    def get(self, doc_id: str) -> LedgerEntry | None:
        return self.rows.get(doc_id)

    def put(self, entry: LedgerEntry) -> LedgerEntry:
        self.rows[entry.doc_id] = entry
        return entry

    def delete(self, doc_id: str) -> bool:
        return self.rows.pop(doc_id, None) is not None

    def entries(self) -> Iterator[LedgerEntry]:
        yield from list(self.rows.values())


class MemoryStore:
    """An in-memory ``ChunkStore``: ``{uuid: (doc_id, vector)}``; its own ledger."""

    def __init__(self, identity: EmbedderIdentity = ID16) -> None:
        self.identity = identity
        self.objects: dict[str, tuple[str, Sequence[float] | None]] = {}
        self.position: dict[str, StoredPosition] = {}
        self.metadata: dict[str, dict[str, Any]] = {}
        self.retagged = 0
        self.ledger = MemoryLedger()
        self.closed = False

    def existing(self, uuids: Iterable[str]) -> set[str]:
        return set(uuids) & set(self.objects)

    def positions(self, uuids: Iterable[str]) -> dict[str, StoredPosition]:
        return {u: self.position[u] for u in self.existing(uuids)}

    def vectors(self, uuids: Iterable[str]) -> dict[str, list[float]]:
        found = {u: self.objects[u][1] for u in self.existing(uuids)}
        return {u: list(v) for u, v in found.items() if v is not None}

    def upsert(
        self,
        chunks: Sequence[Chunk],
        vectors: Sequence[Sequence[float]] | None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        meta = metadata_sha1(metadata or {})
        for i, c in enumerate(chunks):
            self.objects[chunk_uuid(c.id)] = (c.doc_id, vectors[i] if vectors else None)
            self.position[chunk_uuid(c.id)] = StoredPosition(c.chunk_index, c.regions, meta)
            self.metadata[chunk_uuid(c.id)] = dict(metadata or {})
        return len(chunks)

    def retag(self, doc_id: str, metadata: Mapping[str, Any]) -> int:
        uuids = self.doc_uuids(doc_id)
        for u in uuids:
            self.metadata[u] = dict(metadata)
            self.position[u] = self.position[u]._replace(meta_sha1=metadata_sha1(metadata))
        self.retagged += len(uuids)
        return len(uuids)

    def doc_uuids(self, doc_id: str) -> set[str]:
        return {u for u, (d, _) in self.objects.items() if d == doc_id}

    def delete_ids(self, uuids: Iterable[str]) -> int:
        return sum(self.objects.pop(u, None) is not None for u in set(uuids))

    def delete_doc(self, doc_id: str) -> int:
        return self.delete_ids(self.doc_uuids(doc_id))

    def stale(self) -> bool:
        return False

    def open_ledger(self) -> MemoryLedger:
        return self.ledger

    def close(self) -> None:
        self.closed = True

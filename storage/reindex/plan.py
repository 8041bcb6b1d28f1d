"""The ``--dry-run`` plan of a reindex: what it would do, before any work.

Every live document is parsed and chunked with the target's options (the live
chunking too, to find which vectors can be reused: :func:`~.cache.live_embed_keys`).
Nothing is written. The embedding time is estimated at this embedder's rate measured
here on a sample of the texts to embed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from chunkweave.chunking.ids import sha1_hex
from chunkweave.chunking.models import ChunkOptions
from chunkweave.parsers import ParseError, ParseOptions, parse_document
from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.pipeline.chunker import Chunker
from chunkweave.storage.protocols import ChunkStore
from chunkweave.storage.reindex.cache import live_embed_keys
from chunkweave.storage.values import LedgerEntry

#: Texts embedded to measure the rate.
SAMPLE = 32


class ReindexPlan(BaseModel):
    """What a reindex would do."""

    model_config = ConfigDict(frozen=True)

    documents: int
    chunks: int
    reused: int
    to_embed: int
    tokens_to_embed: int
    #: Documents that could not be read or parsed now (the reindex would fail them).
    unreadable: tuple[str, ...] = ()
    #: Measured texts per second of this embedder (``None``: nothing to embed).
    embed_rate: float | None = None
    estimated_embed_s: float | None = None
    plan_s: float = 0.0

    def lines(self) -> list[str]:
        """Return the plan as lines for a terminal."""
        share = self.reused / self.chunks if self.chunks else 0.0
        out = [
            f"documents:  {self.documents}",
            f"chunks:     {self.chunks}",
            f"vectors:    {self.reused} reused ({share:.1%}), {self.to_embed} to embed "
            f"({self.tokens_to_embed} tokens)",
        ]
        if self.embed_rate is not None and self.estimated_embed_s is not None:
            out.append(
                f"embedding:  ~{self.estimated_embed_s:.0f}s at {self.embed_rate:.1f} texts/s "
                "(measured now)"
            )
        if self.unreadable:
            out.append(f"unreadable: {len(self.unreadable)} ({', '.join(self.unreadable[:5])})")
        return out


def make_plan(
    entries: Iterable[LedgerEntry],
    open_source: Callable[[str], AbstractContextManager[Path]],
    *,
    parse_opts: ParseOptions,
    target_chunking: ChunkOptions,
    embedder: Embedder,
    live_store: ChunkStore | None,
    live_chunking: ChunkOptions | None,
    on_each: Callable[[str], None] | None = None,
) -> ReindexPlan:
    """Plan a reindex of ``entries`` (``open_source`` gives a readable path for a source)."""
    started = time.monotonic()
    documents = chunks = reused = tokens = 0
    to_embed: list[str] = []
    unreadable: list[str] = []
    chunker = Chunker(target_chunking, embedder)  # the target's chunk stage
    for entry in entries:
        documents += 1
        if on_each is not None:
            on_each(entry.source)
        try:
            with open_source(entry.source) as path:
                doc = parse_document(path, parse_opts)
        except (OSError, ParseError, LookupError):
            unreadable.append(entry.source)
            continue
        new = chunker.chunk(doc, doc_id=entry.doc_id, source=entry.source)
        have: set[str] = set()
        if live_store is not None and live_chunking is not None:
            keys = live_embed_keys(
                doc, live_chunking, embedder, live_store, source=entry.source, doc_id=entry.doc_id
            )
            have = set(keys.values())
        for chunk in new:
            chunks += 1
            if sha1_hex(chunk.embed_text) in have:
                reused += 1
            else:
                to_embed.append(chunk.embed_text)
                tokens += chunk.token_count
    rate = estimated = None
    if to_embed and embedder.dimension:
        sample = to_embed[:SAMPLE]
        t0 = time.monotonic()
        embedder.embed_documents(sample)
        rate = len(sample) / max(time.monotonic() - t0, 1e-6)
        estimated = len(to_embed) / rate
    return ReindexPlan(
        documents=documents,
        chunks=chunks,
        reused=reused,
        to_embed=len(to_embed),
        tokens_to_embed=tokens,
        unreadable=tuple(unreadable),
        embed_rate=rate,
        estimated_embed_s=estimated,
        plan_s=round(time.monotonic() - started, 3),
    )

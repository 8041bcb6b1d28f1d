"""Served evaluation: score a chunking through the store's own search, as users get it.

Each chunking goes into a scratch chunk collection of a real store (its ledger name
is a scratch one too), written with :meth:`ChunkStore.upsert` and the vectors the
evaluation computes anyway (no ingest pipeline). Every question is then asked through
:meth:`ChunkStore.search` exactly as ``chunkweave search`` asks it: hybrid (BM25 +
vector) by default, or vector only, or keyword (BM25) only. Only the search call is
timed. The scratch collections are dropped afterwards unless kept.

With ``small_to_big`` the chunks' match units are written too (embedded with the
same cache) and every question is asked small-to-big
(:mod:`chunkweave.storage.weaviate.unit_search`), as the store's setting would.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Sequence
from typing import Any, Literal, get_args

from chunkweave.chunking.match_units import match_units
from chunkweave.chunking.models import Chunk
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.evaluate import (
    KS,
    QAItem,
    Ranked,
    StrategyReport,
    embed_cached,
    report_rankings,
    searchable,
)
from chunkweave.storage.filters import SearchRequest
from chunkweave.storage.protocols import ChunkStore
from chunkweave.storage.stores import drop_store, open_store
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import EmbedderIdentity

SearchMode = Literal["hybrid", "vector", "keyword"]
SEARCH_MODES: tuple[str, ...] = get_args(SearchMode)
#: Scratch chunk collections are ``<PREFIX>_<run>_<label>``, their ledgers
#: ``<PREFIX>Ledger_<run>_<label>``.
SCRATCH_PREFIX = "ChunkweaveEval"


def new_run_id() -> str:
    """Return a short random id naming one evaluation run's scratch collections."""
    return uuid.uuid4().hex[:10]


def scratch_config(base: WeaviateConfig, run: str, label: str) -> WeaviateConfig:
    """``base``'s server with plain scratch collections for ``label`` in run ``run``.

    Not versioned (no alias, no catalog record) and single-tenant, so the
    collections are the names and can be dropped as they are.
    """
    tag = re.sub(r"[^0-9A-Za-z]+", "_", label).strip("_") or "x"
    return base.model_copy(
        update={
            "collection": f"{SCRATCH_PREFIX}_{run}_{tag}",
            "ledger_collection": f"{SCRATCH_PREFIX}Ledger_{run}_{tag}",
            "versioned": False,
            "multi_tenancy": False,
            "tenant": None,
        }
    )


def evaluate_served(
    label: str,
    questions: Sequence[QAItem],
    chunks_by_doc: dict[str, list[Chunk]],
    embedder: Embedder,
    cfg: WeaviateConfig,
    *,
    mode: SearchMode = "hybrid",
    k: int = 10,
    cache: dict[str, list[float]] | None = None,
    query_cache: dict[str, list[float]] | None = None,
    keep: bool = False,
    small_to_big: bool = False,
) -> StrategyReport:
    """Write the chunks into ``cfg``'s (scratch) collection, ask every question, score.

    ``cache`` (embed text -> vector) and ``query_cache`` (question -> vector) let the
    strategies of one run share vectors. The collection (and its ledger, if made) is
    dropped afterwards, also on failure, unless ``keep``.
    """
    chunks, docs = searchable(chunks_by_doc)
    cache = {} if cache is None else cache
    embed_cached([c.embed_text for c in chunks], embedder, cache)
    store = open_store(cfg, EmbedderIdentity(embedder.name, embedder.dimension))
    try:
        if chunks:
            store.upsert(chunks, [cache[c.embed_text] for c in chunks])
        if small_to_big:
            write_units(store, chunks, embedder, cache)
        doc_of = {chunk_uuid(c.id): d for c, d in zip(chunks, docs, strict=True)}
        rankings, latencies = ask(
            store,
            questions,
            embedder,
            mode,
            max(k, max(KS)),
            doc_of,
            query_cache,
            small_to_big=small_to_big,
        )
    finally:
        try:
            if not keep:
                drop_store(store)
        finally:
            store.close()
    return report_rankings(
        label,
        questions,
        chunks,
        docs,
        rankings,
        embedder.count,
        latencies_ms=latencies,
        mode=mode,
        collection=cfg.collection,
    )


def write_units(
    store: Any, chunks: Sequence[Chunk], embedder: Embedder, cache: dict[str, list[float]]
) -> int:
    """Write the match units of ``chunks`` (embedded through ``cache``); return how many."""
    fitted = match_units(chunks, embedder, embedder.max_tokens)
    units = list({u.id: u for u in fitted}.values())
    embed_cached([u.embed_text for u in units], embedder, cache)
    by_id = {c.id: c for c in chunks}
    return int(store.upsert_units(units, by_id, [cache[u.embed_text] for u in units]))


def ask(
    store: ChunkStore,
    questions: Sequence[QAItem],
    embedder: Embedder,
    mode: SearchMode,
    k: int,
    doc_of: dict[str, str],
    query_cache: dict[str, list[float]] | None = None,
    *,
    small_to_big: bool | None = None,
) -> tuple[list[list[Ranked]], list[float]]:
    """Ask each question through ``store.search``; return the rankings and ms per search.

    The query is embedded before the clock starts: the latency is the search call's.
    ``doc_of`` maps a hit's UUID to the document its chunk is from.
    """
    query_cache = {} if query_cache is None else query_cache
    rankings: list[list[Ranked]] = []
    latencies: list[float] = []
    for item in questions:
        vector = None
        if mode != "keyword":
            if item.question not in query_cache:
                query_cache[item.question] = embedder.embed_query(item.question)
            vector = query_cache[item.question]
        request = SearchRequest(
            item.question, vector, k=k, hybrid=mode == "hybrid", small_to_big=small_to_big
        )
        started = time.perf_counter()
        hits = store.search(request)
        latencies.append((time.perf_counter() - started) * 1000.0)
        rankings.append([Ranked(h.text, doc_of.get(h.uuid, h.doc_id)) for h in hits])
    return rankings, latencies

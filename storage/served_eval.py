"""Served evaluation: score a chunking through the store's own search, as users get it.

Each chunking goes into a scratch chunk collection of a real store (its ledger name
is a scratch one too), written with :meth:`ChunkStore.upsert` and the vectors the
evaluation computes anyway (no ingest pipeline). Every question is then asked through
:meth:`ChunkStore.search` exactly as ``chunkweave search`` asks it: hybrid (BM25 +
vector) by default, or vector only, or keyword (BM25) only. Only the search call is
timed. The scratch collections are dropped afterwards unless kept.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Mapping, Sequence
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
from chunkweave.storage.ranking import Ranking
from chunkweave.storage.stores import drop_store, open_store
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import EmbedderIdentity

SearchMode = Literal["hybrid", "vector", "keyword"]
SEARCH_MODES: tuple[str, ...] = get_args(SearchMode)
#: Scratch chunk collections are ``<PREFIX>_<run>_<label>``, their ledgers
#: ``<PREFIX>Ledger_<run>_<label>``.
SCRATCH_PREFIX = "ChunkweaveEval"


#: What was served before :class:`Ranking`: Weaviate's own hybrid defaults (alpha
#: 0.75, relative-score fusion, every searchable property weighted alike).
WEAVIATE_DEFAULTS = Ranking(fields=("text", "heading_path", "caption"), vector_languages=())


def ranking_variants(base: Ranking) -> dict[str, Ranking]:
    """Return ``base`` and ``base`` with each of its options off, by name.

    For ``chunkweave eval --compare-ranking``; ``weaviate-defaults`` is the search as
    served before the options existed.
    """
    plain = tuple(f for f in base.fields if f.split("^", 1)[0] != "text_cjk")
    return {
        "ranking": base,
        "weaviate-defaults": WEAVIATE_DEFAULTS,
        "no-field-weights": base.model_copy(
            update={"fields": tuple(f.split("^", 1)[0] for f in base.fields)}
        ),
        "no-cjk-field": base.model_copy(update={"fields": plain}),
        "no-language-alpha": base.model_copy(update={"vector_languages": ()}),
        "no-rerank": base.model_copy(
            update={"rerank": base.rerank.model_copy(update={"url": None})}
        ),
    }


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
    ranking: Ranking | None = None,
    small_to_big: bool = False,
) -> StrategyReport:
    """Write the chunks into ``cfg``'s (scratch) collection, ask every question, score.

    ``cache`` (embed text -> vector) and ``query_cache`` (question -> vector) let the
    strategies of one run share vectors. The collection (and its ledger, if made) is
    dropped afterwards, also on failure, unless ``keep``. ``ranking``: how the
    search ranks (``None``: as ``cfg`` says).
    """
    reports = evaluate_served_rankings(
        label,
        questions,
        chunks_by_doc,
        embedder,
        cfg,
        {label: ranking},
        mode=mode,
        k=k,
        cache=cache,
        query_cache=query_cache,
        keep=keep,
        small_to_big=small_to_big,
    )
    return reports[0]


def evaluate_served_rankings(
    label: str,
    questions: Sequence[QAItem],
    chunks_by_doc: dict[str, list[Chunk]],
    embedder: Embedder,
    cfg: WeaviateConfig,
    rankings: Mapping[str, Ranking | None],
    *,
    mode: SearchMode = "hybrid",
    k: int = 10,
    cache: dict[str, list[float]] | None = None,
    query_cache: dict[str, list[float]] | None = None,
    keep: bool = False,
    settle_s: float = 0.0,
    small_to_big: bool = False,
) -> list[StrategyReport]:
    """As :func:`evaluate_served`, written once and asked once per ranking.

    ``rankings``: report label -> ranking (``None``: as ``cfg`` says); one report per
    entry, in order. ``settle_s``: seconds to wait after the write before asking.
    Weaviate 1.35 ranks BM25 a little differently once its memtables are flushed
    (after 60 s by default) than right after a write; a served collection is asked
    long after, so a figure that must match it waits. ``small_to_big``: the chunks'
    match units are written too and every question is asked small-to-big.
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
        time.sleep(settle_s)
        asked = {
            name: ask(
                store,
                questions,
                embedder,
                mode,
                max(k, max(KS)),
                doc_of,
                query_cache,
                ranking=ranking,
                small_to_big=small_to_big,
            )
            for name, ranking in rankings.items()
        }
    finally:
        try:
            if not keep:
                drop_store(store)
        finally:
            store.close()
    return [
        report_rankings(
            name,
            questions,
            chunks,
            docs,
            ranked,
            embedder.count,
            latencies_ms=latencies,
            mode=mode,
            collection=cfg.collection,
        )
        for name, (ranked, latencies) in asked.items()
    ]


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
    ranking: Ranking | None = None,
    small_to_big: bool | None = None,
) -> tuple[list[list[Ranked]], list[float]]:
    """Ask each question through ``store.search``; return the rankings and ms per search.

    The query is embedded before the clock starts: the latency is the search call's.
    ``doc_of`` maps a hit's UUID to the document its chunk is from. ``ranking`` goes
    on every request (``None``: the store's own).
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
            item.question,
            vector,
            k=k,
            hybrid=mode == "hybrid",
            ranking=ranking,
            small_to_big=small_to_big,
        )
        started = time.perf_counter()
        hits = store.search(request)
        latencies.append((time.perf_counter() - started) * 1000.0)
        rankings.append([Ranked(h.text, doc_of.get(h.uuid, h.doc_id)) for h in hits])
    return rankings, latencies

"""Small-to-big search: match small units, return their chunks.

Two searches of the chunk collection, the same kind (hybrid, vector or BM25), the
same filters, tenant and access rule: one over the chunks, one over their match
units (:mod:`.unit_objects`: table rows, sentence windows). Each chunk is scored by
reciprocal rank fusion of its own rank and its best unit's rank, so a chunk found
both ways leads, and one found only through a unit (a row of a big table) still
enters. A chunk a unit names but the chunk search missed is read by id under the
same filters (a unit never brings back a chunk its caller may not see). Each hit
lists the units that matched it (:class:`~chunkweave.storage.hits.UnitMatch`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from weaviate.classes.query import Filter
from weaviate.collections.classes.filters import _Filters

from chunkweave.storage.filters import SearchRequest
from chunkweave.storage.hits import Hit, UnitMatch
from chunkweave.storage.weaviate.client import WeaviateSession
from chunkweave.storage.weaviate.search import _hit, access_filter, search_chunks
from chunkweave.storage.weaviate.unit_objects import (
    UNIT_KEYS,
    UNIT_KIND,
    UNIT_OF,
    UNIT_SPAN,
    chunks_only,
    units_only,
    with_filter,
)

#: Reciprocal rank fusion constant and the weight of a chunk's best unit against the
#: chunk's own rank, chosen with ``chunkweave eval --small-to-big both``: on
#: examples/qa and 85 questions of examples/qa_extra, K 5 with weight 0.5 ranked best
#: of K 5-60 with weights 0.15-1 (the usual K 60 let look-alike rows and sentences
#: crowd out whole sections). A unit mostly lifts a chunk both searches found.
RRF_K = 5
UNIT_WEIGHT = 0.5
#: Weight of its second-best unit (0: several matching rows are no better evidence).
SECOND_UNIT_WEIGHT = 0.0
#: Chunks and units each search asks for, at least (and per hit asked for).
CHUNK_POOL, CHUNKS_PER_HIT = 20, 3
UNIT_POOL, UNITS_PER_HIT = 40, 6
#: Matched units a hit names (its best), for a UI to highlight.
MATCHED_PER_HIT = 3
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="chunkweave-units")


def search_served(
    session: WeaviateSession,
    collection: str,
    request: SearchRequest,
    where: _Filters | None,
    *,
    small_to_big: bool,
    **kw: Any,
) -> list[Hit]:
    """Search as the store does: small-to-big when the request (else ``small_to_big``) says.

    Otherwise :func:`~.search.search_chunks` over the chunks alone (units kept out).
    ``kw``: :func:`~.search.search_chunks`'s options (index, access rule, ranking).
    """
    if small_to_big if request.small_to_big is None else request.small_to_big:
        return search_small_to_big(session, collection, request, where, **kw)
    return search_chunks(session, collection, request, with_filter(where, chunks_only()), **kw)


def search_small_to_big(
    session: WeaviateSession,
    collection: str,
    request: SearchRequest,
    where: _Filters | None,
    *,
    meta_keys: Collection[str] = (),
    rerankers: Any = None,
    **common: Any,
) -> list[Hit]:
    """Top ``request.k`` chunks, fused from the chunk search and the unit search.

    As :func:`~.search.search_chunks` for the filters, access rule and ranking
    (``common``); only the chunk search is reranked. A hit's ``score`` is its fused
    score and ``matched`` its units, best first.
    """
    k = request.k
    # The two searches run at once (the client's HTTP and gRPC channels are thread-safe).
    asked = _POOL.submit(
        search_chunks,
        session,
        collection,
        replace(request, k=max(UNIT_POOL, UNITS_PER_HIT * k)),
        with_filter(where, units_only()),
        meta_keys=(*meta_keys, *UNIT_KEYS),
        **common,
    )
    chunks = search_chunks(
        session,
        collection,
        replace(request, k=max(CHUNK_POOL, CHUNKS_PER_HIT * k)),
        with_filter(where, chunks_only()),
        meta_keys=meta_keys,
        rerankers=rerankers,
        **common,
    )
    units = asked.result()
    if not units:  # nothing indexed small (or nothing matched): the chunk search as is
        return chunks[:k]
    scores: dict[str, float] = {}
    for rank, hit in enumerate(chunks, 1):
        scores[hit.uuid] = 1.0 / (RRF_K + rank)
    matched: dict[str, list[UnitMatch]] = {}
    seen: Counter[str] = Counter()
    for rank, unit in enumerate(units, 1):
        parent = str(unit.metadata.get(UNIT_OF) or "")
        if not parent:
            continue
        found = matched.setdefault(parent, [])
        weight = (UNIT_WEIGHT, SECOND_UNIT_WEIGHT)[seen[parent]] if seen[parent] < 2 else 0.0
        seen[parent] += 1
        scores[parent] = scores.get(parent, 0.0) + weight / (RRF_K + rank)
        if len(found) < MATCHED_PER_HIT:
            found.append(_match(unit, rank))
    ranked = sorted(scores, key=lambda u: -scores[u])[:k]
    by_uuid = {h.uuid: h for h in chunks}
    missing = [u for u in ranked if u not in by_uuid]
    if missing:
        read = _read_chunks(session, collection, request, where, missing, meta_keys, common)
        by_uuid.update(read)
    return [
        replace(by_uuid[u], score=scores[u], matched=tuple(matched.get(u, ())))
        for u in ranked
        if u in by_uuid  # a unit whose chunk is gone (or hidden) brings nothing
    ]


def _match(unit: Hit, rank: int) -> UnitMatch:
    meta = unit.metadata
    span = meta.get(UNIT_SPAN)
    row = meta.get("table_row_start") if meta.get(UNIT_KIND) == "row" else None
    return UnitMatch(
        kind=str(meta.get(UNIT_KIND) or ""),
        text=unit.text,
        rank=rank,
        score=unit.score,
        row=None if row is None else int(row),
        span=(int(span[0]), int(span[1])) if span and len(span) == 2 else None,
    )


def _read_chunks(
    session: WeaviateSession,
    collection: str,
    request: SearchRequest,
    where: _Filters | None,
    uuids: list[str],
    meta_keys: Collection[str],
    common: dict[str, Any],
) -> dict[str, Hit]:
    """Read the chunks ``uuids`` under ``where`` and the access rule (the hidden stay out)."""
    test = with_filter(where, chunks_only()) & Filter.by_id().contains_any(uuids)
    if request.principals is not None:
        access = access_filter(
            request.principals, public_without_acl=bool(common.get("public_without_acl"))
        )
        if access is None:
            return {}
        test = test & access
    handle = session.handle(collection)
    objs = session.retry(
        "reading matched chunks",
        lambda: handle.query.fetch_objects(filters=test, limit=len(uuids)).objects,
    )
    return {str(o.uuid): _hit(o, False, meta_keys) for o in objs}

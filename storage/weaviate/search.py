"""Searching the chunk collection: hybrid, vector-only or BM25, with store-neutral filters.

:func:`where_filter` translates :class:`chunkweave.storage.filters.Condition` values
into a Weaviate filter; :func:`search_chunks` runs the query and returns
:class:`chunkweave.storage.hits.Hit` values, best first.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from weaviate.classes.query import Filter, HybridFusion, MetadataQuery
from weaviate.collections.classes.filters import _FilterByProperty, _Filters

from chunkweave.storage.errors import StoreError
from chunkweave.storage.filters import Condition, Operator, SearchRequest, stored_form
from chunkweave.storage.hits import Hit, relevance
from chunkweave.storage.metadata import ACL, HAS_ACL
from chunkweave.storage.ranking import Ranking
from chunkweave.storage.rerank import Rerankers, rerank_hits
from chunkweave.storage.weaviate.client import WeaviateSession
from chunkweave.storage.weaviate.schema import REGIONS, read_regions

_OPERATORS: dict[Operator, Callable[[_FilterByProperty, Any], _Filters]] = {
    "equal": lambda prop, value: prop.equal(value),
    "not_equal": lambda prop, value: prop.not_equal(value),
    "less_than": lambda prop, value: prop.less_than(value),
    "less_or_equal": lambda prop, value: prop.less_or_equal(value),
    "greater_than": lambda prop, value: prop.greater_than(value),
    "greater_or_equal": lambda prop, value: prop.greater_or_equal(value),
}


def where_filter(where: Sequence[Condition]) -> _Filters | None:
    """Return the Weaviate filter that holds when all of ``where`` hold (``None``: no filter)."""
    combined: _Filters | None = None
    for cond in map(stored_form, where):
        test = _OPERATORS[cond.operator](Filter.by_property(cond.property), cond.value)
        if cond.property == "section_number" and cond.operator == "equal":
            # Every chunk holding the section, merged with others or not; a chunk stored
            # before section_numbers existed holds only its own section_number.
            test = test | Filter.by_property("section_numbers").contains_any([str(cond.value)])
        combined = test if combined is None else combined & test
    return combined


def access_filter(principals: Sequence[str], *, public_without_acl: bool) -> _Filters | None:
    """Return the filter letting through only chunks some of ``principals`` may read.

    A chunk whose ``acl`` holds one of them, or (``public_without_acl``) one whose
    document has no ``acl`` at all. ``None`` when nothing can pass (no principals,
    nothing public): the search then returns nothing without asking.
    """
    allowed = Filter.by_property(ACL).contains_any(list(principals)) if principals else None
    if not public_without_acl:
        return allowed
    public = Filter.by_property(HAS_ACL).equal(False)
    return public if allowed is None else allowed | public


def search_chunks(
    session: WeaviateSession,
    collection: str,
    request: SearchRequest,
    where: _Filters | None,
    *,
    keyword_index: bool,
    public_without_acl: bool = False,
    meta_keys: Collection[str] = (),
    ranking: Ranking | None = None,
    rerankers: Rerankers | None = None,
    keyword_fields: Collection[str] | None = None,
) -> list[Hit]:
    """Top ``request.k`` chunks of ``collection`` that ``where`` (and the ACL) let through.

    With ``request.principals`` only chunks they may read (:func:`access_filter`).
    ``ranking`` (default: ``request.ranking``, else Weaviate's own defaults) sets the
    hybrid weight and fusion and the weighted BM25 fields (a field the collection
    does not search, not in ``keyword_fields`` when given, is left out). With a
    rerank endpoint configured (and ``rerankers`` to make its client) the search
    fetches ``rerank.candidates`` hits and the reranker keeps the best ``k``.

    Without a vector the search is BM25 only; without ``keyword_index`` a hybrid
    search is vector-only, and one without a vector raises :class:`StoreError`.
    """
    query, vector, hybrid = request.query, request.vector, request.hybrid
    ranking = ranking or request.ranking
    reranker = rerankers.get(ranking.rerank) if rerankers and ranking else None
    k = max(request.k, ranking.rerank.candidates) if reranker and ranking else request.k
    fields = _query_fields(ranking, query, keyword_fields)
    if request.principals is not None:
        access = access_filter(request.principals, public_without_acl=public_without_acl)
        if access is None:
            return []  # fails closed: nobody named, nothing public
        where = access if where is None else where & access
    if vector is None and not keyword_index:
        raise StoreError(
            f"collection {collection!r} has no keyword index "
            "(created with keyword_index off) and the embedder makes no query "
            "vectors: there is nothing to search with"
        )
    query_api = session.handle(collection).query
    meta = MetadataQuery(score=True, distance=True)

    def _run() -> Any:
        if vector is None:
            return query_api.bm25(
                query=query,
                query_properties=fields,
                limit=k,
                filters=where,
                return_metadata=meta,
            )
        if hybrid and keyword_index:
            return query_api.hybrid(
                query=query,
                vector=list(vector),
                alpha=None if ranking is None else ranking.alpha_for(query),
                fusion_type=None if ranking is None else _FUSION[ranking.fusion],
                query_properties=fields,
                limit=k,
                filters=where,
                return_metadata=meta,
            )
        return query_api.near_vector(
            near_vector=list(vector), limit=k, filters=where, return_metadata=meta
        )

    objs = session.retry("search", _run).objects
    by_distance = vector is not None and not (hybrid and keyword_index)
    hits = [_hit(o, by_distance, meta_keys) for o in objs]
    if reranker is None or not hits:
        return hits
    return rerank_hits(reranker, query, hits, request.k)


_FUSION = {"relative": HybridFusion.RELATIVE_SCORE, "ranked": HybridFusion.RANKED}


def _query_fields(
    ranking: Ranking | None, query: str, searchable: Collection[str] | None
) -> list[str] | None:
    """Return the weighted BM25 fields (``None``: every searchable one, equally)."""
    if ranking is None:
        return None
    fields = [
        f
        for f in ranking.fields_for(query)
        if searchable is None or f.split("^", 1)[0] in searchable
    ]
    return fields or None


def _hit(obj: Any, by_distance: bool, meta_keys: Collection[str]) -> Hit:
    props = obj.properties
    metadata = {k: props[k] for k in meta_keys if props.get(k) is not None}
    return Hit(
        uuid=str(obj.uuid),
        score=relevance(obj.metadata.score, obj.metadata.distance, by_distance=by_distance),
        distance=obj.metadata.distance,
        text=str(props.get("text", "")),
        heading_path=tuple(props.get("heading_path") or ()),
        pages=tuple(int(p) for p in props.get("pages") or ()),
        source=str(props.get("source", "")),
        doc_id=str(props.get("doc_id", "")),
        type=str(props.get("type", "")),
        regions=read_regions(props.get(REGIONS)),
        metadata=metadata,
        section_number=props.get("section_number") or None,
        section_numbers=tuple(props.get("section_numbers") or ()),
    )

"""Reading a chunk collection's objects in pages: by id, by document, one query each.

:class:`~.store.WeaviateStore`'s reads go through these (every query retried by the
session as its writes are).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from weaviate.classes.query import Filter, Sort
from weaviate.collections.classes.filters import _Filters

from chunkweave.storage.weaviate.client import WeaviateSession

#: ``fetch(where, limit, props, sort=..., vector=...)`` bound to one collection.
Fetch = Callable[..., Any]


def fetch(
    session: WeaviateSession,
    collection: Callable[[], Any],
    where: _Filters,
    limit: int,
    props: list[Any] | None,
    *,
    sort: bool = False,
    vector: bool = False,
) -> Any:
    """Return up to ``limit`` objects meeting ``where`` (``sort``: by ``chunk_index``)."""
    return session.retry(
        "query",
        lambda: (
            collection()
            .query.fetch_objects(
                filters=where,
                limit=limit,
                return_properties=props,
                sort=Sort.by_property("chunk_index") if sort else None,
                include_vector=vector,
            )
            .objects
        ),
    )


def by_ids(
    fetch: Fetch, uuids: Iterable[str], props: list[Any], page_size: int, *, vector: bool = False
) -> Iterator[Any]:
    """Yield the stored objects among ``uuids``, one query per page of ids."""
    ids = sorted(set(uuids))
    for start in range(0, len(ids), page_size):
        page = ids[start : start + page_size]
        where = Filter.by_id().contains_any(page)
        yield from fetch(where, len(page), props, vector=vector)


def doc_objects(
    fetch: Fetch, doc_id: str, props: list[Any] | None, page_size: int
) -> Iterator[Any]:
    """Yield every stored object of ``doc_id`` once, with ``props`` (None: all).

    Pages by ``chunk_index`` (keyset, ``>=`` the last index seen) because a filtered
    query cannot page past ``QUERY_MAXIMUM_RESULTS`` with offsets; ``chunk_index``
    is always read, as the paging needs it.
    """
    if props is not None and "chunk_index" not in props:
        props = [*props, "chunk_index"]
    seen: set[str] = set()
    last = -1
    while True:
        where = Filter.by_property("doc_id").equal(doc_id) & Filter.by_property(
            "chunk_index"
        ).greater_or_equal(last)
        objs = fetch(where, page_size, props, sort=True)
        new = [o for o in objs if str(o.uuid) not in seen]
        seen.update(str(o.uuid) for o in new)
        yield from new
        if len(objs) < page_size or not new:
            return
        last = max(int(o.properties["chunk_index"]) for o in objs)

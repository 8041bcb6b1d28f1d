"""The chunks of one stored document, read back from the Weaviate store for a report.

The store keeps what a report shows except ``embed_text`` (the vector is stored,
not the text it was made from) and the element orders; so a report of stored
chunks has no embedded text to compare and draws no left-out elements. At most
:data:`MAX_STORED_CHUNKS` chunks are read (a larger document is refused, not cut).
"""

from __future__ import annotations

from typing import Any

from chunkweave.chunking import Chunk
from chunkweave.storage.weaviate.schema import REGIONS, read_regions

#: Most chunks one stored report reads.
MAX_STORED_CHUNKS = 20_000
#: Chunk fields read back as they are stored (the rest are typed below).
_PLAIN = (
    "page_start",
    "page_end",
    "table_id",
    "table_row_start",
    "table_row_end",
    "table_markdown",
    "table_html",
    "caption",
    "parent_id",
)


class TooManyChunksError(ValueError):
    """The stored document has more chunks than one report reads."""


def stored_chunks(store: Any, doc_id: str, *, limit: int = MAX_STORED_CHUNKS) -> list[Chunk]:
    """Return the stored chunks of ``doc_id`` in ``chunk_index`` order (empty: none stored).

    ``store`` is a :class:`~chunkweave.storage.weaviate.store.WeaviateStore`; chunks
    are read a page at a time by ``chunk_index`` (keyset, as ``doc_uuids`` does),
    their ``embed_text`` left empty. Raises :class:`TooManyChunksError` beyond ``limit``.
    """
    from weaviate.classes.query import Filter, Sort

    page_size = int(store.page_size)
    found: dict[str, Chunk] = {}
    last = -1
    while True:
        where = Filter.by_property("doc_id").equal(doc_id) & Filter.by_property(
            "chunk_index"
        ).greater_or_equal(last)

        def fetch(where: Any = where) -> Any:
            return (
                store.collection()
                .query.fetch_objects(
                    filters=where,
                    limit=page_size,
                    # Every property (naming the nested ``regions`` would need its
                    # sub-properties spelt out; the search reads them the same way).
                    sort=Sort.by_property("chunk_index"),
                )
                .objects
            )

        objs = store.session.retry("reading a document's chunks", fetch)
        new = [o for o in objs if str(o.uuid) not in found]
        for o in new:
            found[str(o.uuid)] = _chunk(o.properties)
        if len(found) > limit:
            raise TooManyChunksError(f"{doc_id}: more than {limit} stored chunks")
        if len(objs) < page_size or not new:
            break
        last = max(int(o.properties["chunk_index"]) for o in objs)
    return sorted(found.values(), key=lambda c: c.chunk_index)


def _chunk(props: dict[str, Any]) -> Chunk:
    return Chunk(
        id=str(props["chunk_id"]),
        doc_id=str(props["doc_id"]),
        source=str(props["source"]),
        text=str(props.get("text") or ""),
        embed_text="",
        type=props["type"],
        heading_path=tuple(props.get("heading_path") or ()),
        pages=tuple(int(p) for p in props.get("pages") or ()),
        regions=read_regions(props.get(REGIONS)),
        chunk_index=int(props["chunk_index"]),
        token_count=int(props.get("token_count") or 0),
        content_sha1=str(props.get("content_sha1") or ""),
        doc_sha1=str(props.get("doc_sha1") or ""),
        chunker=str(props.get("chunker") or ""),
        **{k: props[k] for k in _PLAIN if props.get(k) is not None},
    )

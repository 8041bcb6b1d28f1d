"""What a search asks for, whatever the store: a request and its conditions, all ANDed.

``ChunkStore.search`` takes one request and returns only chunks meeting every one of
its conditions (none: no filter). Each store translates them into its own query
language (Weaviate: :mod:`chunkweave.storage.weaviate.search`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

Operator = Literal[
    "equal", "not_equal", "less_than", "less_or_equal", "greater_than", "greater_or_equal"
]

#: The chunk properties a search may filter on, with the type of their values. A store
#: keeps a filter index on each (Weaviate's chunk schema: a test checks they agree).
FILTERABLE: Mapping[str, type[str] | type[int]] = MappingProxyType(
    {
        "doc_id": str,
        "source": str,
        "type": str,
        "pages": int,
        "page_start": int,
        "page_end": int,
        "chunk_index": int,
        "table_id": str,
        "parent_id": str,
        "section_number": str,
        "section_prefix": str,
    }
)


@dataclass(frozen=True)
class Condition:
    """One test on a stored chunk property: ``property operator value``.

    Nothing is checked here: a store refuses (``StoreError``) a property it cannot
    filter on; :data:`FILTERABLE` says which ones every store can.
    """

    property: str
    operator: Operator
    value: str | int


@dataclass(frozen=True)
class SearchRequest:
    """One search: its text, the query's vector, how many hits, the conditions, the mode.

    Hybrid (keyword + ``vector``) by default; by vector only when ``hybrid`` is off;
    by keyword only without a ``vector`` (the ``none`` embedder).
    """

    query: str
    vector: Sequence[float] | None = None
    k: int = 5
    where: tuple[Condition, ...] = ()
    hybrid: bool = True

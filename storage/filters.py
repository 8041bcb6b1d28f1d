"""What a search may filter on, whatever the store: :class:`Condition` values, all ANDed.

``ChunkStore.search`` takes a sequence of conditions and returns only chunks meeting
every one of them (none: no filter). Each store translates them into its own query
language (Weaviate: :mod:`chunkweave.storage.weaviate.search`).
"""

from __future__ import annotations

from collections.abc import Mapping
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

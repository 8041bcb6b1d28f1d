"""What a search asks for, whatever the store: a request and its conditions, all ANDed.

``ChunkStore.search`` takes one request and returns only chunks meeting every one of
its conditions (none: no filter). Each store translates them into its own query
language (Weaviate: :mod:`chunkweave.storage.weaviate.search`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from types import MappingProxyType
from typing import Literal

from chunkweave.chunking.sections import section_number
from chunkweave.storage.metadata import FieldType, MetadataConfig
from chunkweave.storage.ranking import Ranking

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
        "section_numbers": str,
        "section_prefix": str,
        "language": str,
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
    value: str | int | float | bool | datetime


#: Properties holding section numbers: a filter value is compared in the same form.
#: ``section_number`` equal to a number finds every chunk holding that section, alone
#: or merged with others (a store tests ``section_numbers`` too; chunks stored before
#: those existed answer by their own ``section_number``); ``section_prefix`` every
#: chunk inside it.
SECTION_PROPERTIES = frozenset({"section_number", "section_numbers", "section_prefix"})


def stored_form(cond: Condition) -> Condition:
    """Return ``cond`` with its value in the form the store holds it.

    A section filter may be written as a citation ("Section 7.3", "§ 7.3.1",
    "第二十三条"); chunks store the normalised number ("7.3", "7.3.1", "第23条"). A value
    with no section number in it is left as given (it matches nothing).
    """
    if cond.property in SECTION_PROPERTIES and isinstance(cond.value, str):
        number = section_number(cond.value)
        if number is not None and number != cond.value:
            return replace(cond, value=number)
    return cond


@dataclass(frozen=True)
class SearchRequest:
    """One search: its text, the query's vector, how many hits, the conditions, the mode.

    Hybrid (keyword + ``vector``) by default; by vector only when ``hybrid`` is off;
    by keyword only without a ``vector`` (the ``none`` embedder).

    ``principals``: who is asking. Given (even empty), only chunks whose ``acl``
    holds one of them are returned; a chunk without an ``acl`` only when the
    collection's ``public_without_acl`` says so (it fails closed). ``None``: no
    access filter (a trusted caller, such as the operator's own CLI). ``tenant``:
    the tenant to search (required, and only that one, on a multi-tenant store).
    ``ranking``: how to rank (hybrid weight, keyword fields, rerank); ``None``: the
    store's configured :class:`~chunkweave.storage.ranking.Ranking`.
    ``small_to_big``: match small units (table rows, sentence windows) and return their
    chunks (:mod:`chunkweave.storage.weaviate.unit_search`); ``None``: as the store's
    ``WeaviateConfig.small_to_big`` says.
    """

    query: str
    vector: Sequence[float] | None = None
    k: int = 5
    where: tuple[Condition, ...] = ()
    hybrid: bool = True
    principals: tuple[str, ...] | None = None
    tenant: str | None = None
    ranking: Ranking | None = None
    small_to_big: bool | None = None


#: The Python type a filter value of each metadata type is given as.
_META_FILTER: Mapping[FieldType, type[str] | type[float] | type[bool] | type[datetime]] = {
    "string": str,
    "number": float,
    "bool": bool,
    "date": datetime,
    "string[]": str,  # equal on a list: the list holds the value
}


def filterable(cfg: MetadataConfig) -> dict[str, type]:
    """Every property a search may filter on: :data:`FILTERABLE` plus declared metadata."""
    out: dict[str, type] = dict(FILTERABLE)
    out.update({k: _META_FILTER[kind] for k, kind in cfg.declared().items()})
    return out

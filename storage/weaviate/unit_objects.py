"""Match units as objects of the chunk collection (small-to-big retrieval).

A match unit (:class:`chunkweave.chunking.match_units.MatchUnit`: a table row, a
sentence window) is stored in the chunk collection itself, beside its chunk, with a
copy of the chunk's properties: ``doc_id``, ``source``, ``type``, heading path,
pages, sections, the document's caller metadata and ``acl``. So every filter, tenant
and access rule a chunk search applies holds for units unchanged, and everything that
deletes, prunes or retags a document's objects by ``doc_id`` takes its units along.

Three properties tell units apart (added to a collection missing them): ``match_unit``
(true on units only; chunk searches keep ``match_unit != true``, which also passes
chunks stored before units existed), ``unit_of`` (the UUID of its chunk),
``unit_kind`` and ``unit_span``; a row unit's row is its ``table_row_start``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from weaviate.classes.config import DataType, Property
from weaviate.classes.query import Filter
from weaviate.collections.classes.filters import _Filters

from chunkweave.chunking.ids import sha1_hex
from chunkweave.chunking.match_units import MatchUnit
from chunkweave.chunking.models import Chunk
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.weaviate.schema import REGIONS, TEXT_CJK, chunk_properties, text_property

MATCH_UNIT = "match_unit"
UNIT_OF = "unit_of"
UNIT_KIND = "unit_kind"
UNIT_SPAN = "unit_span"
#: What a unit hit reads beside the chunk's own properties.
UNIT_KEYS: tuple[str, ...] = (UNIT_OF, UNIT_KIND, UNIT_SPAN, "table_row_start")


def unit_properties_schema() -> list[Property]:
    """Return the properties units add to the chunk collection (only ever added)."""
    return [
        Property(name=MATCH_UNIT, data_type=DataType.BOOL, index_filterable=True),
        text_property(UNIT_OF),
        text_property(UNIT_KIND),
        Property(name=UNIT_SPAN, data_type=DataType.INT_ARRAY, index_filterable=False),
    ]


def units_only() -> _Filters:
    """Return the filter passing match units only."""
    return Filter.by_property(MATCH_UNIT).equal(True)


def chunks_only() -> _Filters:
    """Return the filter passing chunks only (objects without ``match_unit`` too).

    For searches only: Weaviate computes ``not_equal`` as the complement of
    ``equal`` over every object id, deleted ones included, so an aggregate counts
    deleted objects through it (:meth:`.unit_store.UnitStore.count_units` instead).
    """
    return Filter.by_property(MATCH_UNIT).not_equal(True)


def units_in(pending: Mapping[str, tuple[Mapping[str, Any], Any]]) -> int:
    """Return how many of the objects to write (``uuid -> (props, vector)``) are units."""
    return sum(1 for props, _ in pending.values() if props.get(MATCH_UNIT))


def with_filter(where: _Filters | None, extra: _Filters) -> _Filters:
    """``where`` and ``extra`` (``extra`` alone without ``where``)."""
    return extra if where is None else where & extra


def unit_properties(
    unit: MatchUnit,
    chunk: Chunk,
    ingested_at: datetime,
    *,
    meta: Mapping[str, Any] | None = None,
    language: str | None = None,
) -> dict[str, Any]:
    """Return the stored properties of ``unit``: its chunk's, with its own text and id.

    The chunk's table bodies and regions are left out (the chunk holds them);
    ``language`` is its document's, as the chunk's.
    """
    props = chunk_properties(chunk, ingested_at, regions=False, meta=meta, language=language)
    if props.get(TEXT_CJK):  # the unit's own text, with the chunk's heading path and caption
        props[TEXT_CJK] = "\n".join([*chunk.heading_path, chunk.caption or "", unit.text])
    for key in ("table_markdown", "table_html", "table_row_end", REGIONS):
        props.pop(key, None)
    props.update(
        {
            "chunk_id": unit.id,
            "text": unit.text,
            "token_count": 0,
            "content_sha1": sha1_hex(unit.text),
            MATCH_UNIT: True,
            UNIT_OF: chunk_uuid(chunk.id),
            UNIT_KIND: unit.kind,
        }
    )
    if unit.row is not None:
        props["table_row_start"] = unit.row
        props["table_row_end"] = unit.row + 1
    else:
        props.pop("table_row_start", None)
    if unit.span is not None:
        props[UNIT_SPAN] = list(unit.span)
    return props

"""The match-unit half of :class:`~.store.WeaviateStore`: writing and reading units.

Units (:mod:`.unit_objects`) live in the chunk collection, keyed by
:func:`chunkweave.storage.uuids.chunk_uuid` of their content-derived ID
(:func:`chunkweave.chunking.match_units.unit_id`), so writes upsert and re-runs
overwrite. Deleting, retagging and pruning a document go by ``doc_id`` and take its
units along; :meth:`UnitStore.unit_parents` tells the writer's prune which of a
document's objects are units of which chunk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from weaviate.classes.query import Filter

from chunkweave.chunking.match_units import MatchUnit
from chunkweave.chunking.models import Chunk
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import StoredPosition
from chunkweave.storage.weaviate.grpc_batch import Pending
from chunkweave.storage.weaviate.reads import doc_objects
from chunkweave.storage.weaviate.schema import doc_languages, meta_values
from chunkweave.storage.weaviate.unit_objects import UNIT_OF, unit_properties, units_only

if TYPE_CHECKING:
    from chunkweave.storage.config import WeaviateConfig
    from chunkweave.storage.weaviate.client import WeaviateSession


class UnitStore:
    """Unit writes and reads; mixed into the store, which provides the rest."""

    cfg: WeaviateConfig
    page_size: int
    session: WeaviateSession

    def collection(self) -> Any:  # noqa: D102
        raise NotImplementedError

    def _send(self, pending: dict[str, Pending]) -> int:
        raise NotImplementedError

    def _fetch(
        self,
        where: Any,
        limit: int,
        props: list[Any] | None,
        sort: bool = False,
        vector: bool = False,
    ) -> Any:
        raise NotImplementedError

    def positions(self, uuids: Iterable[str]) -> dict[str, StoredPosition]:  # noqa: D102
        raise NotImplementedError

    @property
    def small_to_big(self) -> bool:
        """Whether this store writes match units and searches them by default."""
        return self.cfg.small_to_big

    def unit_positions(self, uuids: Iterable[str]) -> dict[str, StoredPosition]:
        """Return the stored units among ``uuids`` (their chunk's index and metadata hash)."""
        return self.positions(uuids)

    def upsert_units(
        self,
        units: Sequence[MatchUnit],
        chunks: Mapping[str, Chunk],
        vectors: Sequence[Sequence[float]] | None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        """Write ``units`` (``vectors`` in the same order, or none); ``chunks``: theirs, by id.

        Each carries its chunk's properties and the document's ``metadata``.
        """
        if vectors is not None and len(vectors) != len(units):
            raise ValueError(f"{len(units)} units but {len(vectors)} vectors")
        now = datetime.now(UTC)
        meta = meta_values(metadata or {}, self.cfg.metadata)
        langs = doc_languages(list(chunks.values()))  # as upsert finds its chunks'
        pending: dict[str, Pending] = {
            chunk_uuid(u.id): (
                unit_properties(
                    u, chunks[u.chunk_id], now, meta=meta, language=langs[chunks[u.chunk_id].doc_id]
                ),
                vectors[i] if vectors is not None else None,
            )
            for i, u in enumerate(units)
        }
        return self._send(pending) if pending else 0

    def count(self, doc_id: str | None = None) -> int:
        """Count the stored chunks (of ``doc_id`` when given), match units left out."""
        where = Filter.by_property("doc_id").equal(doc_id) if doc_id else None
        result = self.session.retry(
            "count",
            lambda: self.collection().aggregate.over_all(filters=where, total_count=True),
        )
        return int(result.total_count or 0) - self.count_units(where)

    def count_units(self, where: Any = None) -> int:
        """Count the stored units meeting ``where`` (all: ``None``)."""
        test = units_only() if where is None else where & units_only()
        result = self.session.retry(
            "count",
            lambda: self.collection().aggregate.over_all(filters=test, total_count=True),
        )
        return int(result.total_count or 0)

    def unit_parents(self, doc_id: str) -> dict[str, str]:
        """Every stored unit of ``doc_id``: its UUID -> its chunk's UUID."""
        objs = doc_objects(self._fetch, doc_id, [UNIT_OF], self.page_size)
        return {str(o.uuid): str(o.properties[UNIT_OF]) for o in objs if o.properties.get(UNIT_OF)}

"""Writing a part's match units beside its chunks (small-to-big retrieval).

:class:`~chunkweave.storage.write.ChunkWriter` calls :func:`write_units` after the
chunks of each part when its store says ``small_to_big``. Units are made from the
chunks (:func:`chunkweave.chunking.match_units.match_units`), and as with chunks
their IDs derive from content: a stored unit is not embedded again; one whose chunk
moved or got other metadata is written again with its stored vector. Units of chunks
no part wrote are deleted by the commit's prune (see :func:`stale_objects`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chunkweave.chunking.match_units import MatchUnit, match_units
from chunkweave.storage.timing import StageTimer
from chunkweave.storage.uuids import chunk_uuid

if TYPE_CHECKING:
    from chunkweave.chunking.models import Chunk, TokenCounter

#: ``embed(texts)``: one vector per text, or ``None`` (the store's vectorizer embeds).
Embed = Callable[[Sequence[str]], "list[list[float]] | None"]


def writes_units(store: Any) -> bool:
    """Whether ``store`` indexes match units (a store without the setting does not)."""
    return bool(getattr(store, "small_to_big", False))


def write_units(
    store: Any,
    chunks: Sequence[Chunk],
    embed: Embed,
    *,
    metadata: Mapping[str, Any],
    meta_sha1: str,
    timer: StageTimer,
    slice_size: int,
    counter: TokenCounter | None = None,
    max_tokens: int | None = None,
) -> int:
    """Embed and write the units of ``chunks`` not stored yet; return how many were new.

    ``counter`` and ``max_tokens``: the embedder's, so no unit is embedded truncated.
    """
    units = list({u.id: u for u in match_units(chunks, counter, max_tokens)}.values())
    if not units:
        return 0
    by_id = {c.id: c for c in chunks}
    uuids = [chunk_uuid(u.id) for u in units]
    with timer.stage("upsert"):
        stored = store.unit_positions(uuids)
    new: list[MatchUnit] = []
    moved: dict[str, MatchUnit] = {}
    for unit, uuid in zip(units, uuids, strict=True):
        was = stored.get(uuid)
        if was is None:
            new.append(unit)
        elif was.chunk_index != by_id[unit.chunk_id].chunk_index or was.meta_sha1 != meta_sha1:
            moved[uuid] = unit
    for start in range(0, len(new), slice_size):
        part = new[start : start + slice_size]
        with timer.stage("embed"):
            vectors = embed([u.embed_text for u in part])
        with timer.stage("upsert"):
            store.upsert_units(part, by_id, vectors, metadata=metadata)
    if moved:
        with timer.stage("upsert"):
            _rewrite(store, moved, by_id, metadata, slice_size)
    return len(new)


def _rewrite(
    store: Any,
    moved: dict[str, MatchUnit],
    by_id: Mapping[str, Chunk],
    metadata: Mapping[str, Any],
    slice_size: int,
) -> None:
    """Write stored units again (their chunk moved, or new metadata) with their vectors."""
    ids = list(moved)
    for start in range(0, len(ids), slice_size):
        part = ids[start : start + slice_size]
        vectors = store.vectors(part)
        with_vector = [u for u in part if u in vectors]
        if with_vector:
            units = [moved[u] for u in with_vector]
            store.upsert_units(units, by_id, [vectors[u] for u in with_vector], metadata=metadata)
        without = [moved[u] for u in part if u not in vectors]
        if without:
            store.upsert_units(without, by_id, None, metadata=metadata)


def stale_objects(store: Any, doc_id: str, keep: Collection[str]) -> set[str]:
    """Return the objects of ``doc_id`` a commit keeping the chunks ``keep`` deletes.

    Every chunk not kept; every unit when the store indexes none; otherwise the
    units whose chunk is not kept.
    """
    stale = store.doc_uuids(doc_id) - set(keep)
    if stale and writes_units(store):
        kept = set(keep)
        stale -= {u for u, chunk in store.unit_parents(doc_id).items() if chunk in kept}
    return stale

"""Second half of a fan-out: embed and upsert a big document's chunks on many workers.

After the parts of a large PDF are joined and chunked (:mod:`.fanout`), the
chunks of a document with more than ``fanout_embed_chunks`` chunks are cut into
slices of that size. Each slice is an ``embed_slice`` task that embeds and upserts
only chunks not stored yet (``IngestPipeline.upsert_chunks``); the task that completes
the set of slices enqueues ``commit_document``, which deletes the document's stale
chunks (``prune``) and records the ledger entry (``record_ok``):
the same upsert-then-prune order as a single-task ingest, so the document is never
without chunks.

Chunks travel as zlib-compressed JSON in scratch keys
``cw:fan:<doc_id>:<sha1>:w:*`` (TTL ``job_ttl_s``), never as task payloads; vectors
never touch Redis. The document's write lock is held as a *lease* for the whole
write (taken by the joiner, extended by each slice, released by the commit), so no
other writer interleaves with the slices.
"""

from __future__ import annotations

import zlib
from typing import Any

from celery import Task
from pydantic import TypeAdapter

from chunkweave.chunking.models import Chunk
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.ingest import DocOutcome
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.worker.celery_app import visibility_timeout_s
from chunkweave.worker.jobs import as_text
from chunkweave.worker.locks import drop_lease, hold_lease, take_lease
from chunkweave.worker.tasks.base import doc_task
from chunkweave.worker.tasks.recorder import DocRun

_CHUNKS = TypeAdapter(list[Chunk])
_UUIDS = TypeAdapter(list[str])


def _base(doc_id: str, sha1: str) -> str:
    return f"cw:fan:{doc_id}:{sha1}:w"


def start(run: DocRun, task: Task, chunks: list[Chunk], *, pages: int) -> dict[str, Any]:
    """Take the lease, store the slices and enqueue one ``embed_slice`` per slice."""
    assert run.sha1 is not None
    rt = run.rt
    settings = rt.settings
    token = take_lease(rt.redis, run.doc_id, ttl_s=visibility_timeout_s(settings))
    if token is None:
        run.running(stage="waiting for another worker")
        raise task.retry(countdown=settings.lock_ttl_s, max_retries=None)
    size = settings.fanout_embed_chunks
    parts = [chunks[i : i + size] for i in range(0, len(chunks), size)]
    base = _base(run.doc_id, run.sha1)
    existed = rt.pipeline.is_recorded(run.doc_id)
    keep = [chunk_uuid(c.id) for c in chunks]
    ttl = settings.job_ttl_s
    pipe = rt.redis.pipeline(transaction=True)
    pipe.delete(f"{base}:done", f"{base}:counts")
    for i, part in enumerate(parts):
        pipe.set(f"{base}:slice:{i}", zlib.compress(_CHUNKS.dump_json(part)), ex=ttl)
    pipe.set(f"{base}:keep", zlib.compress(_UUIDS.dump_json(keep)), ex=ttl)
    pipe.hset(
        f"{base}:meta",
        mapping={"token": token, "pages": pages, "existed": int(existed), "slices": len(parts)},
    )
    pipe.expire(f"{base}:meta", ttl)
    pipe.execute()
    run.running(stage=f"embedding {len(parts)} slices", progress=0.5)
    for i in range(len(parts)):
        embed_slice.apply_async(
            kwargs={
                "job_id": run.job_id,
                "source": run.source,
                "doc_id": run.doc_id,
                "sha1": run.sha1,
                "index": i,
                "slices": len(parts),
            }
        )
    return {"doc_id": run.doc_id, "status": "embedding", "slices": len(parts)}


def _hold(run: DocRun, sha1: str) -> dict[str, str] | None:
    """Return the fan-out's meta hash if this run still holds the write lease, else None.

    Registers the lease's release for when the run ends failed.
    """
    raw = run.rt.redis.hgetall(f"{_base(run.doc_id, sha1)}:meta")
    meta = {as_text(k): as_text(v) for k, v in raw.items()}
    token = meta.get("token")
    if not token:
        return None
    redis, doc_id = run.rt.redis, run.doc_id
    run.on_failure(lambda: drop_lease(redis, doc_id, token))
    if not hold_lease(redis, doc_id, token, ttl_s=visibility_timeout_s(run.rt.settings)):
        return None
    return meta


@doc_task("chunkweave.embed_slice")
def embed_slice(task: Task, run: DocRun, *, sha1: str, index: int, slices: int) -> dict[str, Any]:
    """Embed and upsert one slice of a fanned-out document's chunks."""
    rt = run.rt
    settings = rt.settings
    run.sha1, run.part = sha1, f"slice{index}"
    base = _base(run.doc_id, sha1)
    meta = _hold(run, sha1)
    if meta is None:
        return run.failed(ErrorCode.LEASE_LOST, f"{run.source}: write lease expired during fan-out")
    if not run.count_attempt():
        return run.poisoned(f"chunk slice {index}")
    blob = rt.redis.get(f"{base}:slice:{index}")
    if not isinstance(blob, bytes):
        return run.failed(
            ErrorCode.INTERNAL, f"{run.source}: fan-out slice expired before embedding"
        )
    result = rt.pipeline.upsert_chunks(_CHUNKS.validate_json(zlib.decompress(blob)))
    pipe = rt.redis.pipeline(transaction=True)
    pipe.hincrby(f"{base}:counts", "added", result.added)
    pipe.hincrby(f"{base}:counts", "unchanged", result.unchanged)
    pipe.sadd(f"{base}:done", index)
    pipe.scard(f"{base}:done")
    pipe.expire(f"{base}:done", settings.job_ttl_s)
    pipe.expire(f"{base}:counts", settings.job_ttl_s)
    _, _, added, count, _, _ = pipe.execute()
    run.clear_attempts()
    hold_lease(rt.redis, run.doc_id, meta["token"], ttl_s=visibility_timeout_s(settings))
    if added and int(count) == slices:
        commit_document.apply_async(
            kwargs={"job_id": run.job_id, "source": run.source, "doc_id": run.doc_id, "sha1": sha1}
        )
    run.running(stage=f"embedded {count}/{slices} slices", progress=0.5 + count / slices / 2)
    return {"doc_id": run.doc_id, "status": "slice_written", "index": index}


@doc_task("chunkweave.commit_document")
def commit_document(task: Task, run: DocRun, *, sha1: str) -> dict[str, Any]:
    """Prune stale chunks, record the ledger entry, release the lease, record done."""
    rt = run.rt
    run.sha1 = sha1
    source, doc_id = run.source, run.doc_id
    base = _base(doc_id, sha1)
    meta = _hold(run, sha1)
    if meta is None:
        return run.failed(ErrorCode.LEASE_LOST, f"{source}: write lease expired during fan-out")
    blob = rt.redis.get(f"{base}:keep")
    if not isinstance(blob, bytes):
        return run.failed(ErrorCode.INTERNAL, f"{source}: fan-out state expired before commit")
    keep = set(_UUIDS.validate_json(zlib.decompress(blob)))
    deleted = rt.pipeline.prune(doc_id, keep)
    pages = int(meta.get("pages", 0))
    rt.pipeline.record_ok(doc_id, source, sha1, pages, len(keep))
    counts = {as_text(k): int(v) for k, v in rt.redis.hgetall(f"{base}:counts").items()}
    outcome = DocOutcome(
        source=source,
        doc_id=doc_id,
        status="updated" if meta.get("existed") == "1" else "added",
        pages=pages,
        chunks_added=counts.get("added", 0),
        chunks_unchanged=counts.get("unchanged", 0),
        chunks_deleted=deleted,
    )
    drop_lease(rt.redis, doc_id, meta["token"])
    result = run.done(outcome)
    # By name: a SCAN of the keyspace would cost more the more keys Redis holds.
    slices = (f"{base}:slice:{i}" for i in range(int(meta.get("slices", 0))))
    rt.redis.delete(*slices, f"{base}:keep", f"{base}:meta", f"{base}:done", f"{base}:counts")
    return result

"""Second half of a fan-out: embed and upsert a big document's chunks on many workers.

After the parts of a large PDF are joined and chunked (``chunkweave.worker.fanout``), the
chunks of a document with more than ``fanout_embed_chunks`` chunks are cut into
slices of that size. Each slice is an ``embed_slice`` task that embeds and upserts
only chunks not stored yet (``Pipeline.upsert_chunks``); the task that completes
the set of slices enqueues ``commit_document``, which deletes the document's stale
chunks (``Pipeline.prune``) and records the ledger entry (``Pipeline.record_ok``):
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
from chunkweave.storage.ingest import DocOutcome
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.worker.celery_app import app, visibility_timeout_s
from chunkweave.worker.jobs import as_text
from chunkweave.worker.locks import count_attempt, drop_lease, hold_lease, take_lease
from chunkweave.worker.recorder import DocRun
from chunkweave.worker.runtime import get_runtime
from chunkweave.worker.tasks import DocTask, run_guarded

_CHUNKS = TypeAdapter(list[Chunk])
_UUIDS = TypeAdapter(list[str])


def _base(doc_id: str, sha1: str) -> str:
    return f"cw:fan:{doc_id}:{sha1}:w"


def start(run: DocRun, task: Task, chunks: list[Chunk], *, pages: int) -> dict[str, Any]:
    """Take the lease, store the slices and enqueue one ``embed_slice`` per slice."""
    assert run.sha1 is not None
    rt = run.rt
    settings = rt.settings
    lease_ttl = visibility_timeout_s(settings)
    token = take_lease(rt.redis, run.doc_id, ttl_s=lease_ttl)
    if token is None:
        run.running(stage="waiting for another worker")
        raise task.retry(countdown=settings.lock_ttl_s, max_retries=None)
    size = settings.fanout_embed_chunks
    slices = [chunks[i : i + size] for i in range(0, len(chunks), size)]
    base = _base(run.doc_id, run.sha1)
    previous = rt.pipeline.ledger.get(run.doc_id)  # type: ignore[attr-defined]
    keep = [chunk_uuid(c.id) for c in chunks]
    ttl = settings.job_ttl_s
    pipe = rt.redis.pipeline(transaction=True)
    pipe.delete(f"{base}:done", f"{base}:counts")
    for i, part in enumerate(slices):
        pipe.set(f"{base}:slice:{i}", zlib.compress(_CHUNKS.dump_json(part)), ex=ttl)
    pipe.set(f"{base}:keep", zlib.compress(_UUIDS.dump_json(keep)), ex=ttl)
    pipe.hset(
        f"{base}:meta",
        mapping={"token": token, "pages": pages, "existed": int(previous is not None)},
    )
    pipe.expire(f"{base}:meta", ttl)
    pipe.execute()
    run.running(stage=f"embedding {len(slices)} slices", progress=0.5)
    for i in range(len(slices)):
        embed_slice.apply_async(
            kwargs={
                "job_id": run.job_id,
                "source": run.source,
                "doc_id": run.doc_id,
                "sha1": run.sha1,
                "index": i,
                "slices": len(slices),
            }
        )
    return {"doc_id": run.doc_id, "status": "embedding", "slices": len(slices)}


def _meta(run: DocRun, sha1: str) -> dict[str, str]:
    raw = run.rt.redis.hgetall(f"{_base(run.doc_id, sha1)}:meta")
    return {as_text(k): as_text(v) for k, v in raw.items()}


def _failed_drops_lease(run: DocRun, result: dict[str, Any], token: str | None) -> dict[str, Any]:
    if result.get("status") == "failed" and token:
        drop_lease(run.rt.redis, run.doc_id, token)
    return result


@app.task(bind=True, base=DocTask, name="chunkweave.embed_slice", max_retries=None)
def embed_slice(
    self: Task, *, job_id: str, source: str, doc_id: str, sha1: str, index: int, slices: int
) -> dict[str, Any]:
    """Embed and upsert one slice of a fanned-out document's chunks."""
    rt = get_runtime()
    settings = rt.settings
    run = DocRun(rt, job_id=job_id, source=source, doc_id=doc_id)
    run.sha1, run.part = sha1, f"slice{index}"
    base = _base(doc_id, sha1)
    token = _meta(run, sha1).get("token")

    def body() -> dict[str, Any]:
        lease_ttl = visibility_timeout_s(settings)
        if not token or not hold_lease(rt.redis, doc_id, token, ttl_s=lease_ttl):
            return run.failed("lease_lost", f"{source}: write lease expired during fan-out")
        run.attempts = count_attempt(
            rt.redis, doc_id, sha1, ttl_s=settings.job_ttl_s, part=run.part
        )
        if run.attempts > settings.max_attempts:
            return run.failed("poison", f"{source}: chunk slice {index} killed its worker")
        blob = rt.redis.get(f"{base}:slice:{index}")
        if not isinstance(blob, bytes):
            return run.failed("internal", f"{source}: fan-out slice expired before embedding")
        result = rt.pipeline.upsert_chunks(_CHUNKS.validate_json(zlib.decompress(blob)))  # type: ignore[attr-defined]
        pipe = rt.redis.pipeline(transaction=True)
        pipe.hincrby(f"{base}:counts", "added", result.added)
        pipe.hincrby(f"{base}:counts", "unchanged", result.unchanged)
        pipe.sadd(f"{base}:done", index)
        pipe.scard(f"{base}:done")
        pipe.expire(f"{base}:done", settings.job_ttl_s)
        pipe.expire(f"{base}:counts", settings.job_ttl_s)
        _, _, added, count, _, _ = pipe.execute()
        run.clear_attempts()
        hold_lease(rt.redis, doc_id, token, ttl_s=lease_ttl)
        if added and int(count) == slices:
            commit_document.apply_async(
                kwargs={"job_id": job_id, "source": source, "doc_id": doc_id, "sha1": sha1}
            )
        run.running(stage=f"embedded {count}/{slices} slices", progress=0.5 + count / slices / 2)
        return {"doc_id": doc_id, "status": "slice_written", "index": index}

    return _failed_drops_lease(run, run_guarded(self, run, body), token)


@app.task(bind=True, base=DocTask, name="chunkweave.commit_document", max_retries=None)
def commit_document(
    self: Task, *, job_id: str, source: str, doc_id: str, sha1: str
) -> dict[str, Any]:
    """Prune stale chunks, record the ledger entry, release the lease, record done."""
    rt = get_runtime()
    run = DocRun(rt, job_id=job_id, source=source, doc_id=doc_id)
    run.sha1 = sha1
    base = _base(doc_id, sha1)
    meta = _meta(run, sha1)
    token = meta.get("token")

    def body() -> dict[str, Any]:
        lease_ttl = visibility_timeout_s(rt.settings)
        if not token or not hold_lease(rt.redis, doc_id, token, ttl_s=lease_ttl):
            return run.failed("lease_lost", f"{source}: write lease expired during fan-out")
        blob = rt.redis.get(f"{base}:keep")
        if not isinstance(blob, bytes):
            return run.failed("internal", f"{source}: fan-out state expired before commit")
        keep = set(_UUIDS.validate_json(zlib.decompress(blob)))
        pipeline: Any = rt.pipeline
        deleted = pipeline.prune(doc_id, keep)
        pages = int(meta.get("pages", 0))
        pipeline.record_ok(doc_id, source, sha1, pages, len(keep))
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
        drop_lease(rt.redis, doc_id, token)
        result = run.done(outcome)
        rt.redis.delete(*(k for k in rt.redis.scan_iter(f"{base}:*")))
        return result

    return _failed_drops_lease(run, run_guarded(self, run, body), token)

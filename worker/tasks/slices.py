"""Second half of a fan-out: one document write spread over many workers.

After the parts of a large PDF are joined and chunked (:mod:`.fanout`), a document
with more than ``fanout_embed_chunks`` chunks is written by one document write
(``IngestPipeline.begin``) whose parts are slices of that many chunks. Each slice is
an ``embed_slice`` task that resumes the write and writes its slice (only chunks not
stored yet are embedded); the task that completes the set of slices (:mod:`.parts`)
enqueues ``commit_document``, which resumes the write with what every slice wrote
and commits it: stale chunks pruned, then the ledger entry. The same
begin -> write -> commit as a single-task ingest, so the document is never without
chunks.

Chunks travel as the slices' payloads in Redis (under ``keys.fanout_slices``), never
as task payloads; vectors never touch Redis. Next to them: the write's plan (the
``meta`` hash: ``pages``, ``existed``, the lease ``token``, the number of ``slices``)
and ``keep``, the UUIDs of all the document's chunks, which the commit keeps. The
document's write lock is held as a *lease* for the whole write (taken by the joiner,
extended by each slice, released by the commit), so no other writer interleaves
with the slices.
"""

from __future__ import annotations

from typing import Any

from celery import Task
from pydantic import TypeAdapter

from chunkweave.chunking.models import Chunk
from chunkweave.parsers.document import ParsedDocument
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import WritePlan
from chunkweave.worker import keys
from chunkweave.worker.celery_app import visibility_timeout_s
from chunkweave.worker.locks import drop_lease, hold_lease, take_lease
from chunkweave.worker.tasks.base import doc_task
from chunkweave.worker.tasks.parts import Parts
from chunkweave.worker.tasks.recorder import DocRun

_CHUNKS = TypeAdapter(list[Chunk])
_UUIDS = TypeAdapter(list[str])


def _slices(run: DocRun, sha1: str) -> Parts:
    """Return the chunk slices of this version of the run's document."""
    ttl_s = run.rt.settings.tasks.job_ttl_s
    return Parts(run.rt.redis, keys.fanout_slices(run.doc_id, sha1), kind="slice", ttl_s=ttl_s)


def _plan(run: DocRun, sha1: str, meta: dict[str, str]) -> WritePlan:
    """Return the plan of the write the slices belong to (from the meta hash)."""
    return WritePlan(
        doc_id=run.doc_id,
        source=run.source,
        doc_sha1=sha1,
        pages=int(meta.get("pages", 0)),
        existed=meta.get("existed") == "1",
        metadata=run.metadata,
        tenant=run.tenant,
    )


def start(run: DocRun, task: Task, doc: ParsedDocument, chunks: list[Chunk]) -> dict[str, Any]:
    """Take the lease, begin the write, store its slices and enqueue one ``embed_slice`` each."""
    assert run.sha1 is not None
    rt = run.rt
    settings = rt.settings
    token = take_lease(rt.redis, run.doc_id, ttl_s=visibility_timeout_s(settings))
    if token is None:
        run.running(stage="waiting for another worker")
        raise task.retry(countdown=settings.tasks.lock_ttl_s, max_retries=None)
    size = settings.fanout.embed_chunks
    parts = [chunks[i : i + size] for i in range(0, len(chunks), size)]
    plan = rt.pipeline.begin(doc, source=run.source, doc_id=run.doc_id, **run.carried()).plan
    keep = [chunk_uuid(c.id) for c in chunks]
    scratch = _slices(run, run.sha1)
    pipe = rt.redis.pipeline(transaction=True)
    scratch.reset(pipe)
    for i, part in enumerate(parts):
        scratch.put(pipe, i, _CHUNKS.dump_json(part))
    scratch.put_extra(pipe, "keep", _UUIDS.dump_json(keep))
    existed = int(plan.existed)
    scratch.put_meta(
        pipe, {"token": token, "pages": plan.pages, "existed": existed, "slices": len(parts)}
    )
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
                **run.carried(),
            }
        )
    return {"doc_id": run.doc_id, "status": "embedding", "slices": len(parts)}


def _hold(run: DocRun, scratch: Parts) -> dict[str, str] | None:
    """Return the fan-out's meta hash if this run still holds the write lease, else None.

    Registers the lease's release for when the run ends failed.
    """
    meta = scratch.meta()
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
    run.sha1, run.part = sha1, f"slice{index}"
    scratch = _slices(run, sha1)
    meta = _hold(run, scratch)
    if meta is None:
        return run.failed(ErrorCode.LEASE_LOST, f"{run.source}: write lease expired during fan-out")
    if not run.count_attempt():
        return run.poisoned(f"chunk slice {index}")
    payload = scratch.get(index)
    if payload is None:
        return run.failed(
            ErrorCode.INTERNAL, f"{run.source}: fan-out slice expired before embedding"
        )
    write = rt.pipeline.resume(_plan(run, sha1, meta))
    written = write.write(_CHUNKS.validate_json(payload))
    counts = {"added": written.added, "unchanged": written.unchanged}
    completed, count = scratch.finish(index, slices, counts=counts)
    run.clear_attempts()
    hold_lease(rt.redis, run.doc_id, meta["token"], ttl_s=visibility_timeout_s(rt.settings))
    if completed:
        commit_document.apply_async(
            kwargs={
                "job_id": run.job_id,
                "source": run.source,
                "doc_id": run.doc_id,
                "sha1": sha1,
                **run.carried(),
            }
        )
    run.running(stage=f"embedded {count}/{slices} slices", progress=0.5 + count / slices / 2)
    return {"doc_id": run.doc_id, "status": "slice_written", "index": index}


@doc_task("chunkweave.commit_document")
def commit_document(task: Task, run: DocRun, *, sha1: str) -> dict[str, Any]:
    """Commit the write (prune stale chunks, record the ledger entry), release the lease."""
    rt = run.rt
    run.sha1 = sha1
    scratch = _slices(run, sha1)
    meta = _hold(run, scratch)
    if meta is None:
        return run.failed(ErrorCode.LEASE_LOST, f"{run.source}: write lease expired during fan-out")
    keep = scratch.get_extra("keep")
    if keep is None:
        return run.failed(ErrorCode.INTERNAL, f"{run.source}: fan-out state expired before commit")
    counts = scratch.counts()
    write = rt.pipeline.resume(
        _plan(run, sha1, meta),
        added=counts.get("added", 0),
        unchanged=counts.get("unchanged", 0),
        uuids=_UUIDS.validate_json(keep),
    )
    outcome = write.commit()
    drop_lease(rt.redis, run.doc_id, meta["token"])
    result = run.done(outcome)
    scratch.clear(int(meta.get("slices", 0)), "keep")
    return result

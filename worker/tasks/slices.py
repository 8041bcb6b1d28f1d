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
document's write lock is held as a *lease* for the whole write, so no other writer
interleaves with the slices: the joiner takes it in its own name (a dead joiner's
lease is broken at once, as a dead holder's lock is), then passes it to the write's
token once the plan is stored; each slice extends it, the commit releases it, and a
document the reconciler fails as ``poison`` has it dropped.

Every slice and the commit are owned by the job record like whole documents
(:func:`~chunkweave.worker.tasks.base.send_step`): one whose worker dies is sent again
by the reconciler and resumes the same write.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
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
from chunkweave.worker.heartbeat import worker_id
from chunkweave.worker.jobs import as_text
from chunkweave.worker.locks import drop_lease, hold_lease, pass_lease, take_lease
from chunkweave.worker.tasks.base import doc_task, hand_back, send_step, step_kwargs
from chunkweave.worker.tasks.parts import Parts
from chunkweave.worker.tasks.recorder import DocRun

log = logging.getLogger(__name__)
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
    ttl_s = visibility_timeout_s(settings)
    scratch = _slices(run, run.sha1)
    if (resumed := _resume(run, scratch)) is not None:
        return resumed
    joiner = take_lease(
        rt.redis, run.doc_id, ttl_s=ttl_s, worker=worker_id(), task_id=task.request.id or ""
    )
    if joiner is None:
        hand_back(task, run, stage="waiting for another worker")
        raise task.retry(countdown=settings.tasks.lock_ttl_s, max_retries=None)
    size = settings.fanout.embed_chunks
    parts = [chunks[i : i + size] for i in range(0, len(chunks), size)]
    plan = rt.pipeline.begin(doc, source=run.source, doc_id=run.doc_id, **run.carried()).plan
    keep = [chunk_uuid(c.id) for c in chunks]
    pipe = rt.redis.pipeline(transaction=True)
    scratch.reset(pipe)
    for i, part in enumerate(parts):
        scratch.put(pipe, i, _CHUNKS.dump_json(part))
    scratch.put_extra(pipe, "keep", _UUIDS.dump_json(keep))
    existed = int(plan.existed)
    token = uuid.uuid4().hex
    scratch.put_meta(
        pipe, {"token": token, "pages": plan.pages, "existed": existed, "slices": len(parts)}
    )
    pipe.execute()
    # The lease passes from this task (named, so it is broken if this worker dies
    # before here) to the write, which every slice holds by the token in the plan.
    if not pass_lease(rt.redis, run.doc_id, joiner, token, ttl_s=ttl_s):
        return run.failed(ErrorCode.LEASE_LOST, f"{run.source}: write lease lost during fan-out")
    run.running(stage=f"embedding {len(parts)} slices", progress=0.5)
    _send_slices(run, range(len(parts)), len(parts))
    return {"doc_id": run.doc_id, "status": "embedding", "slices": len(parts)}


def _resume(run: DocRun, scratch: Parts) -> dict[str, Any] | None:
    """Carry on this version's write if it began already (its joiner died sending slices).

    The lease then holds the token of the stored plan: the slices not finished are
    sent again (a duplicate of one still queued only writes what it wrote), and the
    commit if none is left. None when no write of this version holds the lease.
    """
    meta = scratch.meta()
    token = meta.get("token")
    held = run.rt.redis.get(keys.lock(run.doc_id))
    if not token or held is None or as_text(held) != token:
        return None
    count = int(meta.get("slices", 0))
    unfinished = [i for i in range(count) if i not in scratch.finished()]
    if unfinished:
        _send_slices(run, unfinished, count)
    else:
        send_step(run, commit_document, step_kwargs(run, run.sha1 or ""), once=True)
    log.info("%s: resumed its write, %d slices sent again", run.source, len(unfinished))
    return {"doc_id": run.doc_id, "status": "embedding", "slices": count}


def _send_slices(run: DocRun, indexes: Iterable[int], count: int) -> None:
    for i in indexes:
        send_step(run, embed_slice, step_kwargs(run, run.sha1 or "", index=i, slices=count))


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
    _, count = scratch.finish(index, slices, counts=counts)
    run.clear_attempts()
    hold_lease(rt.redis, run.doc_id, meta["token"], ttl_s=visibility_timeout_s(rt.settings))
    if count == slices:  # sent once, whichever run of a slice sees the set complete
        send_step(run, commit_document, step_kwargs(run, sha1), once=True)
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

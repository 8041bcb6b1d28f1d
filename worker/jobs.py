"""Job and per-document state in Redis: any process (API replica, CLI, worker) reads it.

Layout (all keys expire ``ttl_s`` after the last write to the job):

- ``cw:job:<id>`` hash: ``created_at``, ``total``, ``sealed``, ``webhook_url``, ``finished_at``,
  ``tenant`` (the tenant every document of the job belongs to, if any).
- ``cw:job:<id>:docs`` hash: ``doc_id`` -> :class:`DocState` JSON.
- ``cw:job:<id>:<status>`` sets of ``doc_id`` (one per status): a document is in exactly
  one of them; transitions move it in one MULTI/EXEC, so counts are ``SCARD`` and a
  duplicate delivery re-applying a transition cannot double-count.
- ``cw:jobs`` sorted set of job ids by creation time (listing); ``cw:jobs:active`` the
  ids of jobs not finished yet.
- ``cw:job:<id>:owners``, ``:tasks``, ``:requeues``: who holds each unfinished document
  and what task processes it (:mod:`.ownership`).

A job is *finished* once it is sealed (every document added) and every document is
``done`` or ``failed``. Exactly one caller observes the transition to finished
(``SET NX`` on ``cw:job:<id>:finished``); that caller fires the completion webhook.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterable
from typing import Literal, cast

import redis
from pydantic import BaseModel, ConfigDict

from chunkweave.worker import keys
from chunkweave.worker.ownership import doc_owner_label

DocStatus = Literal["queued", "running", "done", "failed"]
JobStatus = Literal["queued", "running", "done", "failed"]
#: What a task does to a document: (re-)ingest it, or remove it from the store.
Action = Literal["ingest", "delete"]
DOC_STATUSES: tuple[DocStatus, ...] = ("queued", "running", "done", "failed")
JOBS_INDEX = keys.JOBS


class DocState(BaseModel):
    """One document of a job, as the API and ``chunkweave status`` show it.

    ``outcome`` is the pipeline's verdict once done (added/updated/unchanged/deleted);
    ``error_code`` is a stable reason (a :class:`~chunkweave.parsers.errors.ErrorCode`
    value) and ``error`` its one-line message.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str
    source: str
    status: DocStatus
    action: Action = "ingest"
    stage: str | None = None
    progress: float | None = None
    outcome: str | None = None
    pages: int = 0
    chunks_added: int = 0
    chunks_unchanged: int = 0
    chunks_deleted: int = 0
    error_code: str | None = None
    error: str | None = None
    #: The parser's warnings (pages OCRed or dropped, a repaired file).
    warnings: tuple[str, ...] = ()
    attempts: int = 0
    #: Seconds the task took, and per stage where the time went (``fetch``, ``lock``,
    #: ``state``, then the pipeline's ``check``, ``parse``, ``chunk``, ``embed``,
    #: ``upsert``, ``prune``).
    seconds: float | None = None
    timings: dict[str, float] | None = None
    queued_at: float | None = None
    started_at: float | None = None
    updated_at: float = 0.0
    #: Who holds the document while queued or running: ``worker task-id`` of the worker
    #: that received its task, ``queue task-id`` while its message waits in the queue, or
    #: a fanned-out PDF's steps' (``w1 part3; queue part4``); read, never stored.
    owner: str | None = None


class JobState(BaseModel):
    """A job's summary (and its documents when asked for)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    status: JobStatus
    created_at: float
    finished_at: float | None = None
    total: int
    queued: int
    running: int
    done: int
    failed: int
    webhook_url: str | None = None
    #: The tenant the job's documents belong to (``None``: no tenant).
    tenant: str | None = None
    docs: tuple[DocState, ...] | None = None

    def shown(self) -> JobState:
        """Return the job as it may be shown to a caller: the webhook URL redacted.

        A webhook URL may carry its receiver's token in its path or query; every
        surface that prints a job (API, CLI, MCP) shows this form.
        """
        from chunkweave.worker.webhook import redact

        return self.model_copy(update={"webhook_url": redact(self.webhook_url)})


def as_text(value: object) -> str:
    """Decode a Redis reply item (bytes from a client without ``decode_responses``)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _job_key(job_id: str) -> str:
    return keys.job(job_id)


class JobStore:
    """Reads and writes job state. Cheap to create; share one per process."""

    def __init__(self, client: redis.Redis, *, ttl_s: int) -> None:
        self.r = client
        self.ttl_s = ttl_s

    def create(self, *, webhook_url: str | None = None, tenant: str | None = None) -> str:
        """Open a new, unsealed, empty job (of ``tenant``) and return its id."""
        job_id = uuid.uuid4().hex
        now = time.time()
        key = _job_key(job_id)
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, mapping={"created_at": now, "total": 0, "sealed": 0})
        if webhook_url:
            pipe.hset(key, "webhook_url", webhook_url)
        if tenant:
            pipe.hset(key, "tenant", tenant)
        pipe.expire(key, self.ttl_s)
        pipe.zadd(JOBS_INDEX, {job_id: now})
        pipe.sadd(keys.ACTIVE_JOBS, job_id)
        pipe.execute()
        return job_id

    def add_docs(self, job_id: str, docs: Iterable[DocState]) -> list[DocState]:
        """Add documents as ``queued``; returns those that were new to this job.

        A document already in the job (same ``doc_id``) is not added twice, so
        enqueuing the same file twice in one job yields one task. Three round trips
        for the whole batch, whatever its size (callers pass a few hundred at once).
        """
        key = _job_key(job_id)
        now = time.time()
        batch = [d.model_copy(update={"queued_at": now, "updated_at": now}) for d in docs]
        if not batch:
            return []
        pipe = self.r.pipeline(transaction=False)
        for doc in batch:
            pipe.hsetnx(f"{key}:docs", doc.doc_id, doc.model_dump_json())
        added = [doc for doc, new in zip(batch, pipe.execute(), strict=True) if new]
        if added:
            pipe = self.r.pipeline(transaction=True)
            pipe.sadd(f"{key}:queued", *(doc.doc_id for doc in added))
            pipe.hincrby(key, "total", len(added))
            pipe.execute()
        self._touch(job_id)
        return added

    def seal(self, job_id: str) -> bool:
        """Mark that no more documents will be added; True if that finished the job."""
        self.r.hset(_job_key(job_id), "sealed", 1)
        return self._maybe_finish(job_id)

    def set_doc(self, job_id: str, state: DocState) -> bool:
        """Record ``state`` for its document; True if this call finished the job.

        Final states are sticky: once a document is ``done`` or ``failed`` a late
        ``running`` (a redelivered duplicate) does not move it back. ``started_at``
        is kept from the first non-queued state. The read and the write are one
        optimistic transaction (``WATCH`` on the documents), so two tasks of one
        document racing (a duplicate delivery finishing while the other starts) can
        never move a final document back nor count it in two statuses. A final state
        also drops the document's owner record (:mod:`.ownership`).
        """
        key = _job_key(job_id)
        written: list[DocState] = []

        def apply(pipe: redis.client.Pipeline) -> None:
            written.clear()
            now = time.time()
            raw = pipe.hget(f"{key}:docs", state.doc_id)
            current = DocState.model_validate_json(raw) if raw is not None else None
            if (
                current is not None
                and current.status in ("done", "failed")
                and state.status in ("queued", "running")
            ):
                return
            # queued_at/started_at: when it was enqueued and when work on it first began
            # (queue latency = started_at - queued_at), kept across later states.
            started = current.started_at if current is not None else None
            if started is None and state.status != "queued":
                started = now
            queued = current.queued_at if current is not None else None
            new = state.model_copy(
                update={
                    "updated_at": now,
                    "started_at": started,
                    "queued_at": queued,
                    "owner": None,  # read from the owner records, never stored
                }
            )
            pipe.multi()
            for status in DOC_STATUSES:
                pipe.srem(f"{key}:{status}", new.doc_id)
            pipe.sadd(f"{key}:{new.status}", new.doc_id)
            pipe.hset(f"{key}:docs", new.doc_id, new.model_dump_json())
            if new.status in ("done", "failed"):
                pipe.hdel(f"{key}:owners", new.doc_id)
            written.append(new)

        self.r.transaction(apply, f"{key}:docs")
        if not written:
            return False
        self._touch(job_id)
        if written[0].status in ("done", "failed"):
            return self._maybe_finish(job_id)
        return False

    def get_doc(self, job_id: str, doc_id: str) -> DocState | None:
        """Return the stored state of one document of a job, or None."""
        raw = self.r.hget(f"{_job_key(job_id)}:docs", doc_id)
        return None if raw is None else DocState.model_validate_json(raw)

    def get(self, job_id: str, *, with_docs: bool = False) -> JobState | None:
        """Return the job's summary (and documents when ``with_docs``), or None."""
        (job,) = self._summaries([job_id])
        if job is None or not with_docs:
            return job
        raw = self.r.hgetall(f"{_job_key(job_id)}:docs")
        held = {
            as_text(k): as_text(v) for k, v in self.r.hgetall(f"{_job_key(job_id)}:owners").items()
        }
        docs = sorted(
            (_with_owner(DocState.model_validate_json(v), held) for v in raw.values()),
            key=lambda d: d.source,
        )
        return job.model_copy(update={"docs": tuple(docs)})

    def sources(self, job_ids: list[str], *, per_job: int = 3) -> dict[str, list[str]]:
        """Return a few of each job's document sources (``HSCAN``: bounded for any job size).

        For lists that name jobs by what they hold; one round trip for all of them.
        """
        pipe = self.r.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hscan(f"{_job_key(job_id)}:docs", 0, count=per_job)
        out: dict[str, list[str]] = {}
        for job_id, (_cursor, found) in zip(job_ids, pipe.execute(), strict=True):
            docs = (DocState.model_validate_json(v) for v in found.values())
            out[job_id] = sorted(d.source for d in docs)[:per_job]
        return out

    def _summaries(self, job_ids: list[str]) -> list[JobState | None]:
        """Read several jobs' summaries in one round trip (None for an expired job)."""
        pipe = self.r.pipeline(transaction=False)
        for job_id in job_ids:
            key = _job_key(job_id)
            pipe.hgetall(key)
            for status in DOC_STATUSES:
                pipe.scard(f"{key}:{status}")
        replies = pipe.execute()
        step = 1 + len(DOC_STATUSES)
        out: list[JobState | None] = []
        for i, job_id in enumerate(job_ids):
            head, *counts = replies[i * step : (i + 1) * step]
            if not head:
                out.append(None)
                continue
            fields = {as_text(k): as_text(v) for k, v in head.items()}
            n = dict(zip(DOC_STATUSES, (int(c) for c in counts), strict=True))
            finished = fields.get("finished_at")
            out.append(
                JobState(
                    id=job_id,
                    status=_job_status(n, finished is not None),
                    created_at=float(fields["created_at"]),
                    finished_at=float(finished) if finished else None,
                    total=int(fields.get("total", 0)),
                    webhook_url=fields.get("webhook_url"),
                    tenant=fields.get("tenant"),
                    **n,
                )
            )
        return out

    def page(
        self,
        *,
        status: JobStatus | None = None,
        limit: int = 50,
        cursor: float | None = None,
        tenants: frozenset[str] | None = None,
    ) -> tuple[list[JobState], float | None]:
        """One page of jobs, newest first, and the cursor of the next page (None at the end).

        ``cursor`` is the creation time the page starts below (exclusive). Each call reads
        at most ``4 * limit`` jobs of the index in two round trips, whatever its size:
        with a ``status`` filter a page may hold fewer than ``limit`` jobs and still have
        a next one. ``tenants``: only jobs of one of these tenants (``None``: any job).
        """
        if cursor is not None and not math.isfinite(cursor):
            raise ValueError(f"a page cursor is a creation time, not {cursor!r}")
        top = "+inf" if cursor is None else f"({cursor!r}"
        scan = 4 * limit if status is not None or tenants is not None else limit
        rows = cast(
            list[tuple[bytes, float]],
            self.r.zrevrangebyscore(JOBS_INDEX, top, "-inf", start=0, num=scan, withscores=True),
        )
        ids = [as_text(job_id) for job_id, _ in rows]
        jobs: list[JobState] = []
        expired: list[str] = []
        next_cursor: float | None = None
        summaries = self._summaries(ids)
        for job_id, (_, score), job in zip(ids, rows, summaries, strict=True):
            next_cursor = float(score)
            if job is None:
                expired.append(job_id)
            elif (status is None or job.status == status) and (
                tenants is None or job.tenant in tenants
            ):
                jobs.append(job)
                if len(jobs) >= limit:
                    break
        if expired:
            self.r.zrem(JOBS_INDEX, *expired)
        if len(rows) < scan and (not jobs or len(jobs) < limit):
            next_cursor = None  # the index ended inside this page
        return jobs, next_cursor

    def list(self, *, status: JobStatus | None = None, limit: int = 50) -> list[JobState]:
        """Most recent jobs first, optionally only those in ``status`` (first page only)."""
        return self.page(status=status, limit=limit)[0]

    def _maybe_finish(self, job_id: str) -> bool:
        key = _job_key(job_id)
        pipe = self.r.pipeline(transaction=True)
        pipe.hmget(key, "sealed", "total")
        pipe.scard(f"{key}:done")
        pipe.scard(f"{key}:failed")
        (sealed, total), done, failed = pipe.execute()
        if sealed != b"1" or int(total or 0) != int(done) + int(failed):
            return False
        if not self.r.set(f"{key}:finished", 1, nx=True, ex=self.ttl_s):
            return False
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, "finished_at", time.time())
        pipe.srem(keys.ACTIVE_JOBS, job_id)
        pipe.execute()
        return True

    def active(self) -> tuple[str, ...]:
        """Return the ids of the jobs not finished yet (forgetting those that expired)."""
        ids = [as_text(j) for j in self.r.smembers(keys.ACTIVE_JOBS)]
        pipe = self.r.pipeline(transaction=False)
        for job_id in ids:
            pipe.exists(_job_key(job_id))
        live = pipe.execute() if ids else []
        expired = [j for j, alive in zip(ids, live, strict=True) if not alive]
        if expired:
            self.r.srem(keys.ACTIVE_JOBS, *expired)
        return tuple(j for j, alive in zip(ids, live, strict=True) if alive)

    def doc_ids(self, job_id: str, status: DocStatus) -> set[str]:
        """Return the ids of a job's documents in ``status``."""
        return {as_text(d) for d in self.r.smembers(f"{_job_key(job_id)}:{status}")}

    def _touch(self, job_id: str) -> None:
        key = _job_key(job_id)
        pipe = self.r.pipeline(transaction=False)
        owned = (":owners", ":tasks", ":requeues")
        for suffix in ("", ":docs", *owned, *(f":{s}" for s in DOC_STATUSES)):
            pipe.expire(f"{key}{suffix}", self.ttl_s)
        pipe.execute()


def _with_owner(doc: DocState, held: dict[str, str]) -> DocState:
    label = doc_owner_label(doc.doc_id, held)
    if label is None or doc.status not in ("queued", "running"):
        return doc
    return doc.model_copy(update={"owner": label})


def _job_status(counts: dict[DocStatus, int], finished: bool) -> JobStatus:
    if finished:
        return "failed" if counts["failed"] else "done"
    if counts["running"] or counts["done"] or counts["failed"]:
        return "running"
    return "queued"

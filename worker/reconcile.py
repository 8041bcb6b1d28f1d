"""The reconciler: the job record, not the broker's memory, decides what still has to run.

One runs in ``serve`` and in every worker's main process; one at a time is active
(``cw:reconcile:lock:<queue>``: each service sharing a Redis looks after the jobs
sent to its own queue). Every ``reconcile.interval_s`` the active one reads the
unfinished jobs' owner records (:mod:`.ownership`) and the workers' heartbeats
(:mod:`.heartbeat`) and requeues a document, or one step of a fanned-out document
(a page-range part, the join, a chunk slice, the commit: each owned as a document is),
(:mod:`.requeue`):

- whose owner is gone: no heartbeat for ``reconcile.heartbeat_ttl_s`` (a worker killed as a
  whole, a lost host) - its message, if still in ``unacked``, would otherwise wait
  out the visibility timeout (21 minutes with the default time limits);
- whose owner lives but no longer holds its task, seen in a heartbeat written after
  the claim and past ``reconcile.grace_s`` (its running task was cancelled when the
  broker connection dropped; its pool child died), and with no message for it left in
  the queue;
- that is queued (or handed back for a retry) with no message anywhere - not in the
  queue, not unacknowledged, not held by a live worker (an audit of the broker:
  after every Redis restart, seen as a new ``run_id``, and every
  ``reconcile.audit_s``).

Nothing is judged until Redis has answered for one heartbeat TTL (after the
reconciler starts, after an outage, after a restart), so workers that were merely
cut off have beaten again first. Requeuing re-sends the task with the same arguments:
tasks are idempotent (content-derived chunk ids), and the document's lock, whose
dead holder is broken at once, keeps one document from running twice at once.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import redis

from chunkweave.worker import keys
from chunkweave.worker.broker import BrokerView, DocKey, read_broker, read_unacked
from chunkweave.worker.heartbeat import Beat, read_beats
from chunkweave.worker.jobs import DocState, JobStore, as_text
from chunkweave.worker.locks import break_lock, extend_lock
from chunkweave.worker.ownership import Owner, doc_of_field, owners, owners_key
from chunkweave.worker.requeue import Requeuer, Send, app_sender
from chunkweave.worker.settings import Settings

log = logging.getLogger(__name__)


def owner_lost(
    owner: Owner, beats: Mapping[str, Beat], *, now: float, grace_s: float
) -> str | None:
    """Return why ``owner`` no longer holds its document, or None while it may.

    A queue marker (no worker) is judged by the audit, not here.
    """
    if not owner.worker:
        return None
    beat = beats.get(owner.worker)
    if beat is None:
        return f"its worker {owner.worker} is gone (no heartbeat)"
    if owner.task_id in beat.tasks:
        return None
    # The beat must postdate the claim (it lists what the worker held after receiving
    # the task) and the claim must be older than the grace.
    if beat.at <= owner.since + 1.0 or now - owner.since < grace_s:
        return None
    return f"its worker {owner.worker} no longer holds task {owner.task_id}"


def message_lost(
    key: DocKey, owner: Owner | None, since: float, view: BrokerView, *, now: float, grace_s: float
) -> bool:
    """Tell whether a document meant to be in the queue has no message anywhere.

    ``owner`` is its record (None or a queue marker: nobody claimed it); ``since`` when
    it was last queued. A document claimed by a worker is not the audit's business.
    """
    if owner is not None and owner.worker:
        return False
    return now - since >= grace_s and not view.has(key)


@dataclass(frozen=True)
class Verdict:
    """What to do with a document whose owner was lost."""

    action: str  # "requeue" | "adopt" (a message waits in the queue: record it) | "keep"
    task_id: str = ""


def after_loss(key: DocKey, owner: Owner, view: BrokerView, beats: Mapping[str, Beat]) -> Verdict:
    """Decide, once the broker is read, what to do with a document whose owner was lost."""
    holders = view.queued.get(key, set()) | {t for _, t in view.unacked.get(key, [])}
    if any(t in b.tasks for b in beats.values() for t in holders):
        return Verdict("keep")  # a live worker holds a message of it: it will claim it
    if key in view.queued:
        return Verdict("adopt", sorted(view.queued[key])[0])
    return Verdict("requeue")


class Reconciler:
    """Runs reconciler passes in a daemon thread while it holds the reconciler lock."""

    def __init__(
        self,
        settings: Settings,
        *,
        client: redis.Redis | None = None,
        send: Send,
    ) -> None:
        from chunkweave.worker.runtime import redis_url

        self.settings = settings
        # Bounded calls: a reconciler cut from Redis never holds up its process's stop.
        self.r = client or redis.Redis.from_url(
            redis_url(settings), socket_timeout=5, socket_connect_timeout=2
        )
        self.jobs = JobStore(self.r, ttl_s=settings.tasks.job_ttl_s)
        self.requeuer = Requeuer(settings, self.r, self.jobs, send=send)
        self._on_stop: Callable[[], None] | None = None
        self.me = uuid.uuid4().hex
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: Judge nothing before this time (monotonic): Redis must have answered a while.
        self._trusted_at: float | None = None
        self._audit_due = False
        self._last_audit = time.monotonic()
        self._run_id: str | None = None

    def start(self) -> Reconciler:
        """Start the background thread."""
        self._thread = threading.Thread(target=self._loop, name="cw-reconciler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and hand the lock on, waiting at most about 1.5 s in all.

        A pass stuck on an unreachable Redis is left to its daemon thread; the lock is
        released in the background too, else it expires within 3 passes.
        """
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        release = threading.Thread(target=self._release, name="cw-reconciler-stop", daemon=True)
        release.start()
        release.join(timeout=0.5)

    def _release(self) -> None:
        with contextlib.suppress(redis.RedisError, OSError):
            break_lock(self.r, keys.reconcile_lock(self.settings.tasks.queue), self.me)
        if self._on_stop is not None:
            with contextlib.suppress(Exception):
                self._on_stop()

    def _loop(self) -> None:
        while not self._stop.wait(self.settings.reconcile.interval_s):
            try:
                if self._lead():
                    self.run_pass()
            except (redis.RedisError, OSError) as err:
                if self._trusted_at is not None:
                    log.warning("reconciler: Redis unreachable (%s); judging paused", err)
                self._trusted_at = None
            except Exception:  # noqa: BLE001 - one bad pass never stops reconciling
                log.exception("reconciler pass failed")

    def _lead(self) -> bool:
        ttl_ms = int(max(3 * self.settings.reconcile.interval_s, 5.0) * 1000)
        lock = keys.reconcile_lock(self.settings.tasks.queue)
        if self.r.set(lock, self.me, nx=True, px=ttl_ms):
            return True
        return extend_lock(self.r, lock, self.me, ttl_ms)

    def _judging(self) -> bool:
        """Note restarts and outages; True once Redis has answered for a heartbeat TTL."""
        now = time.monotonic()
        run_id = str(self.r.info("server").get("run_id", ""))
        if run_id != self._run_id:
            field = f"run_id:{self.settings.tasks.queue}"  # each service notices a restart itself
            seen = self.r.hget(keys.RECONCILE_STATE, field)
            if seen is not None and as_text(seen) != run_id:
                log.warning("reconciler: Redis restarted; auditing queued documents")
                self._audit_due = True
                self._trusted_at = None
            self.r.hset(keys.RECONCILE_STATE, field, run_id)
            self._run_id = run_id
        if self._trusted_at is None:
            self._trusted_at = now + self.settings.reconcile.heartbeat_ttl_s
        audit_every = self.settings.reconcile.audit_s
        if audit_every and now - self._last_audit >= audit_every:
            self._audit_due = True
        return now >= self._trusted_at

    def run_pass(self) -> int:
        """Run one pass; return how many documents were requeued or failed."""
        if not self._judging():
            return 0
        s = self.settings
        now = time.time()
        beats, _gone = read_beats(self.r)
        lost: dict[DocKey, tuple[Owner, str]] = {}
        waiting: dict[DocKey, tuple[Owner | None, float]] = {}
        audit = self._audit_due
        for job_id in self._own_jobs():
            # Keyed by work field: a document, or one step of a fanned-out document.
            recorded = owners(self.r, job_id)
            doc_of = {f: doc_of_field(f) for f in recorded}
            states = self._states(job_id, set(doc_of.values()))
            done = [f for f in recorded if states.get(doc_of[f]) is None]
            if done:  # final (or gone): the record has nothing left to say
                self.r.hdel(owners_key(job_id), *done)
            for field, owner in recorded.items():
                if doc_of[field] in states:
                    why = owner_lost(owner, beats, now=now, grace_s=s.reconcile.grace_s)
                    if why is not None:
                        lost[(job_id, field)] = (owner, why)
            if not audit:
                continue
            # Meant to be in the queue: queued and unclaimed, or handed back for a retry,
            # or a fan-out step sent and not yet received.
            queued = self.jobs.doc_ids(job_id, "queued")
            meant = {d for d in queued if d not in recorded or not recorded[d].worker}
            meant |= {f for f, o in recorded.items() if not o.worker and doc_of[f] in states}
            states.update(self._states(job_id, {doc_of_field(f) for f in meant} - set(states)))
            for field in meant:
                state = states.get(doc_of_field(field))
                if state is None:
                    continue
                record = recorded.get(field)
                since = record.since if record is not None else state.queued_at or state.updated_at
                waiting[(job_id, field)] = (record, since)
        if not lost and not waiting:
            self._finish_audit(audit)
            return 0
        view = read_broker(self.r, s.tasks.queue)
        acted = 0
        for key, (owner, why) in lost.items():
            verdict = after_loss(key, owner, view, beats)
            if verdict.action == "adopt":
                self.requeuer.adopt(key, verdict.task_id)
            elif verdict.action == "requeue":
                tags = [tag for tag, _ in view.unacked.get(key, [])]
                acted += self.requeuer.requeue(key, why, tags)
        missing = [
            k
            for k, (o, since) in waiting.items()
            if message_lost(k, o, since, view, now=now, grace_s=s.reconcile.grace_s)
        ]
        if missing:
            # A message in flight between the queue and ``unacked`` (or just claimed)
            # is in neither for a moment: look again before acting.
            time.sleep(0.5)
            unacked = read_unacked(self.r)
            for key in missing:
                record = owners(self.r, key[0]).get(key[1])
                if key in unacked or (record is not None and record.worker):
                    continue
                acted += self.requeuer.requeue(
                    key, "its message was lost (in no queue, held by no worker)", []
                )
        self._finish_audit(audit)
        return acted

    def _own_jobs(self) -> list[str]:
        """Return the unfinished jobs sent to this service's queue."""
        ids = self.jobs.active()
        pipe = self.r.pipeline(transaction=False)
        for job_id in ids:
            pipe.hget(keys.job(job_id), "queue")
        queues = pipe.execute() if ids else []
        mine = self.settings.tasks.queue
        return [j for j, q in zip(ids, queues, strict=True) if q is not None and as_text(q) == mine]

    def _states(self, job_id: str, doc_ids: set[str]) -> dict[str, DocState]:
        """Return the documents among ``doc_ids`` that are still queued or running."""
        ids = sorted(doc_ids)
        if not ids:
            return {}
        raw = self.r.hmget(f"{keys.job(job_id)}:docs", ids)
        out: dict[str, DocState] = {}
        for doc_id, value in zip(ids, raw, strict=True):
            if value is not None:
                state = DocState.model_validate_json(value)
                if state.status in ("queued", "running"):
                    out[doc_id] = state
        return out

    def _finish_audit(self, audit: bool) -> None:
        if audit:
            self._audit_due = False
            self._last_audit = time.monotonic()


def start_reconciler(settings: Settings, app: Any, *, close_app: bool = False) -> Reconciler:
    """Start a reconciler thread sending through Celery ``app``; stop it with ``stop()``.

    ``close_app``: the reconciler owns ``app`` and closes it when stopped (``serve``).
    """
    rec = Reconciler(settings, send=app_sender(app, settings.tasks.queue))
    if close_app:
        rec._on_stop = app.close
    return rec.start()

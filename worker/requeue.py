"""What the reconciler does to a document (or fan-out step) whose owner or message was lost.

:meth:`Requeuer.requeue` sends the document's (or the step's) task again with the arguments the
producer recorded (:func:`~chunkweave.worker.ownership.task_of`), under a new task
id, after removing the dead holder's unacknowledged copy (so kombu does not deliver it
again after the visibility timeout) and breaking the document's lock if its holder is
dead. Past ``reconcile.max_requeues`` the document is failed instead, as ``poison`` with the
reason, in the job record and (through the ``record_failure`` task) in the ledger.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

import redis

from chunkweave.errors import ErrorCode
from chunkweave.worker import keys, ownership
from chunkweave.worker.broker import DocKey, drop_unacked
from chunkweave.worker.jobs import DocState, JobStore, as_text
from chunkweave.worker.locks import break_lock, drop_lease, holder_is_dead
from chunkweave.worker.settings import Settings
from chunkweave.worker.tasks.parts import Parts

log = logging.getLogger(__name__)

Send = Callable[[str, dict[str, Any], str], None]


def app_sender(app: Any, queue: str) -> Send:
    """Return a ``send`` that sends tasks by name through the Celery ``app`` to ``queue``."""

    def send(name: str, kwargs: dict[str, Any], task_id: str) -> None:
        app.send_task(name, kwargs=kwargs, queue=queue, task_id=task_id)

    return send


_TASK_OF_ACTION = {"ingest": "chunkweave.ingest_document", "delete": "chunkweave.delete_document"}


class Requeuer:
    """Requeues or fails documents of jobs; ``send(name, kwargs, task_id)`` sends a task."""

    def __init__(
        self, settings: Settings, client: redis.Redis, jobs: JobStore, *, send: Send
    ) -> None:
        self.settings = settings
        self.r = client
        self.jobs = jobs
        self.send = send

    def adopt(self, key: DocKey, task_id: str) -> None:
        """Record that a message for the document waits in the queue (nothing is sent)."""
        ownership.requeued(self.r, key[0], key[1], task_id)

    def requeue(self, key: DocKey, reason: str, unacked_tags: list[str]) -> int:
        """Send the work's task again (or fail its document past the bound); 1 if acted.

        The work is a whole document or one step of its fan-out (a part, the join, a
        slice, the commit): a step is sent again with its own recorded arguments and
        its document stays ``running``, as its other steps may be.
        """
        job_id, field = key
        doc_id, step = ownership.split_field(field)
        state = self.jobs.get_doc(job_id, doc_id)
        if state is None or state.status in ("done", "failed"):
            return 0
        s = self.settings
        count = ownership.count_requeue(self.r, job_id, field, s.tasks.job_ttl_s)
        drop_unacked(self.r, unacked_tags)
        self._break_dead_lock(doc_id)
        what = f"{reason} ({step})" if step else reason
        if count > s.reconcile.max_requeues:
            why = f"{what}; requeued {count - 1} times (limit {s.reconcile.max_requeues})"
            self.fail(state, job_id, why, field=field)
            return 1
        name, kwargs = self._task(job_id, field, state)
        task_id = uuid.uuid4().hex
        ownership.requeued(self.r, job_id, field, task_id)
        stage = f"requeued ({count}/{s.reconcile.max_requeues}): {what}"
        status = "running" if step and name in ownership.STEP_TASKS else "queued"
        self.jobs.set_doc(job_id, state.model_copy(update={"status": status, "stage": stage}))
        self.send(name, kwargs, task_id)
        log.warning("requeued %s of job %s: %s", state.source, job_id, what)
        return 1

    def fail(self, state: DocState, job_id: str, reason: str, *, field: str = "") -> None:
        """Record the document failed as ``poison`` (job record, ledger, upload released).

        A fan-out's write lease, if ``field`` is a step of a write that took one, is
        dropped, so the next ingest of the document does not wait out its TTL.
        """
        self._drop_fanout_lease(job_id, field)
        message = f"{state.source}: its worker was lost: {reason}; not attempted again"
        failed = state.model_copy(
            update={"status": "failed", "error_code": ErrorCode.POISON, "error": message}
        )
        if state.action == "ingest":
            tenant = self._tenant(job_id)
            failure = {"source": state.source, "doc_id": state.doc_id, "tenant": tenant}
            failure.update(error_code=str(ErrorCode.POISON), error=message)
            self.send("chunkweave.record_failure", failure, uuid.uuid4().hex)
        self._release_upload(state)
        if self.jobs.set_doc(job_id, failed):
            self.send("chunkweave.send_webhook", {"job_id": job_id}, uuid.uuid4().hex)
        log.warning("failed %s of job %s: %s", state.source, job_id, message)

    def _task(self, job_id: str, field: str, state: DocState) -> tuple[str, dict[str, Any]]:
        # A step without a recorded task (a fan-out sent before steps were recorded)
        # is redone by sending its whole document again, which fans out afresh.
        for recorded_field in (field, state.doc_id):
            recorded = ownership.task_of(self.r, job_id, recorded_field)
            if recorded is not None:
                return recorded
        # Sent before task arguments were recorded: rebuild them from the job record
        # (a document sent with metadata or ``force`` loses them).
        log.warning("%s: no recorded task; requeued from its job record alone", state.source)
        kwargs: dict[str, Any] = {"job_id": job_id, "source": state.source, "doc_id": state.doc_id}
        if tenant := self._tenant(job_id):
            kwargs["tenant"] = tenant
        return _TASK_OF_ACTION[state.action], kwargs

    def _tenant(self, job_id: str) -> str | None:
        raw = self.r.hget(keys.job(job_id), "tenant")
        return as_text(raw) if raw is not None else None

    def _drop_fanout_lease(self, job_id: str, field: str) -> None:
        doc_id, step = ownership.split_field(field)
        recorded = ownership.task_of(self.r, job_id, field) if step else None
        sha1 = recorded[1].get("sha1") if recorded is not None else None
        if not sha1:
            return
        write = Parts(self.r, keys.fanout_slices(doc_id, str(sha1)), kind="slice", ttl_s=0)
        if token := write.meta().get("token"):
            drop_lease(self.r, doc_id, token)

    def _break_dead_lock(self, doc_id: str) -> None:
        key = keys.lock(doc_id)
        held = self.r.get(key)
        if held is not None and holder_is_dead(self.r, held) and break_lock(self.r, key, held):
            log.info("%s: broke the lock of a dead holder", key)

    def _release_upload(self, state: DocState) -> None:
        from chunkweave.worker import uploads

        keep = self.settings.api.upload_retention == "keep" and state.action != "delete"
        try:
            uploads.release(state.source, self.settings, self.r, delete=not keep)
        except Exception as err:  # noqa: BLE001 - the failure must still be recorded
            log.warning("%s: could not release the upload: %s", state.source, err)

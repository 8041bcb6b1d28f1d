"""Recording what a task did: job state, metrics, attempt counters, completion webhook.

Every way a document task can end goes through :class:`DocRun`, so the state in
Redis, the Prometheus counters and the poison counters always agree.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from chunkweave.worker.jobs import DocState
from chunkweave.worker.locks import clear_attempts, uncount_attempt
from chunkweave.worker.metrics import record_document, record_failure
from chunkweave.worker.runtime import Runtime


class DocRun:
    """One task's work on one document of one job."""

    def __init__(
        self,
        rt: Runtime,
        *,
        job_id: str,
        source: str,
        doc_id: str,
        action: Literal["ingest", "delete"] = "ingest",
    ) -> None:
        self.rt = rt
        self.job_id = job_id
        self.source = source
        self.doc_id = doc_id
        self.action: Literal["ingest", "delete"] = action
        self.sha1: str | None = None
        self.part = ""
        self.attempts = 0
        self.started = time.monotonic()

    def _state(self, **fields: Any) -> DocState:
        return DocState(
            doc_id=self.doc_id,
            source=self.source,
            action=self.action,
            attempts=self.attempts,
            **fields,
        )

    def _already_final(self) -> bool:
        # A duplicate delivery of a finished document must not count it twice.
        current = self.rt.jobs.get_doc(self.job_id, self.doc_id)
        return current is not None and current.status in ("done", "failed")

    def running(self, stage: str, progress: float | None = None) -> None:
        """Record that work is under way (no-op once the document is final)."""
        self.rt.jobs.set_doc(
            self.job_id, self._state(status="running", stage=stage, progress=progress)
        )

    def done(self, outcome: Any) -> dict[str, Any]:
        """Record a pipeline ``DocOutcome``; a ``failed`` outcome is recorded as failed."""
        if outcome.status == "failed":
            return self.failed(outcome.error_code or "internal", outcome.error or "failed")
        self.clear_attempts()
        seconds = time.monotonic() - self.started
        if not self._already_final():
            record_document(
                self.rt.redis,
                outcome=outcome.status,
                pages=outcome.pages,
                chunks_added=outcome.chunks_added,
                chunks_unchanged=outcome.chunks_unchanged,
                chunks_deleted=outcome.chunks_deleted,
                seconds=seconds,
            )
            state = self._state(
                status="done",
                progress=1.0,
                outcome=outcome.status,
                pages=outcome.pages,
                chunks_added=outcome.chunks_added,
                chunks_unchanged=outcome.chunks_unchanged,
                chunks_deleted=outcome.chunks_deleted,
            )
            self._finish(state)
        return {"doc_id": self.doc_id, "status": outcome.status, "seconds": round(seconds, 3)}

    def failed(self, code: str, message: str) -> dict[str, Any]:
        """Record the document failed with a reason code and a one-line message."""
        self.clear_attempts()
        seconds = time.monotonic() - self.started
        if not self._already_final():
            record_failure(self.rt.redis, reason=code, seconds=seconds)
            self._finish(self._state(status="failed", error_code=code, error=message))
        return {"doc_id": self.doc_id, "status": "failed", "error_code": code}

    def undo_attempt(self) -> None:
        """Take back this run's attempt (it is retried, not crashed); earlier ones stay."""
        if self.sha1 is not None and self.attempts:
            uncount_attempt(self.rt.redis, self.doc_id, self.sha1, part=self.part)
            self.attempts = 0

    def clear_attempts(self) -> None:
        """Forget every attempt of this document version: it ended in a recorded way."""
        if self.sha1 is not None:
            clear_attempts(self.rt.redis, self.doc_id, self.sha1, part=self.part)

    def _finish(self, state: DocState) -> None:
        if self.rt.jobs.set_doc(self.job_id, state):
            job = self.rt.jobs.get(self.job_id)
            if job is not None and job.webhook_url:
                from chunkweave.worker.tasks import send_webhook  # the task module imports this one

                send_webhook.apply_async(kwargs={"job_id": self.job_id})

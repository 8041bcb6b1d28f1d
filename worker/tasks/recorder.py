"""Recording what a task did: job state, metrics, attempt counters, job completion.

Every way a document task can end goes through :class:`DocRun`, so the state in
Redis, the Prometheus counters and the poison counters always agree. It knows
nothing of Celery: what happens when a job finishes (the webhook task) is the
``on_job_finished`` callback its creator passes in.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.timing import StageTimer
from chunkweave.storage.values import DocOutcome
from chunkweave.worker.jobs import Action, DocState
from chunkweave.worker.locks import clear_attempts, count_attempt, uncount_attempt
from chunkweave.worker.metrics import record_document, record_failure
from chunkweave.worker.runtime import Runtime

log = logging.getLogger(__name__)


class DocRun:
    """One task's work on one document of one job."""

    def __init__(
        self,
        rt: Runtime,
        *,
        job_id: str,
        source: str,
        doc_id: str,
        action: Action = "ingest",
        on_job_finished: Callable[[str], None] | None = None,
        on_doc_final: Callable[[DocRun], None] | None = None,
    ) -> None:
        self.rt = rt
        self.job_id = job_id
        self.source = source
        self.doc_id = doc_id
        self.action: Action = action
        self.on_job_finished = on_job_finished
        self.on_doc_final = on_doc_final
        self.sha1: str | None = None
        self.part = ""
        #: The document's caller metadata (validated, JSON values) and its tenant: what
        #: the producer sent with the task, and every task it leads to carries on.
        self.metadata: dict[str, Any] = {}
        self.tenant: str | None = None
        self.attempts = 0
        self.started = time.monotonic()
        #: The worker's own stages (``fetch``, ``lock``, ``state``: its Redis bookkeeping);
        #: the pipeline's come with its outcome.
        self.timer = StageTimer()
        self._on_failure: list[Callable[[], None]] = []
        #: Records a failure in the document's ledger entry (set for the ingest tasks);
        #: the pipeline records the failures it returns itself.
        self.record_in_ledger: Callable[[ErrorCode, str], None] | None = None

    def carried(self) -> dict[str, Any]:
        """Return the metadata and tenant as task keyword arguments (only those set).

        The same keywords the pipeline's ``ingest``, ``begin`` and ``delete`` take,
        and what every task that continues this document's work is sent with.
        """
        out: dict[str, Any] = {}
        if self.metadata:
            out["metadata"] = self.metadata
        if self.tenant:
            out["tenant"] = self.tenant
        return out

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
        with self.timer.stage("state"):
            self.rt.jobs.set_doc(
                self.job_id, self._state(status="running", stage=stage, progress=progress)
            )

    def done(self, outcome: DocOutcome) -> dict[str, Any]:
        """Record a pipeline outcome; a ``failed`` outcome is recorded as failed."""
        if outcome.status == "failed":
            code = ErrorCode(outcome.error_code) if outcome.error_code else ErrorCode.INTERNAL
            return self.failed(
                code, outcome.error or "failed", warnings=outcome.warnings, in_ledger=True
            )
        self.clear_attempts()
        seconds = time.monotonic() - self.started
        if not self._already_final():
            record_document(
                self.rt.redis,
                stages={**self.timer.seconds, **outcome.timings},
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
                timings={**self.timer.rounded(), **outcome.timings},
                seconds=round(seconds, 4),
                outcome=outcome.status,
                pages=outcome.pages,
                chunks_added=outcome.chunks_added,
                chunks_unchanged=outcome.chunks_unchanged,
                chunks_deleted=outcome.chunks_deleted,
                warnings=outcome.warnings,
            )
            self._finish(state)
        return {"doc_id": self.doc_id, "status": outcome.status, "seconds": round(seconds, 3)}

    def failed(
        self,
        code: ErrorCode,
        message: str,
        *,
        warnings: tuple[str, ...] = (),
        in_ledger: bool = False,
    ) -> dict[str, Any]:
        """Record the document failed with a reason code and a one-line message.

        Callbacks registered with :meth:`on_failure` run first (releasing what the run
        holds, such as a write lease); then, unless it is ``in_ledger`` already, the
        failure is recorded in the ledger (best effort: the store may be what failed).
        """
        for release in self._on_failure:
            release()
        self._on_failure.clear()
        # A lost lease means another writer owns the document now: its entry is theirs.
        if (
            self.record_in_ledger is not None
            and not in_ledger
            and code != ErrorCode.LEASE_LOST
            and not self._already_final()
        ):
            try:
                self.record_in_ledger(code, message)
            except Exception as err:  # noqa: BLE001 - the job record must still be written
                log.warning("%s: could not record the failure in the ledger: %s", self.source, err)
        self.clear_attempts()
        seconds = time.monotonic() - self.started
        if not self._already_final():
            record_failure(self.rt.redis, reason=code, seconds=seconds)
            state = self._state(
                status="failed",
                error_code=code,
                error=message,
                warnings=warnings,
                timings=self.timer.rounded(),
                seconds=round(seconds, 4),
            )
            self._finish(state)
        return {"doc_id": self.doc_id, "status": "failed", "error_code": code}

    def ledger_record(self, code: ErrorCode, message: str) -> dict[str, Any]:
        """Return the arguments of a deferred ledger record of this failure (JSON values).

        What ``chunkweave.record_failure`` takes: the document, the code and reason, the
        version the attempt was on, and when it failed (a later ``ok`` entry wins).
        """
        return {
            "source": self.source,
            "doc_id": self.doc_id,
            "error_code": str(code),
            "error": message,
            "tenant": self.tenant,
            "sha1": self.sha1,
            "since": datetime.now(UTC).isoformat(),
        }

    def on_failure(self, release: Callable[[], None]) -> None:
        """Run ``release`` if this run ends failed (not if it ends done or retries)."""
        self._on_failure.append(release)

    def count_attempt(self) -> bool:
        """Count one attempt at this document version (or part); False past ``max_attempts``.

        Counted before the work starts and cleared when the run ends in a recorded way,
        so only a worker that died mid-task leaves its count behind.
        """
        assert self.sha1 is not None, "count attempts of a known document version"
        settings = self.rt.settings
        with self.timer.stage("state"):
            self.attempts = count_attempt(
                self.rt.redis, self.doc_id, self.sha1, ttl_s=settings.job_ttl_s, part=self.part
            )
        return self.attempts <= settings.max_attempts

    def poisoned(self, what: str) -> dict[str, Any]:
        """Record the document failed as ``poison``: ``what`` killed its worker too often."""
        return self.failed(
            ErrorCode.POISON,
            f"{self.source}: {what} killed its worker process {self.attempts - 1} times "
            f"(limit {self.rt.settings.max_attempts}); not attempted again",
        )

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
        # The final hook (deleting an upload) runs before the state is written, so a
        # client that sees the document final never finds its upload still there; a
        # hook that fails is logged and never keeps the outcome from being recorded.
        if self.on_doc_final is not None:
            try:
                self.on_doc_final(self)
            except Exception as err:
                log.warning("%s: final clean-up failed: %s", self.source, err)
        finished = self.rt.jobs.set_doc(self.job_id, state)
        if finished and self.on_job_finished is not None:
            self.on_job_finished(self.job_id)

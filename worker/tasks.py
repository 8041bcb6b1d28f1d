"""Celery tasks: thin shells over the ingest pipeline that take references, not bytes.

Each task receives ``job_id``, a source URI and its ``doc_id``; it reads the source
(``chunkweave.worker.sources``), calls the pipeline, and records the outcome (``chunkweave.worker.recorder``).

- Idempotent: chunk ids are deterministic and the pipeline skips unchanged
  documents, so a duplicate delivery writes nothing new and is not counted twice.
- One writer per document: the pipeline runs under ``DocLock``; a task that finds
  the lock taken retries after the lock's TTL instead of waiting in a worker slot.
- Transient errors (store or embedder unreachable) retry with exponential backoff
  and full jitter, up to ``task_max_retries``; anything else is recorded failed at
  once with a reason code (a bad document is never retried).
- Poison documents: attempts per document version are counted before work starts
  and cleared whenever the task ends in a recorded way; a worker killed mid-task
  leaves its count behind, and past ``max_attempts`` the document is failed.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import redis
from billiard.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from celery import Task
from celery.exceptions import Retry
from celery.utils.time import get_exponential_backoff_interval

from chunkweave.parsers.document import file_sha1
from chunkweave.parsers.errors import ParseError
from chunkweave.worker import faults
from chunkweave.worker.celery_app import app
from chunkweave.worker.locks import DocLock, count_attempt
from chunkweave.worker.recorder import DocRun
from chunkweave.worker.runtime import get_runtime
from chunkweave.worker.sources import SourceNotFoundError, fetched
from chunkweave.worker.webhook import deliver

log = logging.getLogger(__name__)

#: Outcome error codes the pipeline may report for an unreachable store/embedder.
TRANSIENT_CODES = frozenset({"unavailable", "store_unavailable", "embedder_unavailable"})
_TRANSIENT_TYPES: tuple[type[BaseException], ...] = (
    ConnectionError,
    TimeoutError,
    socket.timeout,
    httpx.TransportError,
    redis.ConnectionError,
    redis.TimeoutError,
)
_TRANSIENT_NAMES = frozenset(
    {"WeaviateConnectionError", "WeaviateTimeoutError", "WeaviateClosedClientError"}
)


def is_transient(exc: BaseException) -> bool:
    """Tell whether ``exc`` (or anything in its cause chain) means "try again later".

    Besides network errors: Weaviate connection/timeouts, an embedding service that
    failed without a 4xx refusal, and any exception with a true ``transient``
    attribute (so the store and embedders can mark their own "unavailable" errors).
    """
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if (
            isinstance(cur, _TRANSIENT_TYPES)
            or getattr(cur, "transient", False)
            or type(cur).__name__ in _TRANSIENT_NAMES
        ):
            return True
        if type(cur).__name__ == "EmbeddingServiceError":
            # The embedding service gave up: retry unless it refused the request itself.
            code = getattr(cur, "status", None)
            return code is None or code == 429 or code >= 500
        cur = cur.__cause__ or cur.__context__
    return False


class TransientOutcomeError(RuntimeError):
    """The pipeline reported a transient failure in its outcome instead of raising."""

    transient = True


class DocTask(Task):
    """Base class recording failures the task body could not record itself."""

    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        """Record hard time limits (run in the parent after it killed the child)."""
        if not isinstance(exc, TimeLimitExceeded) or not isinstance(kwargs, dict):
            return
        rt = get_runtime()
        run = DocRun(
            rt,
            job_id=kwargs["job_id"],
            source=kwargs["source"],
            doc_id=kwargs["doc_id"],
            action="delete" if self.name.endswith("delete_document") else "ingest",
        )
        run.failed(
            "timeout",
            f"{kwargs['source']}: exceeded the hard time limit of "
            f"{rt.settings.task_hard_time_limit_s}s",
        )


def _backoff(task: Task) -> int:
    settings = get_runtime().settings
    return int(
        get_exponential_backoff_interval(
            factor=2,
            retries=task.request.retries,
            maximum=settings.retry_backoff_max_s,
            full_jitter=True,
        )
    )


def run_guarded(task: Task, run: DocRun, body: Any) -> dict[str, Any]:
    """Run ``body()`` and turn every way it can end into a recorded outcome or a retry."""
    settings = run.rt.settings
    try:
        result: dict[str, Any] = body()
        return result
    except Retry:
        raise
    except SoftTimeLimitExceeded:
        return run.failed(
            "timeout",
            f"{run.source}: exceeded the time limit of {settings.task_soft_time_limit_s}s",
        )
    except SourceNotFoundError as err:
        return run.failed(err.code, str(err))
    except ParseError as err:
        return run.failed(err.code, str(err))
    except MemoryError:
        return run.failed(
            "out_of_memory", f"{run.source}: exceeded the memory cap of {settings.max_memory_mb} MB"
        )
    except Exception as err:
        if is_transient(err):
            if task.request.retries < settings.task_max_retries:
                run.running(stage=f"waiting to retry: {type(err).__name__}")
                run.undo_attempt()  # a retry is not a crash
                raise task.retry(exc=err, countdown=_backoff(task)) from err
            return run.failed("unavailable", f"{run.source}: {type(err).__name__}: {err}")
        log.exception("ingest of %s failed", run.source)
        return run.failed("internal", f"{run.source}: {type(err).__name__}: {err}")


@contextmanager
def write_lock(task: Task, run: DocRun) -> Iterator[None]:
    """Hold the document's write lock for the block, or retry the task later."""
    settings = run.rt.settings
    with DocLock(run.rt.redis, run.doc_id, ttl_s=settings.lock_ttl_s, wait_s=1.0) as lock:
        if not lock.acquired:
            # Another worker is writing this document: come back when its lock would
            # have expired rather than block a worker slot.
            run.undo_attempt()
            run.running(stage="waiting for another worker")
            raise task.retry(countdown=settings.lock_ttl_s, max_retries=None)
        yield


@app.task(bind=True, base=DocTask, name="chunkweave.ingest_document", max_retries=None)
def ingest_document(
    self: Task, *, job_id: str, source: str, doc_id: str, force: bool = False
) -> dict[str, Any]:
    """Ingest one source into Weaviate and record the outcome on its job."""
    from chunkweave.worker import fanout  # fanout imports this module's helpers

    rt = get_runtime()
    settings = rt.settings
    run = DocRun(rt, job_id=job_id, source=source, doc_id=doc_id)

    def body() -> dict[str, Any]:
        run.running(stage="fetching")
        with fetched(source, settings.s3) as path:
            run.sha1 = file_sha1(path)
            run.attempts = count_attempt(rt.redis, doc_id, run.sha1, ttl_s=settings.job_ttl_s)
            if run.attempts > settings.max_attempts:
                return run.failed(
                    "poison",
                    f"{source}: its worker process died {run.attempts - 1} times "
                    f"(limit {settings.max_attempts}); not attempted again",
                )
            run.running(stage="parsing")
            faults.inject(
                path,
                hang_marker=settings.fault_hang_marker,
                crash_marker=settings.fault_crash_marker,
                hard_hang_marker=settings.fault_hard_hang_marker,
            )
            parts = fanout.plan(path, settings)
            if parts is not None and not force:
                # Skip an unchanged big document before fanning it out.
                skip = rt.pipeline.check_unchanged(path, source=source, doc_id=doc_id)
                if skip is not None:
                    return run.done(skip)
            if parts is not None:
                fanout.start(run, parts)
                return {"doc_id": doc_id, "status": "fanned_out", "parts": len(parts)}
            with write_lock(self, run):
                outcome = rt.pipeline.ingest(path, source=source, doc_id=doc_id, force=force)
            if outcome.status == "failed" and outcome.error_code in TRANSIENT_CODES:
                raise TransientOutcomeError(outcome.error or outcome.error_code)
            return run.done(outcome)

    return run_guarded(self, run, body)


@app.task(bind=True, base=DocTask, name="chunkweave.delete_document", max_retries=None)
def delete_document(self: Task, *, job_id: str, source: str, doc_id: str) -> dict[str, Any]:
    """Remove a source's chunks and ledger entry from Weaviate and record it on its job."""
    rt = get_runtime()
    run = DocRun(rt, job_id=job_id, source=source, doc_id=doc_id, action="delete")

    def body() -> dict[str, Any]:
        run.running(stage="deleting")
        with write_lock(self, run):
            outcome = rt.pipeline.delete(doc_id)
        return run.done(outcome)

    return run_guarded(self, run, body)


@app.task(bind=True, name="chunkweave.send_webhook", max_retries=None, acks_late=True)
def send_webhook(self: Task, *, job_id: str) -> None:
    """POST the finished job's summary to its webhook URL (retried with backoff)."""
    rt = get_runtime()
    job = rt.jobs.get(job_id)
    if job is None or not job.webhook_url:
        return
    secret = rt.settings.webhook_secret
    try:
        deliver(
            job.webhook_url,
            job.model_dump_json().encode(),
            secret=secret.get_secret_value() if secret else None,
            timeout_s=rt.settings.webhook_timeout_s,
        )
    except Exception as err:
        if self.request.retries >= rt.settings.webhook_retries:
            log.error("giving up on webhook for job %s: %s", job_id, err)
            return
        raise self.retry(exc=err, countdown=_backoff(self)) from err

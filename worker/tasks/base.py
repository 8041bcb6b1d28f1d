"""What every document task shares: the task decorator, failure handling, the write lock.

A document task is a plain function ``body(task, run, **arguments)`` registered with
:func:`doc_task`. The decorator gives it the common shell: build the :class:`DocRun`
that records the outcome, and turn every way the body can end into a recorded
outcome or a retry (:func:`run_guarded`):

- Transient errors (store, embedder or Redis unreachable: see :func:`is_transient`)
  retry with exponential backoff and full jitter, up to ``task_max_retries``; then the
  document is failed with the error's code. Anything else is failed at once with a
  reason code: a bad document is never retried.
- Soft time limit -> ``timeout``; ``MemoryError`` (the per-child ``RLIMIT_DATA``) ->
  ``out_of_memory``; the hard time limit kills the child, and :class:`DocTask`
  records ``timeout`` from the parent.
"""

from __future__ import annotations

import logging
import socket
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx
import redis
from billiard.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from celery import Task
from celery.exceptions import Retry
from celery.utils.time import get_exponential_backoff_interval

from chunkweave.errors import TransientError
from chunkweave.parsers.errors import ErrorCode, ParseError
from chunkweave.storage.metadata import MetadataError
from chunkweave.worker import ownership, uploads
from chunkweave.worker.celery_app import app
from chunkweave.worker.heartbeat import worker_id
from chunkweave.worker.jobs import Action, DocState
from chunkweave.worker.locks import DocLock
from chunkweave.worker.runtime import Runtime, get_runtime
from chunkweave.worker.sources import SourceNotFoundError
from chunkweave.worker.tasks.recorder import DocRun

log = logging.getLogger(__name__)

#: The task that POSTs a finished job's summary to its webhook (sent by name).
NOTIFY_TASK = "chunkweave.send_webhook"
#: The task that records a failure in the ledger once the store answers (sent by name).
RECORD_TASK = "chunkweave.record_failure"
#: Outcome codes that mean "the store or the embedder is unreachable": retried.
TRANSIENT_CODES = frozenset({ErrorCode.STORE_UNAVAILABLE, ErrorCode.EMBEDDER_UNAVAILABLE})
#: Network failures of the clients the worker itself holds (Redis, HTTP).
_NETWORK_ERRORS: tuple[type[BaseException], ...] = (
    ConnectionError,
    TimeoutError,
    socket.timeout,
    httpx.TransportError,
    redis.ConnectionError,
    redis.TimeoutError,
)

Body = Callable[..., dict[str, Any]]


def is_transient(exc: BaseException) -> bool:
    """Tell whether ``exc`` (or anything in its cause chain) means "try again later".

    Network errors of the clients the worker holds, and every
    :class:`~chunkweave.errors.TransientError` (the store or an embedding service unavailable).
    """
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, (TransientError, *_NETWORK_ERRORS)):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def transient_code(exc: BaseException) -> ErrorCode:
    """Return the code to record when a transient failure outlasted every retry."""
    code = getattr(exc, "code", None)
    if isinstance(code, ErrorCode):
        return code
    return ErrorCode.STORE_UNAVAILABLE


def ledger_recorder(run: DocRun, *, deferred: bool = False) -> Callable[[ErrorCode, str], None]:
    """Return what records a failure of ``run``'s document in its ledger entry.

    When the store is unreachable, or ``deferred`` (the worker's parent, which holds no
    store client), the record is queued as ``chunkweave.record_failure``, retried until
    the store answers: every failure ends in the ledger.
    """

    def later(code: ErrorCode, message: str) -> None:
        app.send_task(RECORD_TASK, kwargs=run.ledger_record(code, message))

    def record(code: ErrorCode, message: str) -> None:
        try:
            run.rt.pipeline.record_failed(
                run.doc_id, run.source, code, message, tenant=run.tenant, sha1=run.sha1
            )
        except Exception as err:
            if not is_transient(err):
                raise
            later(code, message)

    return later if deferred else record


def notify_job_finished(job_id: str) -> None:
    """Queue the completion webhook of a finished job (the task decides if there is one)."""
    app.send_task(NOTIFY_TASK, kwargs={"job_id": job_id})


def release_upload(run: DocRun) -> None:
    """Delete an uploaded file once its document is final (stored, failed or deleted).

    Only uploads are touched (:mod:`chunkweave.worker.uploads`): the document's hold is
    dropped, and the file deleted once no queued document holds it;
    ``upload_retention=keep`` keeps it unless the document itself was deleted.
    """
    settings = run.rt.settings
    keep = settings.api.upload_retention == "keep" and run.action != "delete"
    uploads.release(run.source, settings, run.rt.redis, delete=not keep)


def new_run(
    rt: Runtime, *, job_id: str, source: str, doc_id: str, action: Action = "ingest"
) -> DocRun:
    """Build a :class:`DocRun` whose job, once finished, gets its webhook."""
    return DocRun(
        rt,
        job_id=job_id,
        source=source,
        doc_id=doc_id,
        action=action,
        on_job_finished=notify_job_finished,
        on_doc_final=release_upload,
    )


class DocTask(Task):
    """Base class recording failures the task body could not record itself."""

    #: What the task does to its document (``delete_document`` sets ``"delete"``).
    action: Action = "ingest"

    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        """Record hard time limits (run in the parent after it killed the child)."""
        if not isinstance(exc, TimeLimitExceeded) or not isinstance(kwargs, dict):
            return
        rt = get_runtime()
        run = new_run(
            rt,
            job_id=kwargs["job_id"],
            source=kwargs["source"],
            doc_id=kwargs["doc_id"],
            action=self.action,
        )
        if self.action == "ingest":  # the parent holds no store client: record it later
            run.record_in_ledger = ledger_recorder(run, deferred=True)
        run.failed(
            ErrorCode.TIMEOUT,
            f"{kwargs['source']}: exceeded the hard time limit of "
            f"{rt.settings.tasks.hard_time_limit_s}s",
        )


def backoff_s(task: Task) -> int:
    """Seconds to wait before the next retry: exponential, full jitter, bounded."""
    settings = get_runtime().settings
    return int(
        get_exponential_backoff_interval(
            factor=2,
            retries=task.request.retries,
            maximum=settings.tasks.retry_backoff_max_s,
            full_jitter=True,
        )
    )


def run_guarded(task: Task, run: DocRun, body: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run ``body()`` and turn every way it can end into a recorded outcome or a retry."""
    settings = run.rt.settings
    try:
        return body()
    except Retry:
        raise
    except SoftTimeLimitExceeded:
        return run.failed(
            ErrorCode.TIMEOUT,
            f"{run.source}: exceeded the time limit of {settings.tasks.soft_time_limit_s}s",
        )
    except (SourceNotFoundError, ParseError) as err:
        return run.failed(err.code, str(err))
    except MetadataError as err:
        return run.failed(ErrorCode.BAD_METADATA, str(err))
    except MemoryError:
        return run.failed(
            ErrorCode.OUT_OF_MEMORY,
            f"{run.source}: exceeded the memory cap of {settings.tasks.max_memory_mb} MB",
        )
    except Exception as err:
        if is_transient(err):
            if task.request.retries < settings.tasks.max_retries:
                run.undo_attempt()  # a retry is not a crash
                hand_back(task, run, stage=f"waiting to retry: {type(err).__name__}")
                raise task.retry(exc=err, countdown=backoff_s(task)) from err
            return run.failed(transient_code(err), f"{run.source}: {type(err).__name__}: {err}")
        log.exception("%s of %s failed", run.action, run.source)
        return run.failed(ErrorCode.INTERNAL, f"{run.source}: {type(err).__name__}: {err}")


def doc_task(name: str, *, action: Action = "ingest") -> Callable[[Body], Task]:
    """Register ``body(task, run, **arguments)`` as the document task ``name``.

    The task is called with ``job_id``, ``source`` and ``doc_id`` (which become the
    :class:`DocRun` handed to the body), optionally the document's ``metadata`` and
    ``tenant`` (kept on the run: :meth:`DocRun.carried`), plus the body's own keyword
    arguments. Every
    way the body ends is recorded or retried by :func:`run_guarded`.
    """

    def register(body: Body) -> Task:
        def task_fn(
            self: Task,
            *,
            job_id: str,
            source: str,
            doc_id: str,
            metadata: dict[str, Any] | None = None,
            tenant: str | None = None,
            **arguments: Any,
        ) -> dict[str, Any]:
            run = new_run(get_runtime(), job_id=job_id, source=source, doc_id=doc_id, action=action)
            run.metadata, run.tenant = dict(metadata or {}), tenant
            if action == "ingest":
                run.record_in_ledger = ledger_recorder(run)
            return run_guarded(self, run, lambda: body(self, run, **arguments))

        # Not functools.wraps: Celery checks call arguments against the signature of
        # this function (with its keyword-only ids), not the body's.
        task_fn.__name__ = task_fn.__qualname__ = body.__name__
        task_fn.__module__ = body.__module__
        task_fn.__doc__ = body.__doc__
        task: Task = app.task(bind=True, base=DocTask, name=name, max_retries=None, action=action)(
            task_fn
        )
        return task

    return register


def hand_back(task: Task, run: DocRun, *, stage: str) -> None:
    """Record the document as back in the queue (``stage`` says why) before ``task`` retries.

    Its status becomes ``queued`` again, so a job's ``running`` counts only documents a
    worker is on. Done before the retry's message exists, so whoever receives it next
    records itself as the owner after this (:mod:`chunkweave.worker.ownership`). A
    fan-out step stands for no whole document: its step is handed back, and the
    document, whose other steps may run, is only marked as waiting.
    """
    kwargs = task.request.kwargs or {}
    field = ownership.work_field(task.name, kwargs) if task.request.id else None
    if field is not None:
        ownership.hand_back(
            run.rt.redis, run.job_id, field, worker=worker_id(), task_id=task.request.id
        )
    if task.name not in ownership.DOC_TASKS or field is None:
        run.running(stage=stage)
        return
    waiting = DocState(
        doc_id=run.doc_id, source=run.source, action=run.action, status="queued", stage=stage
    )
    run.rt.jobs.set_doc(run.job_id, waiting)


def step_kwargs(run: DocRun, sha1: str, **extra: int) -> dict[str, Any]:
    """Return the arguments of a fan-out step of ``run``'s document version ``sha1``."""
    ids = {"job_id": run.job_id, "source": run.source, "doc_id": run.doc_id, "sha1": sha1}
    return {**ids, **extra, **run.carried()}


def send_step(run: DocRun, step: Task, kwargs: dict[str, Any], *, once: bool = False) -> bool:
    """Send one step of a fan-out, owned by the job record before its message exists.

    The step's task and a queue marker are recorded first
    (:func:`~chunkweave.worker.ownership.announce`), so a step whose worker dies, or
    whose message is lost, is sent again by the reconciler as a whole document would
    be. With ``once`` the step is sent only by the first caller (the join, the commit).
    Returns whether it was sent.
    """
    field = ownership.work_field(step.name, kwargs)
    task_id = uuid.uuid4().hex
    if field is not None:
        ttl_s = run.rt.settings.tasks.job_ttl_s
        announced = ownership.announce(
            run.rt.redis, run.job_id, field, name=step.name, kwargs=kwargs, task_id=task_id,
            ttl_s=ttl_s, once=once,
        )  # fmt: skip
        if not announced:
            return False
    step.apply_async(kwargs=kwargs, task_id=task_id)
    return True


@contextmanager
def write_lock(task: Task, run: DocRun) -> Iterator[None]:
    """Hold the document's write lock for the block, or retry the task later.

    The lock names this worker and task, so a dead holder's lock is broken at once
    (:class:`~chunkweave.worker.locks.DocLock`) rather than waited out.
    """
    settings = run.rt.settings
    with ExitStack() as held:
        with run.timer.stage("lock"):
            lock = held.enter_context(
                DocLock(
                    run.rt.redis,
                    run.doc_id,
                    ttl_s=settings.tasks.lock_ttl_s,
                    wait_s=1.0,
                    worker=worker_id(),
                    task_id=task.request.id or "",
                )
            )
        if not lock.acquired:
            # Another worker is writing this document: come back when its lock would
            # have expired rather than block a worker slot.
            run.undo_attempt()
            hand_back(task, run, stage="waiting for another worker")
            raise task.retry(countdown=settings.tasks.lock_ttl_s, max_retries=None)
        yield

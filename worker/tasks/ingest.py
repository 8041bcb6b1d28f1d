"""The document tasks: ingest one source, delete one document.

Each receives ``job_id``, a source URI and its ``doc_id``; it reads the source
(:mod:`chunkweave.worker.sources`), hashes it once, calls the pipeline
(:mod:`chunkweave.storage.pipeline`: check, parse, chunk, write -> commit), and records
the outcome (:mod:`chunkweave.worker.tasks.recorder`). A transient failure the
pipeline raises is retried by the task shell (:mod:`.base`).

- Idempotent: chunk ids are deterministic and the pipeline skips unchanged
  documents, so a duplicate delivery writes nothing new and is not counted twice.
- One writer per document: the pipeline runs under the document's write lock; a
  task that finds it taken retries after the lock's TTL instead of waiting in a slot.
- Poison documents: attempts per document version are counted before work starts
  and cleared whenever the task ends in a recorded way; a worker killed mid-task
  leaves its count behind, and past ``max_attempts`` the document is failed.
- Large PDFs are fanned out over the workers (:mod:`chunkweave.worker.tasks.fanout`).
"""

from __future__ import annotations

import logging
import os
from contextlib import ExitStack
from datetime import datetime
from typing import Any

from celery import Task

# Imported at module load, i.e. in the worker's parent process before it forks (as
# fanout does with pymupdf): the default pipeline and its store client come loaded in
# every pool child, which then builds its pipeline well within the pool's start-up
# timeout instead of importing them first (seconds on a loaded host).
import chunkweave.storage.pipeline.conductor  # noqa: F401
from chunkweave import tracing
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.metadata import jsonable, validate_metadata
from chunkweave.storage.pipeline.check import file_version
from chunkweave.worker.celery_app import app
from chunkweave.worker.runtime import get_runtime
from chunkweave.worker.sources import fetched, source_metadata
from chunkweave.worker.tasks import fanout
from chunkweave.worker.tasks.base import backoff_s, doc_task, is_transient, write_lock
from chunkweave.worker.tasks.recorder import DocRun

log = logging.getLogger(__name__)


@doc_task("chunkweave.ingest_document")
def ingest_document(task: Task, run: DocRun, *, force: bool = False) -> dict[str, Any]:
    """Ingest one source into the store and record the outcome on its job."""
    rt = run.rt
    run.running(stage="fetching")
    with ExitStack() as open_source:
        with run.timer.stage("fetch"):
            path = open_source.enter_context(fetched(run.source, rt.settings))
            run.sha1 = file_version(path)  # the one read and hash of the file
            own = source_metadata(run.source, rt.settings)
        tracing.annotate(bytes=os.path.getsize(path))  # on the task's span
        if own:  # an S3 object's user metadata and tags; the caller's win
            cfg = rt.settings.weaviate.metadata
            # Upload tools set keys of their own (rclone's mtime, say): the object's
            # keys count only where declared; a caller's undeclared key still fails.
            declared = cfg.declared()
            if ignored := sorted(k for k in own if k not in declared):
                log.info("%s: object metadata not declared, ignored: %s", run.source, ignored)
            own = {k: v for k, v in own.items() if k in declared}
            found = validate_metadata(own, cfg, where=run.source, from_text=True)
            merged = {**jsonable(found), **run.metadata}
            run.metadata = jsonable(validate_metadata(merged, cfg, where=run.source))
        if not run.count_attempt():
            return run.poisoned("the document")
        run.running(stage="parsing")
        fanned_out = fanout.fan_out(run, path, force=force, task=task)
        if fanned_out is not None:
            return fanned_out
        with write_lock(task, run):
            outcome = rt.pipeline.ingest(
                path,
                source=run.source,
                doc_id=run.doc_id,
                force=force,
                sha1=run.sha1,
                **run.carried(),
            )
    return run.done(outcome)


#: Retries of a deferred ledger record: with the backoff capped at
#: ``retry_backoff_max_s`` (300 s by default) about eight hours of an unreachable store.
RECORD_MAX_RETRIES = 100


@app.task(bind=True, name="chunkweave.record_failure", max_retries=None)
def record_failure(
    task: Task,
    *,
    source: str,
    doc_id: str,
    error_code: str,
    error: str,
    tenant: str | None = None,
    sha1: str | None = None,
    since: str | None = None,
) -> dict[str, Any]:
    """Record in the ledger a failure that could not be recorded where it happened.

    A document the producer refused (a bad sidecar); a task that failed while the store
    was unreachable, or that its worker's parent failed (the hard time limit). The job
    already says so; this puts the failure, with its code, in the document's ledger
    entry too (``chunkweave docs``). Retried with backoff while the store is
    unreachable (up to :data:`RECORD_MAX_RETRIES`). Nothing is written over an entry
    stored ``ok`` for version ``sha1`` or after ``since`` (ISO time of the failure).
    """
    rt = get_runtime()
    at = datetime.fromisoformat(since) if since else None
    try:
        recorded = rt.pipeline.record_failed(
            doc_id, source, ErrorCode(error_code), error, tenant=tenant, sha1=sha1, since=at
        )
    except Exception as err:
        if not is_transient(err) or task.request.retries >= RECORD_MAX_RETRIES:
            raise
        raise task.retry(exc=err, countdown=backoff_s(task)) from err
    return {"doc_id": doc_id, "status": "recorded" if recorded else "stored"}


@doc_task("chunkweave.delete_document", action="delete")
def delete_document(task: Task, run: DocRun) -> dict[str, Any]:
    """Remove a document's chunks and ledger entry and record it on its job."""
    run.running(stage="deleting")
    with write_lock(task, run):
        tenant = {"tenant": run.tenant} if run.tenant else {}
        outcome = run.rt.pipeline.delete(run.doc_id, **tenant)
    if outcome.source != run.doc_id:  # the ledger knew the source: a named upload's file
        run.source = outcome.source
    return run.done(outcome)

"""The producer side: turn sources into a job and its task messages.

Every way in (Python ``enqueue``, the CLI, the HTTP API, the watchers, backfill) goes
through :class:`Enqueuer`, so jobs look the same whichever door they came through.
Producers send tasks by name (``send_task``): they need Redis, not the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, cast

from chunkweave import tracing
from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.metadata import (
    MetadataError,
    jsonable,
    read_sidecar,
    validate_metadata,
)
from chunkweave.worker.celery_app import make_app
from chunkweave.worker.discovery import discover
from chunkweave.worker.job_inputs import (
    DOC_ID_SCHEME,
    caller_metadata,
    check_job_tenant,
    check_webhook,
    named_doc_id,
)
from chunkweave.worker.job_inputs import (  # re-exported: callers import them from here
    command_line_metadata as command_line_metadata,
)
from chunkweave.worker.jobs import Action, DocState, JobStore
from chunkweave.worker.ownership import remember_tasks
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import Settings, get_settings
from chunkweave.worker.sources import expand, normalize

try:  # kombu >= 5.7: a failed publish batch (delivery of its messages uncertain)
    from kombu.exceptions import BatchPublishError

    _BATCH_ERRORS: tuple[type[Exception], ...] = (BatchPublishError,)
except ImportError:  # pragma: no cover - older kombu publishes one message at a time
    _BATCH_ERRORS = ()

#: Documents recorded in the job per Redis round trip while a job is submitted.
_BATCH = 256

_TASKS: dict[Action, str] = {
    "ingest": "chunkweave.ingest_document",
    "delete": "chunkweave.delete_document",
}


def _task_kwargs(
    job_id: str,
    state: DocState,
    force: bool,
    metadata: Mapping[str, object] | None = None,
    tenant: str | None = None,
) -> dict[str, object]:
    """Return the keyword arguments of the task that processes ``state``.

    Metadata (validated, small: bounded by ``max_bytes``) and the tenant travel with
    the message only when there are any, so older workers read the others' messages.
    """
    kwargs: dict[str, object] = {"job_id": job_id, "source": state.source, "doc_id": state.doc_id}
    if state.action == "ingest" and force:
        kwargs["force"] = True
    if state.action == "ingest" and metadata:
        kwargs["metadata"] = dict(metadata)
    if tenant:
        kwargs["tenant"] = tenant
    return kwargs


#: Longest ``kwargsrepr`` header a message carries (Celery's own limit for it).
_REPR_MAX = 1024


def _kwargs_repr(kwargs: Mapping[str, object]) -> str:
    """Return the ``kwargsrepr`` header of a task message (what monitors show).

    The same text Celery would write, made with the built-in ``repr``: the kwargs are a
    few short strings, and Celery's ``saferepr`` took a quarter of the producer's CPU.
    """
    text = repr(dict(kwargs))
    return text if len(text) <= _REPR_MAX else text[: _REPR_MAX - 3] + "..."


def _received(kwargs: Mapping[str, object]) -> AbstractContextManager[None]:
    """Record sending one document's message as its trace's root span (tracing on)."""
    return tracing.receive(str(kwargs["doc_id"]), str(kwargs["source"]))


def _publish_batch(producer: Any, messages: int) -> AbstractContextManager[object]:
    """Group a producer's publishes into one Redis pipeline (kombu >= 5.7), else do nothing.

    Room is left for the few extra commands a transport may add per message, so the
    batch is written once, when the block ends.
    """
    batch = getattr(producer, "batch", None)
    return nullcontext() if batch is None else cast(Any, batch(max_size=8 * messages + 8))


class Enqueuer:
    """Creates jobs and sends their tasks. One per process is plenty."""

    def __init__(self, settings: Settings | None = None) -> None:
        # No Redis URL: a running `chunkweave serve`'s, said in one log line (INFO).
        self.settings = discover(settings or get_settings(), weaviate=False).settings
        self.redis = redis_client(self.settings)
        self.jobs = JobStore(self.redis, ttl_s=self.settings.job_ttl_s)
        self.app = make_app(self.settings)

    def submit(
        self,
        items: Iterable[tuple[str, Action]],
        *,
        force: bool = False,
        webhook_url: str | None = None,
        on_each: Callable[[str], None] | None = None,
        doc_ids: Mapping[str, str] | None = None,
        metadata: Mapping[str, object] | None = None,
        per_source: Mapping[str, Mapping[str, object]] | None = None,
        tenant: str | None = None,
    ) -> str:
        """Create a job for ``(source, action)`` items, send its tasks, return the job id.

        Sources are normalised; the same document twice in one job is sent once.
        ``doc_ids`` maps a source (as given) to the doc id it is stored under (see
        :func:`named_doc_id`); other sources are stored under their own URI. A
        ``delete`` may name a ``doc://`` id directly. ``on_each`` is called with each
        source as it is enqueued (progress bars).

        Metadata of each ingested document, later layers winning key by key: its
        sidecar ``NAME.meta.json`` (local files), ``metadata`` (every document), then
        ``per_source[source as given]``. ``metadata`` and ``per_source`` are validated
        first (``ValueError``: nothing is queued); a document whose merged metadata is
        refused (a bad sidecar) is recorded ``failed`` with ``bad_metadata`` and the
        others go on. ``tenant``: the tenant every document goes to (see
        :func:`check_job_tenant`).
        """
        if webhook_url:
            check_webhook(webhook_url, self.settings)
        tenant = check_job_tenant(tenant, self.settings)
        common = caller_metadata(metadata, self.settings, where="metadata")
        own = {
            src: caller_metadata(m, self.settings, where=f"metadata of {src}")
            for src, m in (per_source or {}).items()
        }
        job_id = self.jobs.create(webhook_url=webhook_url, tenant=tenant)
        named = doc_ids or {}
        batch: list[DocState] = []
        metas: dict[str, dict[str, object]] = {}
        refused: list[DocState] = []
        for raw, action in items:
            if action == "delete" and raw.startswith(DOC_ID_SCHEME):
                source = doc_id = raw  # the ledger knows its source
            else:
                source = normalize(raw)
                doc_id = named.get(raw) or doc_id_for(source, canonical=True)
            state = DocState(doc_id=doc_id, source=source, status="queued", action=action)
            if action == "ingest":
                try:
                    metas[doc_id] = self._doc_metadata(source, common, own.get(raw))
                except MetadataError as err:
                    refused.append(
                        state.model_copy(
                            update={
                                "status": "failed",
                                "error_code": ErrorCode.BAD_METADATA,
                                "error": str(err),
                            }
                        )
                    )
                    continue
            batch.append(state)
            if on_each is not None:
                on_each(source)
            if len(batch) >= _BATCH:
                self._send(job_id, batch, force, metas, tenant)
                batch, metas = [], {}
        self._send(job_id, batch, force, metas, tenant)
        for state in refused:  # recorded failed: no document task is sent for them
            if self.jobs.add_docs(job_id, [state.model_copy(update={"status": "queued"})]):
                self.jobs.set_doc(job_id, state)
                # The ledger records every failure: a worker writes this one there.
                failure = {"source": state.source, "doc_id": state.doc_id, "tenant": tenant}
                failure.update(error_code=str(state.error_code), error=state.error or "")
                self.app.send_task(
                    "chunkweave.record_failure", kwargs=failure, queue=self.settings.queue
                )
        if self.jobs.seal(job_id) and webhook_url:
            self.app.send_task(
                "chunkweave.send_webhook", kwargs={"job_id": job_id}, queue=self.settings.queue
            )
        return job_id

    def _doc_metadata(
        self, source: str, common: Mapping[str, object], own: Mapping[str, object] | None
    ) -> dict[str, object]:
        return self.doc_metadata(source, common, own, self.settings)

    @staticmethod
    def doc_metadata(
        source: str,
        common: Mapping[str, object],
        own: Mapping[str, object] | None,
        settings: Settings,
    ) -> dict[str, object]:
        """Merge a document's sidecar (if a local file has one) under the caller's metadata.

        Raises :class:`MetadataError` naming the sidecar (or the source), the key and why.
        """
        cfg = settings.weaviate.metadata
        sidecar = read_sidecar(source, cfg) if "://" not in source else None
        merged = {**jsonable(sidecar or {}), **common, **(own or {})}
        if sidecar and (common or own):  # the merge must still hold the bounds
            validate_metadata(merged, cfg, where=source)
        return merged

    def _send(
        self,
        job_id: str,
        batch: list[DocState],
        force: bool,
        metas: Mapping[str, Mapping[str, object]] | None = None,
        tenant: str | None = None,
    ) -> None:
        """Add a batch of documents to the job and send a task for each one new to it.

        The batch's messages go to Redis in one pipelined round trip through one
        producer (kombu's publish batch, where the installed kombu has one), instead of
        a round trip and a fresh Redis client per message. If that pipeline fails,
        its messages are sent again one at a time with Celery's publish retries: a
        message may then arrive twice, which tasks already tolerate (at-least-once
        delivery; a document's state transitions are idempotent).
        """
        added = self.jobs.add_docs(job_id, batch)
        if not added:
            return
        metas = metas or {}
        messages = [
            (
                _TASKS[state.action],
                _task_kwargs(job_id, state, force, metas.get(state.doc_id), tenant),
            )
            for state in added
        ]
        # The job record keeps each document's task, so whatever the broker loses can
        # be sent again with the same arguments (chunkweave.worker.reconcile).
        sent = {state.doc_id: msg for state, msg in zip(added, messages, strict=True)}
        remember_tasks(
            self.redis, job_id, sent, queue=self.settings.queue, ttl_s=self.settings.job_ttl_s
        )
        try:
            with (
                self.app.producer_or_acquire() as producer,
                _publish_batch(producer, len(messages)),
            ):
                for i, (name, kwargs) in enumerate(messages):
                    # The first message declares the queue on this producer's channel;
                    # the others need not look it up again.
                    with _received(kwargs):
                        self.app.send_task(
                            name,
                            kwargs=kwargs,
                            queue=self.settings.queue,
                            producer=producer,
                            argsrepr="()",
                            kwargsrepr=_kwargs_repr(kwargs),
                            **({} if i == 0 else {"declare": []}),
                        )
        except _BATCH_ERRORS:
            for name, kwargs in messages:
                with _received(kwargs):
                    self.app.send_task(
                        name,
                        kwargs=kwargs,
                        queue=self.settings.queue,
                        argsrepr="()",
                        kwargsrepr=_kwargs_repr(kwargs),
                    )

    def close(self) -> None:
        """Release the Redis and broker connections."""
        self.redis.close()
        self.app.close()


def enqueue(
    *sources: str | Path,
    force: bool = False,
    webhook_url: str | None = None,
    document_id: str | None = None,
    settings: Settings | None = None,
    metadata: Mapping[str, object] | None = None,
    tenant: str | None = None,
) -> str:
    """Queue documents for ingestion by the workers; return the job id.

    Each source may be a file, a folder (every PDF/DOCX under it) or an
    ``s3://bucket/prefix``; workers must be able to read local paths (shared
    filesystem). Track progress with ``chunkweave status JOB`` or ``GET /jobs/JOB``.

    ``document_id`` names the document (one file only): each version enqueued under
    the same name replaces the previous one (see :func:`named_doc_id`); without it a
    document is identified by its path or URI. Needs ``CHUNKWEAVE_REDIS_URL`` (or
    ``settings.redis_url``, or a running ``chunkweave serve``).

    ``metadata`` goes on every chunk of every document (keys declared in
    ``CHUNKWEAVE_WEAVIATE__METADATA__FIELDS``, plus the reserved ``acl``: a list of
    principals); a local file's sidecar ``NAME.meta.json`` adds its own, overridden
    key by key by ``metadata``. ``tenant`` stores the documents in that tenant
    (multi-tenancy on). Bad metadata or tenant raises ``ValueError`` before anything
    is queued.
    """
    enq = Enqueuer(settings)
    try:
        found = [doc for src in sources for doc in expand(src, enq.settings)]
        ids: dict[str, str] = {}
        if document_id is not None:
            if len(found) != 1:
                raise ValueError(f"document_id names one document; the sources hold {len(found)}")
            ids[found[0]] = named_doc_id(document_id)
        items: list[tuple[str, Action]] = [(s, "ingest") for s in found]
        return enq.submit(
            items,
            force=force,
            webhook_url=webhook_url,
            doc_ids=ids,
            metadata=metadata,
            tenant=tenant,
        )
    finally:
        enq.close()

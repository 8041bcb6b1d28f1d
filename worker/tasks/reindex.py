"""The reindex tasks: one document onto a target version, and the coordinator's step.

``chunkweave.reindex_document`` takes ``job_id``, ``source``, ``doc_id`` and ``target``
(the versioned collection being built). It reads the document's live ledger entry
(the replay's input), fetches the source as an ingest does, and writes it into the
target with :class:`chunkweave.storage.reindex.reindexer.Reindexer`, whose embedder reuses the
live vectors of unchanged embed texts. Each process keeps one reindexer per target
(built from the target's recorded spec: no restart, no configuration). Idempotent
and resumable as an ingest is: acks late, one writer per (target, document), the
target's ledger skips a document already written, crashes are counted as poison.

``chunkweave.reindex_advance`` runs one step of :func:`chunkweave.worker.reindex.advance`
and sends itself again until the reindex is over (``POST /reindex``).
"""

from __future__ import annotations

import threading
from contextlib import ExitStack
from typing import Any

from celery import Task

from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.pipeline.check import file_version
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.protocols import DocumentLedger
from chunkweave.storage.reindex.cache import ReusingEmbedder
from chunkweave.storage.reindex.reindexer import Reindexer
from chunkweave.storage.reindex.spec import ReindexSpec
from chunkweave.storage.values import EmbedderIdentity, LedgerEntry
from chunkweave.storage.versions import live_ledger, open_catalog, open_live, open_target
from chunkweave.worker import reindex as coordinator
from chunkweave.worker.celery_app import app
from chunkweave.worker.locks import DocLock
from chunkweave.worker.runtime import Runtime, get_runtime
from chunkweave.worker.settings import Settings
from chunkweave.worker.sources import fetched
from chunkweave.worker.tasks.base import run_guarded
from chunkweave.worker.tasks.recorder import DocRun

_reindexers: dict[str, tuple[Reindexer, DocumentLedger, str]] = {}
_guard = threading.Lock()


def open_reindexer(
    settings: Settings, target: str, own: Embedder | None = None
) -> tuple[Reindexer, DocumentLedger, str]:
    """Build the reindexer of ``target`` from its catalog record, the live ledger, the alias.

    ``own`` (the worker's embedder) is used when it is the target's; otherwise the
    target's recorded embedder is built.
    """
    cfg = settings.weaviate
    with open_catalog(cfg) as catalog:
        version = catalog.get(target)
    if version is None or not version.spec:
        raise LookupError(f"{target}: no reindex target of that name is recorded")
    spec = ReindexSpec.model_validate_json(version.spec)
    wanted = version.identity
    if own is not None and EmbedderIdentity(own.name, own.dimension) == wanted:
        embedder = own
    else:
        embedder = coordinator.target_embedder(spec, settings)
    cache = ReusingEmbedder(embedder)
    store = open_target(cfg, version)
    pipeline = Pipeline(
        store=store, embedder=cache, parse_opts=settings.parse, chunk_opts=spec.chunking
    )
    live_store = None
    if spec.live_chunking is not None:
        live_store = open_live(cfg, spec.live_collection, spec.live_ledger, wanted)
    reindexer = Reindexer(
        target=pipeline,
        cache=cache,
        live_store=live_store,
        live_chunking=spec.live_chunking,
        live_counter=embedder if live_store is not None else None,
    )
    ledger = live_ledger(store, cfg, spec.live_collection, spec.live_ledger)
    return reindexer, ledger, version.alias


def reindexer_for(rt: Runtime, target: str) -> tuple[Reindexer, DocumentLedger, str]:
    """Return this process's reindexer of ``target``, the live ledger, and the alias."""
    with _guard:
        if target not in _reindexers:
            _reindexers[target] = open_reindexer(rt.settings, target, rt.pipeline.embedder)
        return _reindexers[target]


@app.task(bind=True, name=coordinator.REINDEX_TASK, max_retries=None)
def reindex_document(
    self: Task, *, job_id: str, source: str, doc_id: str, target: str
) -> dict[str, Any]:
    """Write one live document into the target version and record it on its job."""
    run = DocRun(get_runtime(), job_id=job_id, source=source, doc_id=doc_id)
    return run_guarded(self, run, lambda: _reindex(self, run, target))


def _reindex(task: Task, run: DocRun, target: str) -> dict[str, Any]:
    rt = run.rt
    reindexer, live_ledger, alias = reindexer_for(rt, target)
    # The live ledger's record is what is replayed (today its source and doc id).
    entry = live_ledger.get(run.doc_id) or LedgerEntry(
        doc_id=run.doc_id, source=run.source, status="ok"
    )
    run.running(stage="fetching")
    with ExitStack() as held:
        path = held.enter_context(fetched(entry.source, rt.settings))
        run.sha1 = file_version(path)  # the one read and hash of the file
        if not run.count_attempt():
            return run.poisoned("the document")
        lock = held.enter_context(
            DocLock(
                rt.redis, f"{target}:{run.doc_id}", ttl_s=rt.settings.tasks.lock_ttl_s, wait_s=1.0
            )
        )
        if not lock.acquired:
            run.undo_attempt()
            raise task.retry(countdown=rt.settings.tasks.lock_ttl_s, max_retries=None)
        run.running(stage="reindexing")
        cache = reindexer.cache
        before = cache.reused, cache.embedded
        outcome = reindexer.reindex(path, entry, sha1=run.sha1)
        coordinator.add_stats(
            rt.redis, alias, reused=cache.reused - before[0], embedded=cache.embedded - before[1]
        )
    return run.done(outcome)


@app.task(bind=True, name="chunkweave.reindex_advance", max_retries=None)
def reindex_advance(self: Task, *, every_s: float = 2.0) -> dict[str, Any]:
    """One coordinator step; sends itself again until the reindex is over."""
    rt = get_runtime()
    state = coordinator.advance(rt.settings)
    if state.phase not in coordinator.FINAL:
        app.send_task(
            "chunkweave.reindex_advance",
            kwargs={"every_s": every_s},
            queue=rt.settings.tasks.queue,
            countdown=every_s,
        )
    return {"phase": state.phase, "done": state.done, "total": state.total}

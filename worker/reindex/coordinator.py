"""The reindex coordinator's steps: start, advance, gate, switch, settle (package doc)."""

from __future__ import annotations

import time

import redis

from chunkweave.chunking.fingerprint import chunker_fingerprint
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.reindex.accounting import Accounting, account
from chunkweave.storage.reindex.gate import GateResult, judge, score_store
from chunkweave.storage.reindex.spec import ReindexSpec
from chunkweave.storage.values import EmbedderIdentity, LedgerEntry
from chunkweave.storage.versions import IndexVersion, VersionCatalog, open_catalog, open_version
from chunkweave.worker import keys
from chunkweave.worker.celery_app import make_app
from chunkweave.worker.jobs import DocState, JobStore, as_text
from chunkweave.worker.reindex.state import (
    FINAL,
    LOCK_TTL_S,
    REINDEX_TASK,
    ReindexRefusedError,
    ReindexState,
    load_state,
    reset_stats,
    resumed,
    save_state,
    vector_stats,
)
from chunkweave.worker.reindex.versions import (
    SpecFactory,
    refuse_multi_tenant,
    target_embedder,
)
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import Settings


def start(settings: Settings, spec_for: SpecFactory, *, abandon: bool = False) -> ReindexState:
    """Record the target version and take the lock; resume an unfinished one.

    ``spec_for(live)`` builds the spec against the live version. A ``building``
    version with the same chunker and embedder is resumed; one with others is
    refused (``abandon`` drops it first).
    """
    cfg = settings.weaviate
    refuse_multi_tenant(cfg)
    r = redis_client(settings)
    started = time.monotonic()
    with open_catalog(cfg) as catalog:
        live = catalog.live()
        if live is None:
            raise ReindexRefusedError(f"{cfg.collection}: nothing to reindex (ingest first)")
        spec = spec_for(live)
        embedder = spec_for.embedder or target_embedder(spec, settings)
        identity = EmbedderIdentity(embedder.name, embedder.dimension)
        chunker = chunker_fingerprint(spec.chunking, embedder.name)
        building = [v for v in catalog.versions() if v.state == "building"]
        target: IndexVersion | None = None
        for version in building:
            if version.chunker == chunker and version.identity == identity and not abandon:
                target = version
            elif abandon:
                catalog.drop(version)
            else:
                raise ReindexRefusedError(
                    f"an unfinished reindex to {version.collection} ({version.chunker}) exists; "
                    "run it again with the same options to resume it, or pass --abandon"
                )
        raw = r.get(keys.reindex(cfg.collection) + ":lock")
        holder = None if raw is None else as_text(raw)
        if holder is not None and (target is None or holder != target.collection):
            raise ReindexRefusedError(
                f"a reindex of {cfg.collection} is running (to {holder}); one at a time"
            )
        if target is None:
            if live.chunker == chunker and live.identity == identity and not spec.force:
                raise ReindexRefusedError(
                    f"{live.collection} is already chunked as {chunker} with {identity}: nothing "
                    "would change (--force to rebuild anyway)"
                )
            target = catalog.next_version(identity, chunker=chunker, spec=spec.to_json())
        else:
            target = catalog.put(target.model_copy(update={"spec": spec.to_json()}))
        lock = keys.reindex(cfg.collection) + ":lock"
        taken = r.set(lock, target.collection, nx=True, ex=LOCK_TTL_S)
        if not taken and as_text(r.get(lock) or b"") != target.collection:
            raise ReindexRefusedError(f"a reindex of {cfg.collection} is running; one at a time")
    state = resumed(load_state(r, cfg.collection), target.collection)
    if state is None:
        state = ReindexState(alias=cfg.collection, target=target.collection, live=live.collection)
        reset_stats(r, cfg.collection)
    timings = {**state.timings, "start": round(time.monotonic() - started, 3)}
    return save_state(r, state.model_copy(update={"timings": timings}))


def _submit(
    settings: Settings, r: redis.Redis, target: str, entries: list[LedgerEntry], *, task: str
) -> str:
    """Submit a job with one task per entry (``task``: reindex onto ``target``, or ingest)."""
    jobs = JobStore(r, ttl_s=settings.tasks.job_ttl_s)
    app = make_app(settings)
    try:
        job_id = jobs.create()
        states = [
            DocState(doc_id=e.doc_id, source=e.source, status="queued", action="ingest")
            for e in entries
        ]
        for state in jobs.add_docs(job_id, states):
            kwargs: dict[str, object] = {
                "job_id": job_id,
                "source": state.source,
                "doc_id": state.doc_id,
            }
            if task == REINDEX_TASK:
                kwargs["target"] = target
            else:
                kwargs["force"] = True
            app.send_task(task, kwargs=kwargs, queue=settings.tasks.queue)
        jobs.seal(job_id)
        return job_id
    finally:
        app.close()


def _in_flight(r: redis.Redis, settings: Settings, state: ReindexState) -> bool:
    if not state.job_ids:
        return False
    job = JobStore(r, ttl_s=settings.tasks.job_ttl_s).get(state.job_ids[-1])
    return job is not None and job.finished_at is None


def advance(settings: Settings, *, settle_s: float = 10.0, stall_s: float = 120.0) -> ReindexState:
    """Run one coordinator step (see the module docstring) and return the new state.

    A job that made no progress for ``stall_s`` (its worker was killed: the broker
    gives the message back only after its visibility timeout) no longer holds the
    reindex up: what is missing is sent again (a duplicate is skipped by the target).
    """
    cfg = settings.weaviate
    r = redis_client(settings)
    state = load_state(r, cfg.collection)
    if state is None:
        raise ReindexRefusedError(f"no reindex of {cfg.collection} is known")
    if state.phase in FINAL:
        return state
    step = keys.reindex(cfg.collection) + ":step"
    if not r.set(step, 1, nx=True, ex=120):
        return state  # another driver is stepping right now
    try:
        r.expire(keys.reindex(cfg.collection) + ":lock", LOCK_TTL_S)
        with open_catalog(cfg) as catalog:
            if state.phase == "building":
                state = _build_step(settings, r, catalog, state, stall_s)
            elif state.phase == "switched":
                state = _settle_step(settings, r, catalog, state, settle_s)
        return save_state(r, state)
    finally:
        r.delete(step)


def _build_step(
    settings: Settings,
    r: redis.Redis,
    catalog: VersionCatalog,
    state: ReindexState,
    stall_s: float,
) -> ReindexState:
    target = catalog.get(state.target)
    if target is None:
        return state.model_copy(update={"phase": "incomplete", "message": "target was dropped"})
    spec = ReindexSpec.model_validate_json(target.spec)
    acc = account(catalog.ledger_entries(spec.live_ledger), catalog.ledger_entries(target.ledger))
    reused, embedded = vector_stats(r, state.alias)
    now = time.time()
    state = state.model_copy(
        update={
            "progress_at": now if acc.done > state.done else state.progress_at,
            "total": acc.total,
            "done": acc.done,
            "missing": len(acc.missing),
            "failed": len(acc.failed),
            "reused": reused,
            "embedded": embedded,
        }
    )
    busy = _in_flight(r, settings, state) and now - state.progress_at < stall_s
    if acc.extra:
        _delete_from(settings.weaviate, target, acc.extra)
    if acc.missing and not busy and state.job_ids:
        # A document the last job failed on before writing anything (its source is
        # gone, say) has no target entry: it is failed, not to be sent again and again.
        last = JobStore(r, ttl_s=settings.tasks.job_ttl_s).get(state.job_ids[-1], with_docs=True)
        lost = {d.doc_id for d in (last.docs or ()) if d.status == "failed"} if last else set()
        acc.failed += [e for e in acc.missing if e.doc_id in lost]
        acc.missing = [e for e in acc.missing if e.doc_id not in lost]
        state = state.model_copy(update={"missing": len(acc.missing), "failed": len(acc.failed)})
    if acc.missing and not busy:
        job = _submit(settings, r, target.collection, acc.missing, task=REINDEX_TASK)
        return state.model_copy(
            update={"job_ids": (*state.job_ids, job), "message": "", "progress_at": now}
        )
    if busy or acc.missing or acc.extra:
        return state
    if acc.failed:
        names = ", ".join(e.source for e in acc.failed[:5])
        r.delete(keys.reindex(state.alias) + ":lock")
        return state.model_copy(
            update={
                "phase": "incomplete",
                "message": f"{len(acc.failed)} documents failed in the target ({names}); it is "
                "not switched: fix them and run the same reindex again",
            }
        )
    if _ingest_in_flight(r, state.alias):
        return state.model_copy(update={"message": "waiting for an ingest in flight"})
    return _gate_and_switch(settings, r, catalog, state, target, spec, acc)


def _ingest_in_flight(r: redis.Redis, alias: str) -> bool:
    """Whether a document write lock other than a reindex's is held right now.

    The switch waits for one step then: a write in flight at the switch would land
    half in each version (the settle step repairs it, but later).
    """
    ours = keys.lock(f"{alias}_v")
    for key in r.scan_iter(match=keys.lock("*"), count=500):
        if not as_text(key).startswith(ours):
            return True
    return False


def _delete_from(cfg: WeaviateConfig, version: IndexVersion, doc_ids: list[str]) -> None:
    store = open_version(cfg, version)
    try:
        ledger = store.open_ledger()
        for doc_id in doc_ids:
            store.delete_doc(doc_id)
            ledger.delete(doc_id)
    finally:
        store.close()


def _gate(
    settings: Settings, catalog: VersionCatalog, target: IndexVersion, spec: ReindexSpec
) -> GateResult | None:
    if not spec.qa:
        return None
    live = catalog.get(spec.live_collection)
    if live is None or live.identity != target.identity:
        return None  # scored with one embedder only: see the README
    embedder = target_embedder(spec, settings)
    cfg = settings.weaviate
    scores = []
    for version in (live, target):
        store = open_version(cfg, version, ensure=True)
        try:
            scores.append(score_store(store, embedder, spec.qa))
        finally:
            store.close()
    return judge(scores[0], scores[1], spec.margin)


def _gate_and_switch(
    settings: Settings,
    r: redis.Redis,
    catalog: VersionCatalog,
    state: ReindexState,
    target: IndexVersion,
    spec: ReindexSpec,
    acc: Accounting,
) -> ReindexState:
    build_s = round(time.time() - state.started_at, 3)
    t0 = time.monotonic()
    result = _gate(settings, catalog, target, spec)
    timings = {**state.timings, "build": build_s, "gate": round(time.monotonic() - t0, 3)}
    gate_line = result.summary() if result else None
    if spec.qa and result is None and not spec.force:
        gate_line = "gate not run: the live collection has another embedder (use --force)"
    refused = (result is not None and not result.passed) or (spec.qa and result is None)
    if refused and not spec.force:
        catalog.put(target.model_copy(update={"state": "ready"}))
        r.delete(keys.reindex(state.alias) + ":lock")
        return state.model_copy(
            update={
                "phase": "refused",
                "gate": gate_line,
                "timings": timings,
                "message": f"not switched: {target.collection} kept (ready); --force to switch",
            }
        )
    t1 = time.monotonic()
    catalog.switch(target)
    timings["switch"] = round(time.monotonic() - t1, 3)
    return state.model_copy(
        update={
            "phase": "switched",
            "switched_at": time.time(),
            "gate": gate_line,
            "timings": timings,
            "done": acc.done,
        }
    )


def _settle_step(
    settings: Settings,
    r: redis.Redis,
    catalog: VersionCatalog,
    state: ReindexState,
    settle_s: float,
) -> ReindexState:
    """After the switch: replay what the old version received late onto the new one."""
    switched = state.switched_at or time.time()
    old = catalog.get(state.live)
    live = catalog.live()
    if old is not None and live is not None and catalog.has_ledger(old.ledger):
        acc = account(catalog.ledger_entries(old.ledger), catalog.ledger_entries(live.ledger))
        late = [e for e in acc.missing if e.updated_at and e.updated_at.timestamp() > switched - 60]
        # An ingest in flight at the switch may have written the old chunking into the
        # new version: its ledger entry says so, and it is ingested again.
        known = {e.doc_id for e in late}
        late += [
            e
            for e in catalog.ledger_entries(live.ledger)
            if e.status == "ok"
            and live.chunker
            and e.chunker != live.chunker
            and e.doc_id not in known
        ]
        if late and not _in_flight(r, settings, state):
            # Written as reindex tasks onto the new version, with its recorded chunking:
            # a worker that has not noticed the switch yet cannot write it otherwise.
            job = _submit(settings, r, live.collection, late, task=REINDEX_TASK)
            state = state.model_copy(update={"job_ids": (*state.job_ids, job)})
            return state
    if time.time() - switched < settle_s or _in_flight(r, settings, state):
        return state
    timings = {**state.timings, "settle": round(time.time() - switched, 3)}
    pruned = catalog.prune(_keep(catalog, state))
    r.delete(keys.reindex(state.alias) + ":lock")
    message = f"pruned {', '.join(v.collection for v in pruned)}" if pruned else ""
    return state.model_copy(update={"phase": "done", "timings": timings, "message": message})


def _keep(catalog: VersionCatalog, state: ReindexState) -> int:
    target = catalog.get(state.target)
    return ReindexSpec.model_validate_json(target.spec).keep if target and target.spec else 1

"""Driving a reindex: build the next version on the workers, check it, switch the alias.

:func:`start` records the target version (:mod:`chunkweave.storage.weaviate.alias`) with
its spec and takes the alias's reindex lock; :func:`advance` is one step of the
coordinator, run in a loop by ``chunkweave reindex`` or as the ``chunkweave.reindex_advance``
task (``POST /reindex``). Each step compares the live ledger with the target's
(:func:`chunkweave.storage.reindex.accounting.account`) and:

1. sends a ``chunkweave.reindex_document`` task (a job, like any backfill) for every
   live document the target lacks or holds at an older version, unless that job is
   still running; documents ingested into the live store meanwhile are *replayed* onto
   the target this way; documents deleted meanwhile are deleted from the target;
2. once the target accounts for every source, runs the retrieval gate (``--qa``) and
   switches both aliases, or stops with the target kept as ``ready``;
3. after the switch, for ``settle_s``, replays onto the new live version any document
   the old one received after the last comparison (an ingest in flight at the switch).

Everything it needs is in Weaviate (the catalog) or recomputed from the ledgers, so a
reindex resumes after its workers, its driver or Redis were killed: run the same
``chunkweave reindex`` again. An incomplete target is never switched.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import redis
from pydantic import BaseModel, ConfigDict, Field

from chunkweave.chunking.api import resolve_options
from chunkweave.chunking.fingerprint import chunker_fingerprint
from chunkweave.chunking.models import ChunkOptions
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.errors import StoreError
from chunkweave.storage.evaluate import QAItem
from chunkweave.storage.reindex.accounting import Accounting, account
from chunkweave.storage.reindex.follow import reachable
from chunkweave.storage.reindex.gate import GateResult, judge, score_store
from chunkweave.storage.reindex.plan import ReindexPlan, make_plan
from chunkweave.storage.reindex.spec import ReindexSpec
from chunkweave.storage.values import EmbedderIdentity, LedgerEntry
from chunkweave.storage.weaviate.alias import IndexCatalog, IndexVersion
from chunkweave.storage.weaviate.client import WeaviateSession, connect
from chunkweave.storage.weaviate.collection import REINDEX_HINT, create_chunk_collection
from chunkweave.storage.weaviate.ledger import WeaviateLedger
from chunkweave.storage.weaviate.schema import parse_identity
from chunkweave.storage.weaviate.store import WeaviateStore
from chunkweave.worker import keys
from chunkweave.worker.celery_app import make_app
from chunkweave.worker.jobs import DocState, JobStore, as_text
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import Settings
from chunkweave.worker.sources import fetched

Phase = Literal["building", "switched", "done", "refused", "incomplete", "rolled_back"]
#: Phases after which nothing more happens.
FINAL: frozenset[str] = frozenset({"done", "refused", "incomplete", "rolled_back"})
REINDEX_TASK = "chunkweave.reindex_document"
#: Seconds the reindex lock lives without a step renewing it.
LOCK_TTL_S = 600


class ReindexRefusedError(RuntimeError):
    """A reindex cannot start (another one runs, nothing to reindex, bad options)."""


class ReindexState(BaseModel):
    """A reindex as ``chunkweave status`` and ``GET /reindex`` show it (kept in Redis)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    alias: str
    target: str
    live: str
    phase: Phase = "building"
    job_ids: tuple[str, ...] = ()
    total: int = 0
    done: int = 0
    missing: int = 0
    failed: int = 0
    reused: int = 0
    embedded: int = 0
    started_at: float = Field(default_factory=time.time)
    updated_at: float = Field(default_factory=time.time)
    switched_at: float | None = None
    #: When the target last accounted for one more document (stall detection).
    progress_at: float = Field(default_factory=time.time)
    #: Seconds per stage: ``start``, ``build`` (until the target accounts for every
    #: source), ``gate``, ``switch``, ``settle``.
    timings: dict[str, float] = Field(default_factory=dict)
    gate: str | None = None
    message: str = ""

    def line(self) -> str:
        """One line of progress."""
        share = self.reused / (self.reused + self.embedded) if self.reused + self.embedded else 0
        return (
            f"reindex {self.alias} -> {self.target}: {self.phase}, {self.done}/{self.total} "
            f"documents, vectors {self.reused} reused / {self.embedded} embedded "
            f"({share:.0%} reused){', ' + self.message if self.message else ''}"
        )


def _save(r: redis.Redis, state: ReindexState) -> ReindexState:
    state = state.model_copy(update={"updated_at": time.time()})
    r.set(keys.reindex(state.alias), state.model_dump_json())
    return state


def load_state(r: redis.Redis, alias: str) -> ReindexState | None:
    """Return the alias's current or last reindex, or ``None``."""
    raw = r.get(keys.reindex(alias))
    return None if raw is None else ReindexState.model_validate_json(raw)


def status_lines(r: redis.Redis) -> list[str]:
    """One line per reindex Redis knows (for ``chunkweave status``)."""
    out: list[str] = []
    for key in sorted(r.scan_iter(match="cw:reindex:*", count=100)):
        name = key.decode() if isinstance(key, bytes) else str(key)
        if name.count(":") != 2:
            continue
        state = load_state(r, name.split(":", 2)[2])
        if state is not None:
            out.append(state.line())
    return out


@contextmanager
def open_catalog(cfg: WeaviateConfig) -> Iterator[IndexCatalog]:
    """Open a catalog on its own connection; a plain collection found there is adopted."""
    session = WeaviateSession(connect(cfg), cfg)
    try:
        catalog = IndexCatalog(session)
        catalog.ensure()
        if catalog.is_plain(catalog.alias) and catalog.get(catalog.alias) is None:
            config = session.client.collections.use(catalog.alias).config.get(simple=True)
            identity = parse_identity(config.description)
            if identity is None:
                raise StoreError(f"collection {catalog.alias!r} was not created by chunkweave")
            catalog.adopt(identity)
        yield catalog
    finally:
        session.close()


def version_cfg(cfg: WeaviateConfig, version: IndexVersion) -> WeaviateConfig:
    """``cfg`` addressing ``version``'s own collections (not through the aliases)."""
    return cfg.model_copy(
        update={
            "collection": version.collection,
            "ledger_collection": version.ledger,
            "versioned": False,
        }
    )


def ledger_entries(session: WeaviateSession, ledger: str) -> list[LedgerEntry]:
    """Every entry of ledger collection ``ledger``."""
    cfg = session.cfg.model_copy(update={"ledger_collection": ledger})
    return list(WeaviateLedger(WeaviateSession(session.client, cfg)).entries())


def target_embedder(spec: ReindexSpec, settings: Settings) -> Embedder:
    """Build the target's embedder, with the API key of this process's settings."""
    return make_embedder(spec.embedder.model_copy(update={"api_key": settings.embedder.api_key}))


def build_spec(
    settings: Settings,
    live: IndexVersion,
    *,
    chunking: ChunkOptions,
    embedder: Embedder,
    qa: tuple[QAItem, ...] = (),
    margin: float = 0.02,
    force: bool = False,
    keep: int = 1,
    reuse: bool = True,
) -> ReindexSpec:
    """Build the spec of a reindex of ``live`` to ``chunking`` with ``embedder``."""
    same = EmbedderIdentity(embedder.name, embedder.dimension) == live.identity
    live_spec = live.spec_dict()
    live_chunking = ChunkOptions(**live_spec["chunking"]) if live_spec else settings.chunking
    return ReindexSpec(
        chunking=resolve_options(chunking, embedder.max_tokens),
        embedder=settings.embedder,
        live_collection=live.collection,
        live_ledger=live.ledger,
        live_chunking=resolve_options(live_chunking, embedder.max_tokens)
        if same and reuse
        else None,
        qa=qa,
        margin=margin,
        force=force,
        keep=keep,
    )


def refuse_multi_tenant(cfg: WeaviateConfig) -> None:
    """Refuse a reindex of a multi-tenant store (:class:`ReindexRefusedError`).

    The coordinator accounts for one ledger; a switch of the alias moves every
    tenant at once, so a reindex that read one tenant's ledger would leave the
    others' documents behind in the old version. Until it walks every tenant, a
    multi-tenant store is rebuilt by re-ingesting into new collections.
    """
    if cfg.multi_tenancy:
        raise ReindexRefusedError(
            f"{cfg.collection} is multi-tenant: chunkweave reindex does not rebuild a "
            "multi-tenant store yet (a switch would move every tenant, and it accounts "
            "for one); point CHUNKWEAVE_WEAVIATE__COLLECTION and "
            "CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION at new names and re-ingest each "
            "tenant's documents instead"
        )


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
            session = catalog.session
            target = catalog.next_version(
                identity,
                chunker=chunker,
                spec=spec.to_json(),
                create=lambda name: create_chunk_collection(session, name, identity),
            )
        else:
            target = catalog.put(target.model_copy(update={"spec": spec.to_json()}))
        lock = keys.reindex(cfg.collection) + ":lock"
        taken = r.set(lock, target.collection, nx=True, ex=LOCK_TTL_S)
        if not taken and as_text(r.get(lock) or b"") != target.collection:
            raise ReindexRefusedError(f"a reindex of {cfg.collection} is running; one at a time")
    previous = load_state(r, cfg.collection)
    state = ReindexState(alias=cfg.collection, target=target.collection, live=live.collection)
    if (
        previous is not None
        and previous.target == target.collection
        and previous.phase == "building"
    ):
        state = previous.model_copy(update={"message": "resumed"})
    else:
        reset_stats(r, cfg.collection)
    timings = {**state.timings, "start": round(time.monotonic() - started, 3)}
    return _save(r, state.model_copy(update={"timings": timings}))


class SpecFactory:
    """Builds the spec against the live version (the CLI and the API pass one)."""

    def __init__(self, settings: Settings, **options: object) -> None:
        self.settings = settings
        self.options = options
        self.embedder: Embedder | None = None

    def __call__(self, live: IndexVersion) -> ReindexSpec:
        """Build the spec for ``live``."""
        self.embedder = self.embedder or make_embedder(self.settings.embedder)
        return build_spec(self.settings, live, embedder=self.embedder, **self.options)  # type: ignore[arg-type]


def _submit(
    settings: Settings, r: redis.Redis, target: str, entries: list[LedgerEntry], *, task: str
) -> str:
    """Submit a job with one task per entry (``task``: reindex onto ``target``, or ingest)."""
    jobs = JobStore(r, ttl_s=settings.job_ttl_s)
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
            app.send_task(task, kwargs=kwargs, queue=settings.queue)
        jobs.seal(job_id)
        return job_id
    finally:
        app.close()


def _in_flight(r: redis.Redis, settings: Settings, state: ReindexState) -> bool:
    if not state.job_ids:
        return False
    job = JobStore(r, ttl_s=settings.job_ttl_s).get(state.job_ids[-1])
    return job is not None and job.finished_at is None


def _stats(r: redis.Redis, alias: str) -> tuple[int, int]:
    got = r.hmget(keys.reindex(alias) + ":stats", "reused", "embedded")
    return int(got[0] or 0), int(got[1] or 0)


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
        return _save(r, state)
    finally:
        r.delete(step)


def _build_step(
    settings: Settings,
    r: redis.Redis,
    catalog: IndexCatalog,
    state: ReindexState,
    stall_s: float,
) -> ReindexState:
    target = catalog.get(state.target)
    if target is None:
        return state.model_copy(update={"phase": "incomplete", "message": "target was dropped"})
    spec = ReindexSpec.model_validate_json(target.spec)
    session = catalog.session
    acc = account(ledger_entries(session, spec.live_ledger), ledger_entries(session, target.ledger))
    reused, embedded = _stats(r, state.alias)
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
        last = JobStore(r, ttl_s=settings.job_ttl_s).get(state.job_ids[-1], with_docs=True)
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
    store = WeaviateStore(connect(cfg), version_cfg(cfg, version), version.identity)
    try:
        ledger = store.open_ledger()
        for doc_id in doc_ids:
            store.delete_doc(doc_id)
            ledger.delete(doc_id)
    finally:
        store.close()


def _gate(
    settings: Settings, catalog: IndexCatalog, target: IndexVersion, spec: ReindexSpec
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
        store = WeaviateStore(connect(cfg), version_cfg(cfg, version), version.identity)
        try:
            store.ensure_schema()
            scores.append(score_store(store, embedder, spec.qa))
        finally:
            store.close()
    return judge(scores[0], scores[1], spec.margin)


def _gate_and_switch(
    settings: Settings,
    r: redis.Redis,
    catalog: IndexCatalog,
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
    catalog: IndexCatalog,
    state: ReindexState,
    settle_s: float,
) -> ReindexState:
    """After the switch: replay what the old version received late onto the new one."""
    switched = state.switched_at or time.time()
    old = catalog.get(state.live)
    live = catalog.live()
    if (
        old is not None
        and live is not None
        and catalog.session.client.collections.exists(old.ledger)
    ):
        acc = account(
            ledger_entries(catalog.session, old.ledger),
            ledger_entries(catalog.session, live.ledger),
        )
        late = [e for e in acc.missing if e.updated_at and e.updated_at.timestamp() > switched - 60]
        # An ingest in flight at the switch may have written the old chunking into the
        # new version: its ledger entry says so, and it is ingested again.
        known = {e.doc_id for e in late}
        late += [
            e
            for e in ledger_entries(catalog.session, live.ledger)
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


def _keep(catalog: IndexCatalog, state: ReindexState) -> int:
    target = catalog.get(state.target)
    return ReindexSpec.model_validate_json(target.spec).keep if target and target.spec else 1


def rollback(settings: Settings) -> IndexVersion:
    """Point the aliases back at the previous version (refused while a reindex runs)."""
    cfg = settings.weaviate
    r = redis_client(settings)
    if r.get(keys.reindex(cfg.collection) + ":lock") is not None:
        raise ReindexRefusedError(f"a reindex of {cfg.collection} is running; rollback after it")
    with open_catalog(cfg) as catalog:
        restored = catalog.rollback()
    state = load_state(r, cfg.collection)
    if state is not None:
        _save(
            r,
            state.model_copy(
                update={"phase": "rolled_back", "message": f"live: {restored.collection}"}
            ),
        )
    return restored


def prune(settings: Settings, keep: int) -> list[IndexVersion]:
    """Drop retired versions beyond the ``keep`` newest."""
    with open_catalog(settings.weaviate) as catalog:
        return catalog.prune(keep)


def versions(settings: Settings) -> list[IndexVersion]:
    """Every recorded version of the configured alias."""
    with open_catalog(settings.weaviate) as catalog:
        return catalog.versions()


def add_stats(r: redis.Redis, alias: str, *, reused: int, embedded: int) -> None:
    """Count vectors a reindex task reused and embedded."""
    pipe = r.pipeline(transaction=False)
    pipe.hincrby(keys.reindex(alias) + ":stats", "reused", reused)
    pipe.hincrby(keys.reindex(alias) + ":stats", "embedded", embedded)
    pipe.execute()


def reset_stats(r: redis.Redis, alias: str) -> None:
    """Start a new reindex's vector counts at zero."""
    r.delete(keys.reindex(alias) + ":stats")


__all__ = [
    "FINAL",
    "ReindexRefusedError",
    "ReindexState",
    "SpecFactory",
    "advance",
    "build_spec",
    "check_embedder",
    "dry_run",
    "load_state",
    "prune",
    "rollback",
    "start",
    "status_lines",
    "versions",
]


def dry_run(settings: Settings, spec_for: SpecFactory) -> ReindexPlan:
    """Plan the reindex ``spec_for`` describes (nothing is written or locked)."""
    cfg = settings.weaviate
    refuse_multi_tenant(cfg)
    with open_catalog(cfg) as catalog:
        live = catalog.live()
        if live is None:
            raise ReindexRefusedError(f"{cfg.collection}: nothing to reindex (ingest first)")
        spec = spec_for(live)
        embedder = spec_for.embedder or target_embedder(spec, settings)
        entries = ledger_entries(catalog.session, live.ledger)
        store = None
        if spec.live_chunking is not None:
            store = WeaviateStore(connect(cfg), version_cfg(cfg, live), live.identity)
        try:
            return make_plan(
                entries,
                lambda source: fetched(source, settings),
                parse_opts=settings.parse,
                target_chunking=spec.chunking,
                embedder=embedder,
                live_store=store,
                live_chunking=spec.live_chunking,
            )
        finally:
            if store is not None:
                store.close()


def check_embedder(settings: Settings) -> None:
    """Refuse, naming ``chunkweave reindex``, an embedder that is not the live version's.

    Raises :class:`ReindexRefusedError`; nothing to check (no Weaviate URL, nothing
    stored yet) passes.
    """
    cfg = settings.weaviate
    if cfg.url is None or not reachable(cfg):
        return  # tasks report an unreachable store, as before
    try:
        with open_catalog(cfg) as catalog:
            live = catalog.live()
    except StoreError:
        return
    if live is None:
        return
    embedder = make_embedder(settings.embedder)
    mine = EmbedderIdentity(embedder.name, embedder.dimension)
    if mine != live.identity:
        raise ReindexRefusedError(
            f"{cfg.collection} ({live.collection}) holds vectors from {live.identity}, but this "
            f"worker's embedder is {mine}: {REINDEX_HINT}"
        )

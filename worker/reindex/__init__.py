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

from chunkweave.worker.reindex.coordinator import advance, start
from chunkweave.worker.reindex.state import (
    FINAL,
    LOCK_TTL_S,
    REINDEX_TASK,
    ReindexRefusedError,
    ReindexState,
    add_stats,
    load_state,
    reset_stats,
    status_lines,
)
from chunkweave.worker.reindex.versions import (
    SpecFactory,
    build_spec,
    check_embedder,
    dry_run,
    prune,
    refuse_multi_tenant,
    rollback,
    target_embedder,
    versions,
)

__all__ = [
    "FINAL",
    "LOCK_TTL_S",
    "REINDEX_TASK",
    "ReindexRefusedError",
    "ReindexState",
    "SpecFactory",
    "add_stats",
    "advance",
    "build_spec",
    "check_embedder",
    "dry_run",
    "load_state",
    "prune",
    "refuse_multi_tenant",
    "reset_stats",
    "rollback",
    "start",
    "status_lines",
    "target_embedder",
    "versions",
]

"""Every Redis key chunkweave uses: one place, one ``cw:`` prefix.

Modules never spell a ``cw:`` key themselves; they build it here, so what lives in
Redis can be read off this module (and a key collision is visible in one screen):

- ``cw:jobs``: sorted set of job ids by creation time; ``cw:job:<id>`` and its
  ``:docs``, ``:<status>`` and ``:finished`` sub-keys: a job's state (:mod:`.jobs`);
  ``:owners``, ``:tasks`` and ``:requeues``: who holds each unfinished document, the
  task that processes it and how often it was requeued (:mod:`.ownership`).
  ``cw:jobs:active``: the jobs not finished yet (what the reconciler looks at).
- ``cw:worker:<id>``: a worker's heartbeat (short TTL); ``cw:workers``: every worker
  that ever beat, by last beat (:mod:`.heartbeat`). ``cw:reconcile:lock:<queue>`` (one
  reconciler per service at a time) and ``cw:reconcile`` (what it last saw) (:mod:`.reconcile`).
- ``cw:metrics``: the service counters (:mod:`.metrics`).
- ``cw:lock:<doc_id>``: the document's write lock or lease; ``cw:attempts:<doc_id>:<sha1>``
  (``:<part>`` for a fan-out task): its poison counter (:mod:`.locks`).
- ``cw:fan:<doc_id>:<sha1>``: a fanned-out document's parsed page-range parts, and
  under ``cw:fan:<doc_id>:<sha1>:w`` its chunk slices and its write plan
  (:mod:`.tasks.parts`, :mod:`.tasks.fanout`, :mod:`.tasks.slices`).
- ``cw:reindex:<alias>``: the running or last reindex of an alias, with its ``:lock``
  (one reindex at a time), ``:step`` (one coordinator step at a time) and ``:stats``
  (vectors reused vs embedded) (:mod:`.reindex`).
- ``cw:watch:<folder>``, ``cw:s3ledger:<bucket>/<prefix>``: what a watcher last
  enqueued (:mod:`.sources.local`, :mod:`.sources.s3`).
- ``cw:uploads``: how many queued documents hold each uploaded file, and
  ``cw:upload-lock:<sha1 of its source>`` (:mod:`.uploads`).
"""

from __future__ import annotations

import hashlib

#: Sorted set of job ids by creation time.
JOBS = "cw:jobs"
#: Hash of the service counters every worker and API replica shares.
METRICS = "cw:metrics"
#: Set of the ids of jobs that have not finished.
ACTIVE_JOBS = "cw:jobs:active"
#: Sorted set of worker ids by the time of their last heartbeat.
WORKERS = "cw:workers"
#: The reconciler's memory (the Redis run id it last saw).
RECONCILE_STATE = "cw:reconcile"
#: Hash of uploaded file (its source) -> documents queued on it that have not ended.
UPLOAD_HOLDS = "cw:uploads"


def job(job_id: str) -> str:
    """Return the hash of one job's totals, the base of its per-document keys."""
    return f"cw:job:{job_id}"


def reconcile_lock(queue: str) -> str:
    """Return the lock held by the one active reconciler of ``queue``'s service."""
    return f"cw:reconcile:lock:{queue}"


def heartbeat(worker_id: str) -> str:
    """Return the key of one worker's heartbeat (what it holds; expires when it dies)."""
    return f"cw:worker:{worker_id}"


def upload_lock(source: str) -> str:
    """Return the lock taken while an uploaded file is stored, held or released."""
    return f"cw:upload-lock:{hashlib.sha1(source.encode()).hexdigest()}"


def lock(doc_id: str) -> str:
    """Return the document's write lock (held by one task, or leased across a fan-out's)."""
    return f"cw:lock:{doc_id}"


def attempts(doc_id: str, doc_sha1: str, part: str = "") -> str:
    """Return the attempt counter of one version of a document, or of one fan-out part."""
    return f"cw:attempts:{doc_id}:{doc_sha1}{':' + part if part else ''}"


def fanout_parts(doc_id: str, doc_sha1: str) -> str:
    """Return the base of a fan-out's parsed page-range parts (one document version)."""
    return f"cw:fan:{doc_id}:{doc_sha1}"


def fanout_slices(doc_id: str, doc_sha1: str) -> str:
    """Return the base of a fan-out's chunk slices and of the plan they are written under."""
    return f"cw:fan:{doc_id}:{doc_sha1}:w"


def watched_folder(root: str) -> str:
    """Return the hash of path -> ``mtime:size`` the folder watcher last enqueued."""
    return f"cw:watch:{root}"


def watched_prefix(bucket: str, prefix: str) -> str:
    """Return the hash of key -> ETag the S3 watcher last enqueued."""
    return f"cw:s3ledger:{bucket}/{prefix}"


def reindex(alias: str) -> str:
    """Return the base of an alias's reindex state (``:lock``, ``:step``, ``:stats`` below it)."""
    return f"cw:reindex:{alias}"

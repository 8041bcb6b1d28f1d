"""Who holds each unfinished document of a job: the job record owns the work.

Three hashes sit beside a job's state (:mod:`.jobs`), all keyed by ``doc_id``:

- ``cw:job:<id>:owners``: ``worker|task_id|since``. Written when a worker *receives*
  the document's task (``task_received``, before it runs or while it waits for a
  retry's countdown); ``worker`` is empty while the message is meant to be back in the
  broker's queue (requeued, or handed back for a retry). A queued document with no
  record has been in the queue since its ``queued_at``. Removed when the task
  ends (the owner's own record only: compare-and-delete) and when the document is final.
- ``cw:job:<id>:tasks``: ``{"name", "kwargs"}`` of the task that processes the
  document, recorded by the producer, so the reconciler can send it again with the
  same arguments whatever the broker lost.
- ``cw:job:<id>:requeues``: how often the reconciler requeued the document.

So whatever the broker loses (a Redis restart, a dead worker host), the job record
still says which documents are queued or running, who runs them and since when;
:mod:`.reconcile` acts on it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis

from chunkweave.worker import keys

#: Tasks whose message stands for one document of a job (what the owners record).
DOC_TASKS = frozenset({"chunkweave.ingest_document", "chunkweave.delete_document"})

_SEP = "|"

# Compare-and-set on the owner record's ``worker|task_id|`` prefix.
_SET_IF_OWNER = """
local v = redis.call('hget', KEYS[1], ARGV[1])
if v and string.sub(v, 1, string.len(ARGV[2])) == ARGV[2] then
    redis.call('hset', KEYS[1], ARGV[1], ARGV[3])
    return 1
end
return 0
"""
_DEL_IF_OWNER = """
local v = redis.call('hget', KEYS[1], ARGV[1])
if v and string.sub(v, 1, string.len(ARGV[2])) == ARGV[2] then
    return redis.call('hdel', KEYS[1], ARGV[1])
end
return 0
"""


@dataclass(frozen=True)
class Owner:
    """Who holds a document: a worker id (``""``: the broker's queue), its task, since when."""

    worker: str
    task_id: str
    since: float

    def encode(self) -> str:
        """Return the stored form ``worker|task_id|since``."""
        return _SEP.join((self.worker, self.task_id, repr(self.since)))

    @classmethod
    def decode(cls, raw: bytes | str) -> Owner:
        """Parse the stored form (the worker id may itself hold no ``|``)."""
        text = raw.decode() if isinstance(raw, bytes) else raw
        worker, task_id, since = text.rsplit(_SEP, 2)
        return cls(worker, task_id, float(since))


def owner_label(raw: bytes | str) -> str:
    """Show an owner record: ``worker task-id``, or ``queue task-id`` while it waits there."""
    owner = Owner.decode(raw)
    return f"{owner.worker or 'queue'} {owner.task_id}".strip()


def owners_key(job_id: str) -> str:
    """Return the hash of ``doc_id`` -> owner of one job."""
    return f"{keys.job(job_id)}:owners"


def tasks_key(job_id: str) -> str:
    """Return the hash of ``doc_id`` -> the task (name, kwargs) of one job."""
    return f"{keys.job(job_id)}:tasks"


def requeues_key(job_id: str) -> str:
    """Return the hash of ``doc_id`` -> times requeued, of one job."""
    return f"{keys.job(job_id)}:requeues"


def _prefix(worker: str, task_id: str) -> str:
    return f"{worker}{_SEP}{task_id}{_SEP}"


def remember_tasks(
    client: redis.Redis,
    job_id: str,
    tasks: Mapping[str, tuple[str, Mapping[str, Any]]],
    *,
    queue: str,
    ttl_s: int,
) -> None:
    """Record, per ``doc_id``, the task sent for it (``(name, kwargs)``), and the job's queue.

    No owner record is written: a document without one is in the queue since its
    ``queued_at``, so the owners hash stays as small as what workers hold. The queue
    says which service's reconciler looks after the job (several may share a Redis).
    """
    if not tasks:
        return
    pipe = client.pipeline(transaction=False)
    pipe.hset(keys.job(job_id), "queue", queue)
    pipe.hset(
        tasks_key(job_id),
        mapping={d: json.dumps({"name": n, "kwargs": dict(k)}) for d, (n, k) in tasks.items()},
    )
    pipe.expire(tasks_key(job_id), ttl_s)
    pipe.execute()


def task_of(client: redis.Redis, job_id: str, doc_id: str) -> tuple[str, dict[str, Any]] | None:
    """Return the task (name, kwargs) recorded for a document, or None."""
    raw = client.hget(tasks_key(job_id), doc_id)
    if raw is None:
        return None
    data = json.loads(raw)
    return str(data["name"]), dict(data["kwargs"])


def claim(
    client: redis.Redis,
    job_id: str,
    doc_id: str,
    *,
    worker: str,
    task_id: str,
    name: str,
    kwargs: Mapping[str, Any],
    ttl_s: int,
) -> None:
    """Record that ``worker`` received ``task_id`` for the document (it holds it now)."""
    pipe = client.pipeline(transaction=False)
    pipe.hset(owners_key(job_id), doc_id, Owner(worker, task_id, time.time()).encode())
    pipe.hsetnx(tasks_key(job_id), doc_id, json.dumps({"name": name, "kwargs": dict(kwargs)}))
    pipe.expire(owners_key(job_id), ttl_s)
    pipe.expire(tasks_key(job_id), ttl_s)
    pipe.execute()


def hand_back(client: redis.Redis, job_id: str, doc_id: str, *, worker: str, task_id: str) -> bool:
    """Mark the document as back in the queue (a retry is sent), if ``worker`` holds it.

    Called *before* the retry's message is published, so whoever receives that message
    next records itself after this.
    """
    back = Owner("", task_id, time.time()).encode()
    prefix = _prefix(worker, task_id)
    return bool(client.eval(_SET_IF_OWNER, 1, owners_key(job_id), doc_id, prefix, back))


def release(client: redis.Redis, job_id: str, doc_id: str, *, worker: str, task_id: str) -> bool:
    """Forget the owner record if it is still ``worker``'s for ``task_id`` (the task ended)."""
    prefix = _prefix(worker, task_id)
    return bool(client.eval(_DEL_IF_OWNER, 1, owners_key(job_id), doc_id, prefix))


def requeued(client: redis.Redis, job_id: str, doc_id: str, task_id: str) -> None:
    """Record that a new message ``task_id`` for the document is in the queue."""
    client.hset(owners_key(job_id), doc_id, Owner("", task_id, time.time()).encode())


def owners(client: redis.Redis, job_id: str) -> dict[str, Owner]:
    """Return every owner record of a job."""
    raw = client.hgetall(owners_key(job_id))
    out: dict[str, Owner] = {}
    for doc_id, value in raw.items():
        key = doc_id.decode() if isinstance(doc_id, bytes) else str(doc_id)
        try:
            out[key] = Owner.decode(value)
        except ValueError:
            continue  # written by something else: not an owner record
    return out


def count_requeue(client: redis.Redis, job_id: str, doc_id: str, ttl_s: int) -> int:
    """Increment and return how often the document was requeued."""
    pipe = client.pipeline(transaction=True)
    pipe.hincrby(requeues_key(job_id), doc_id, 1)
    pipe.expire(requeues_key(job_id), ttl_s)
    count, _ = pipe.execute()
    return int(count)

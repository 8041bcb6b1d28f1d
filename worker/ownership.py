r"""Who holds each unfinished document of a job: the job record owns the work.

Three hashes sit beside a job's state (:mod:`.jobs`), all keyed by a *work field*:
the ``doc_id`` for a task that stands for a whole document, ``<doc_id>\x1f<step>``
for one step of a fanned-out PDF (``part3``, ``finish``, ``slice0``, ``commit``:
:func:`work_field`), so the parts and slices of a big document are owned as a whole
document is:

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
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis

from chunkweave.worker import keys

#: Tasks whose message stands for one document of a job (what the owners record).
DOC_TASKS = frozenset({"chunkweave.ingest_document", "chunkweave.delete_document"})
#: The steps of a fanned-out document (:mod:`.tasks.fanout`, :mod:`.tasks.slices`) and
#: the name each gives its work field; ``{index}`` is the part's or slice's number.
STEP_TASKS = {
    "chunkweave.parse_part": "part{index}",
    "chunkweave.finish_document": "finish",
    "chunkweave.embed_slice": "slice{index}",
    "chunkweave.commit_document": "commit",
}
#: Every task whose message the job record owns.
OWNED_TASKS = DOC_TASKS | frozenset(STEP_TASKS)

_SEP = "|"
#: Between a document id and its step in a work field (no document id holds one).
STEP_SEP = "\x1f"
_STEP_RE = re.compile(r"(part|slice)\d+|finish|commit")

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

# Record a task and its queue marker in one step; with ARGV[4] == 1 only if the field
# has no task yet.
_ANNOUNCE = """
if ARGV[4] == '1' then
    if redis.call('hsetnx', KEYS[1], ARGV[1], ARGV[2]) == 0 then
        return 0
    end
else
    redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
end
redis.call('hset', KEYS[2], ARGV[1], ARGV[3])
redis.call('expire', KEYS[1], ARGV[5])
redis.call('expire', KEYS[2], ARGV[5])
return 1
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


def work_field(name: str, kwargs: Mapping[str, Any]) -> str | None:
    """Return the work field of a task's message (``doc_id`` or ``doc_id``+step), else None.

    None for a task the job record does not own, or one without ``job_id``/``doc_id``.
    """
    if name not in OWNED_TASKS or "job_id" not in kwargs or "doc_id" not in kwargs:
        return None
    doc_id = str(kwargs["doc_id"])
    step = STEP_TASKS.get(name)
    if step is None:
        return doc_id
    return f"{doc_id}{STEP_SEP}{step.format(index=kwargs.get('index', 0))}"


def split_field(field: str) -> tuple[str, str]:
    """Return (doc_id, step) of a work field; the step is ``""`` for a whole document."""
    doc_id, sep, step = field.rpartition(STEP_SEP)
    if sep and _STEP_RE.fullmatch(step):
        return doc_id, step
    return field, ""


def doc_of_field(field: str) -> str:
    """Return the document id of a work field."""
    return split_field(field)[0]


def owner_label(raw: bytes | str) -> str:
    """Show an owner record: ``worker task-id``, or ``queue task-id`` while it waits there."""
    owner = Owner.decode(raw)
    return f"{owner.worker or 'queue'} {owner.task_id}".strip()


def doc_owner_label(doc_id: str, held: Mapping[str, str]) -> str | None:
    """Show who holds a document: its own record, else its fan-out steps' (``w1 part3; ...``).

    ``held`` is a job's owner records as stored (work field -> record).
    """
    raw = held.get(doc_id)
    if raw is not None:
        return owner_label(raw)
    steps = []
    for field, record in sorted(held.items()):
        of, step = split_field(field)
        if of == doc_id and step:
            owner = Owner.decode(record)
            steps.append(f"{owner.worker or 'queue'} {step}")
    return "; ".join(steps) or None


def owners_key(job_id: str) -> str:
    """Return the hash of work field -> owner of one job."""
    return f"{keys.job(job_id)}:owners"


def tasks_key(job_id: str) -> str:
    """Return the hash of work field -> the task (name, kwargs) of one job."""
    return f"{keys.job(job_id)}:tasks"


def requeues_key(job_id: str) -> str:
    """Return the hash of work field -> times requeued, of one job."""
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


def task_of(client: redis.Redis, job_id: str, field: str) -> tuple[str, dict[str, Any]] | None:
    """Return the task (name, kwargs) recorded for a work field, or None."""
    raw = client.hget(tasks_key(job_id), field)
    if raw is None:
        return None
    data = json.loads(raw)
    return str(data["name"]), dict(data["kwargs"])


def claim(
    client: redis.Redis,
    job_id: str,
    field: str,
    *,
    worker: str,
    task_id: str,
    name: str,
    kwargs: Mapping[str, Any],
    ttl_s: int,
) -> None:
    """Record that ``worker`` received ``task_id`` for the work (it holds it now)."""
    pipe = client.pipeline(transaction=False)
    pipe.hset(owners_key(job_id), field, Owner(worker, task_id, time.time()).encode())
    pipe.hsetnx(tasks_key(job_id), field, json.dumps({"name": name, "kwargs": dict(kwargs)}))
    pipe.expire(owners_key(job_id), ttl_s)
    pipe.expire(tasks_key(job_id), ttl_s)
    pipe.execute()


def hand_back(client: redis.Redis, job_id: str, field: str, *, worker: str, task_id: str) -> bool:
    """Mark the work as back in the queue (a retry is sent), if ``worker`` holds it.

    Called *before* the retry's message is published, so whoever receives that message
    next records itself after this.
    """
    back = Owner("", task_id, time.time()).encode()
    prefix = _prefix(worker, task_id)
    return bool(client.eval(_SET_IF_OWNER, 1, owners_key(job_id), field, prefix, back))


def release(client: redis.Redis, job_id: str, field: str, *, worker: str, task_id: str) -> bool:
    """Forget the owner record if it is still ``worker``'s for ``task_id`` (the task ended)."""
    prefix = _prefix(worker, task_id)
    return bool(client.eval(_DEL_IF_OWNER, 1, owners_key(job_id), field, prefix))


def requeued(client: redis.Redis, job_id: str, field: str, task_id: str) -> None:
    """Record that a new message ``task_id`` for the work is in the queue."""
    client.hset(owners_key(job_id), field, Owner("", task_id, time.time()).encode())


def owners(client: redis.Redis, job_id: str) -> dict[str, Owner]:
    """Return every owner record of a job."""
    raw = client.hgetall(owners_key(job_id))
    out: dict[str, Owner] = {}
    for field, value in raw.items():
        key = _text(field)
        try:
            out[key] = Owner.decode(value)
        except ValueError:
            continue  # written by something else: not an owner record
    return out


def announce(
    client: redis.Redis,
    job_id: str,
    field: str,
    *,
    name: str,
    kwargs: Mapping[str, Any],
    task_id: str,
    ttl_s: int,
    once: bool = False,
) -> bool:
    """Record a step's task (name, kwargs) and mark it in the queue, before it is sent.

    With ``once``, only the first call for ``field`` records it and returns True (the
    caller sends only then): a step started by whichever sibling completes a set (the
    join, the commit) is started once even when that sibling runs twice. A caller
    that dies between this and its send leaves a queue marker with no message, which
    the reconciler's audit sends again.
    """
    task = json.dumps({"name": name, "kwargs": dict(kwargs)})
    marker = Owner("", task_id, time.time()).encode()
    keys_ = (tasks_key(job_id), owners_key(job_id))
    return bool(client.eval(_ANNOUNCE, 2, *keys_, field, task, marker, int(once), ttl_s))


def forget_steps(client: redis.Redis, job_id: str, doc_id: str) -> None:
    """Forget a document's fan-out steps (a new fan-out of it starts from scratch)."""
    prefix = f"{doc_id}{STEP_SEP}"
    for key in (tasks_key(job_id), owners_key(job_id), requeues_key(job_id)):
        stale = [f for f in client.hkeys(key) if _text(f).startswith(prefix)]
        if stale:
            client.hdel(key, *stale)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def count_requeue(client: redis.Redis, job_id: str, field: str, ttl_s: int) -> int:
    """Increment and return how often the work was requeued."""
    pipe = client.pipeline(transaction=True)
    pipe.hincrby(requeues_key(job_id), field, 1)
    pipe.expire(requeues_key(job_id), ttl_s)
    count, _ = pipe.execute()
    return int(count)

"""Per-document write lock and poison-attempt counting, both in Redis.

The lock is short (``ttl_s``) and renewed by a daemon thread every third of it while
the holder lives; a worker that dies (SIGKILL, OOM, hard time limit) stops renewing,
so its lock frees itself within ``ttl_s``. Its value names the holder (worker id and
task id), so a task or the reconciler that finds it held by a dead holder breaks it at
once instead of waiting that out.

Attempt counters are keyed by (doc_id, content SHA1): a task increments before it
starts work and clears the counter whenever it ends in any recorded way. Only a
worker that dies mid-task leaves the increment behind, so the counter counts
crashes; past ``max_attempts`` the document is recorded failed as ``poison``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from types import TracebackType

import redis

from chunkweave.worker import keys

log = logging.getLogger(__name__)


class DocLock:
    """Context manager holding ``cw:lock:<doc_id>`` while the document is written.

    The lock's value names its holder: ``worker|task_id|acquired_at|nonce`` (see
    :mod:`chunkweave.worker.heartbeat`). A lock whose holder is known dead is broken
    at once instead of waited out (:func:`holder_is_dead`): its worker's heartbeat is
    gone, or it is this very task's earlier delivery (the broker redelivers a message
    only once the delivery before it died). ``acquired`` tells whether the lock was
    obtained within ``wait_s``; callers that did not get it must not write (they
    retry later).
    """

    def __init__(
        self,
        client: redis.Redis,
        doc_id: str,
        *,
        ttl_s: int,
        wait_s: float,
        worker: str = "",
        task_id: str = "",
    ) -> None:
        self._client = client
        self._key = keys.lock(doc_id)
        self._ttl_ms = ttl_s * 1000
        self._ttl_s = ttl_s
        self._wait_s = wait_s
        self._task_id = task_id
        self._value = lock_value(worker, task_id)
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.acquired = False
        #: The holder whose dead lock this one broke (for the log), if any.
        self.broke: str | None = None

    def __enter__(self) -> DocLock:
        deadline = time.monotonic() + self._wait_s
        while True:
            if self._client.set(self._key, self._value, nx=True, px=self._ttl_ms):
                self.acquired = True
                break
            held = self._client.get(self._key)
            if held is not None and holder_is_dead(self._client, held, self._task_id):
                if break_lock(self._client, self._key, held):
                    self.broke = held.decode() if isinstance(held, bytes) else str(held)
                    log.info("%s: broke the lock of a dead holder (%s)", self._key, self.broke)
                continue
            if time.monotonic() >= deadline:
                break
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        if self.acquired:
            self._renewer = threading.Thread(target=self._renew, daemon=True)
            self._renewer.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(self._ttl_s / 3):
            try:
                if not extend_lock(self._client, self._key, self._value, self._ttl_ms):
                    return  # lost it (broken or expired); the holder finds out on release
            except redis.RedisError:
                continue  # Redis away for a moment: try again at the next tick

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
        if self.acquired:
            with contextlib.suppress(redis.RedisError):  # expired meanwhile: nothing to release
                break_lock(self._client, self._key, self._value)


def lock_value(worker: str, task_id: str) -> str:
    """Return a lock value naming its holder: ``worker|task_id|acquired_at|nonce``."""
    return f"{worker}|{task_id}|{time.time()!r}|{uuid.uuid4().hex[:8]}"


def lock_holder(value: bytes | str) -> tuple[str, str, float] | None:
    """Return (worker, task_id, acquired_at) named by a lock value, None if it names none."""
    text = value.decode() if isinstance(value, bytes) else value
    parts = text.split("|")
    if len(parts) < 4:
        return None  # a lease token or an older lock: no holder named
    try:
        return "|".join(parts[:-3]), parts[-3], float(parts[-2])
    except ValueError:
        return None


def holder_is_dead(client: redis.Redis, value: bytes | str, task_id: str = "") -> bool:
    """Tell whether the lock ``value``'s holder is known dead (so the lock may be broken).

    Dead: a registered worker whose heartbeat expired; or, seen from task ``task_id``,
    an earlier delivery of that same task (the broker redelivers only a message whose
    delivery died: the worker was lost, or the visibility timeout, longer than the hard
    time limit, passed); or a live worker whose heartbeat, written after the lock was
    taken, no longer holds the task (its pool child died). A holder that names no
    worker is never judged dead: its lock expires by its TTL.
    """
    from chunkweave.worker.heartbeat import beat_of, is_gone

    holder = lock_holder(value)
    if holder is None:
        return False
    worker, holder_task, acquired_at = holder
    if task_id and holder_task == task_id:
        return True
    if not worker:
        return False
    if is_gone(client, worker):
        return True
    beat = beat_of(client, worker)
    return beat is not None and beat.at > acquired_at + 1.0 and holder_task not in beat.tasks


def break_lock(client: redis.Redis, key: str, value: bytes | str) -> bool:
    """Delete the lock ``key`` if it still holds ``value``; True if it was deleted."""
    return bool(client.eval(_DELETE_IF_OWNER, 1, key, value))


def extend_lock(client: redis.Redis, key: str, value: bytes | str, ttl_ms: int) -> bool:
    """Set the lock ``key`` to expire in ``ttl_ms`` if it still holds ``value``."""
    return bool(client.eval(_EXTEND_IF_OWNER, 1, key, value, ttl_ms))


# A lease is the same key as DocLock, held across the tasks of one fanned-out write
# (chunk slices embedded by several workers, then a commit) under a shared token.
_EXTEND_IF_OWNER = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
_DELETE_IF_OWNER = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
"""
_PASS_IF_OWNER = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3])
    return 1
end
return 0
"""


def take_lease(
    client: redis.Redis, doc_id: str, *, ttl_s: int, worker: str = "", task_id: str = ""
) -> str | None:
    """Take the document's write lock as a lease for several tasks; its value or None.

    The value names the taker (``worker``, ``task_id``) as :class:`DocLock`'s does, so
    a lock or lease whose holder is dead is broken at once, and a dead taker's lease
    is broken by the next one. Unlike :class:`DocLock` nothing renews it: ``ttl_s``
    must cover the time until the last task holding it ends (each extends it with
    :func:`hold_lease`); :func:`pass_lease` hands it to a token naming no holder.
    """
    value = lock_value(worker, task_id)
    key = keys.lock(doc_id)
    for _ in range(2):
        if client.set(key, value, nx=True, ex=ttl_s):
            return value
        held = client.get(key)
        if held is None or not holder_is_dead(client, held, task_id):
            continue
        if break_lock(client, key, held):
            log.info("%s: broke the lease of a dead holder (%s)", key, held)
    return None


def pass_lease(client: redis.Redis, doc_id: str, value: str, token: str, *, ttl_s: int) -> bool:
    """Hand the lease held as ``value`` on to ``token`` (a write's); False if it was lost."""
    return bool(client.eval(_PASS_IF_OWNER, 1, keys.lock(doc_id), value, token, ttl_s * 1000))


def hold_lease(client: redis.Redis, doc_id: str, token: str, *, ttl_s: int) -> bool:
    """Extend the lease if ``token`` still owns it; False when it was lost."""
    return extend_lock(client, keys.lock(doc_id), token, ttl_s * 1000)


def drop_lease(client: redis.Redis, doc_id: str, token: str) -> None:
    """Release the lease if ``token`` still owns it."""
    break_lock(client, keys.lock(doc_id), token)


def _attempts_key(doc_id: str, doc_sha1: str, part: str = "") -> str:
    return keys.attempts(doc_id, doc_sha1, part)


def count_attempt(
    client: redis.Redis, doc_id: str, doc_sha1: str, *, ttl_s: int, part: str = ""
) -> int:
    """Increment and return the attempt count of this document version (or part)."""
    key = _attempts_key(doc_id, doc_sha1, part)
    pipe = client.pipeline(transaction=True)
    pipe.incr(key)
    pipe.expire(key, ttl_s)
    attempts, _ = pipe.execute()
    return int(attempts)


def uncount_attempt(client: redis.Redis, doc_id: str, doc_sha1: str, *, part: str = "") -> None:
    """Take back one attempt (the task is retried on purpose, not crashed)."""
    client.decr(_attempts_key(doc_id, doc_sha1, part))


def clear_attempts(client: redis.Redis, doc_id: str, doc_sha1: str, *, part: str = "") -> None:
    """Forget the attempt count: the task ended in a recorded way."""
    client.delete(_attempts_key(doc_id, doc_sha1, part))

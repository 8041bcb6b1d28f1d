"""Per-document write lock and poison-attempt counting, both in Redis.

The lock is short (``ttl_s``) and renewed by a daemon thread every third of it while
the holder lives; a worker that dies (SIGKILL, OOM, hard time limit) stops renewing,
so its lock frees itself within ``ttl_s`` and the redelivered task can proceed.

Attempt counters are keyed by (doc_id, content SHA1): a task increments before it
starts work and clears the counter whenever it ends in any recorded way. Only a
worker that dies mid-task leaves the increment behind, so the counter counts
crashes; past ``max_attempts`` the document is recorded failed as ``poison``.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from types import TracebackType

import redis
from redis.exceptions import LockError

from chunkweave.worker import keys


class DocLock:
    """Context manager holding ``cw:lock:<doc_id>`` while the document is written.

    ``acquired`` tells whether the lock was obtained within ``wait_s``; callers that
    did not get it must not write (they retry later).
    """

    def __init__(self, client: redis.Redis, doc_id: str, *, ttl_s: int, wait_s: float) -> None:
        self._lock = client.lock(
            keys.lock(doc_id), timeout=ttl_s, blocking_timeout=wait_s, thread_local=False
        )
        self._ttl_s = ttl_s
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.acquired = False

    def __enter__(self) -> DocLock:
        self.acquired = bool(self._lock.acquire())
        if self.acquired:
            self._renewer = threading.Thread(target=self._renew, daemon=True)
            self._renewer.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(self._ttl_s / 3):
            try:
                self._lock.reacquire()
            except (LockError, redis.RedisError):
                return  # lost it; the holder finds out on release

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
            with contextlib.suppress(LockError):  # expired meanwhile: nothing to release
                self._lock.release()


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


def take_lease(client: redis.Redis, doc_id: str, *, ttl_s: int) -> str | None:
    """Take the document's write lock as a lease for several tasks; its token or None.

    Unlike :class:`DocLock` nothing renews it: ``ttl_s`` must cover the time until
    the last task holding it ends (each one extends it with :func:`hold_lease`).
    """
    token = uuid.uuid4().hex
    return token if client.set(keys.lock(doc_id), token, nx=True, ex=ttl_s) else None


def hold_lease(client: redis.Redis, doc_id: str, token: str, *, ttl_s: int) -> bool:
    """Extend the lease if ``token`` still owns it; False when it was lost."""
    return bool(client.eval(_EXTEND_IF_OWNER, 1, keys.lock(doc_id), token, ttl_s * 1000))


def drop_lease(client: redis.Redis, doc_id: str, token: str) -> None:
    """Release the lease if ``token`` still owns it."""
    client.eval(_DELETE_IF_OWNER, 1, keys.lock(doc_id), token)


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

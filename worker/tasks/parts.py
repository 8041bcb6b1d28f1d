"""The parts-join protocol of a fan-out: numbered parts in Redis, joined exactly once.

Each stage of a fan-out (a big PDF's page-range parses in :mod:`.fanout`, its chunk
slices in :mod:`.slices`) is ``count`` numbered parts under one base key
(:mod:`chunkweave.worker.keys`), every key expiring after ``job_ttl_s``:

- ``<base>:<kind>:<i>``: part ``i``'s payload, zlib-compressed (parsed pages, chunks);
- ``<base>:done``: the set of the indexes of finished parts;
- ``<base>:counts``: counters summed over finished parts (chunks added, unchanged);
- ``<base>:<name>``, ``<base>:meta``: what the stage's last step needs besides.

A task that finishes part ``i`` stores its payload, then adds ``i`` to the done-set,
reads the set's size and (only if ``i`` was new: a duplicate run counts nothing)
adds its counters, in one script. A run that sees the set complete starts the stage's
last step, which the job record lets through once
(:func:`chunkweave.worker.ownership.announce`), also when the run that completed the
set died before sending it: the join needs no result backend. Payloads never travel
as task arguments; messages carry a part's index.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping

import redis
from redis.client import Pipeline

from chunkweave.worker.jobs import as_text

# Mark a part finished; add its counters only if it was not finished before.
_FINISH = """
local added = redis.call('sadd', KEYS[1], ARGV[1])
redis.call('expire', KEYS[1], ARGV[2])
if added == 1 and #ARGV > 2 then
    for i = 3, #ARGV, 2 do
        redis.call('hincrby', KEYS[2], ARGV[i], ARGV[i + 1])
    end
    redis.call('expire', KEYS[2], ARGV[2])
end
return {added, redis.call('scard', KEYS[1])}
"""


class Parts:
    """The ``kind`` parts (``part``, ``slice``) of one fan-out stage under the key ``base``."""

    def __init__(self, client: redis.Redis, base: str, *, kind: str, ttl_s: int) -> None:
        self.r = client
        self.base = base
        self.kind = kind
        self.ttl_s = ttl_s
        self.done_key = f"{base}:done"
        self.counts_key = f"{base}:counts"
        self.meta_key = f"{base}:meta"

    def key(self, index: int) -> str:
        """Return the key of part ``index``'s payload."""
        return f"{self.base}:{self.kind}:{index}"

    def reset(self, pipe: Pipeline | None = None) -> None:
        """Forget finished parts and their counts (a stage starting again from scratch)."""
        (pipe or self.r).delete(self.done_key, self.counts_key)

    def put(self, pipe: Pipeline, index: int, payload: bytes) -> None:
        """Store part ``index``'s payload (in the caller's transaction)."""
        pipe.set(self.key(index), zlib.compress(payload), ex=self.ttl_s)

    def get(self, index: int) -> bytes | None:
        """Return part ``index``'s payload, or None when it expired."""
        blob = self.r.get(self.key(index))
        return zlib.decompress(blob) if isinstance(blob, bytes) else None

    def get_all(self, count: int) -> list[bytes] | None:
        """Return the payloads of parts ``0..count-1`` in order, or None when one expired."""
        payloads: list[bytes] = []
        for blob in self.r.mget([self.key(i) for i in range(count)]):
            if not isinstance(blob, bytes):
                return None
            payloads.append(zlib.decompress(blob))
        return payloads

    def finish(
        self,
        index: int,
        count: int,
        *,
        payload: bytes | None = None,
        counts: Mapping[str, int] | None = None,
    ) -> tuple[bool, int]:
        """Store part ``index``'s payload, then mark it finished with its counters (one script).

        Returns whether this call completed the set of ``count`` parts (true for exactly
        one call, whatever the duplicates) and how many parts are finished.
        """
        if payload is not None:
            self.r.set(self.key(index), zlib.compress(payload), ex=self.ttl_s)
        flat = [str(x) for name, value in (counts or {}).items() for x in (name, value)]
        keys_ = (self.done_key, self.counts_key)
        added, done = self.r.eval(_FINISH, 2, *keys_, index, self.ttl_s, *flat)
        return bool(added) and int(done) == count, int(done)

    def finished(self) -> set[int]:
        """Return the indexes of the finished parts."""
        return {int(i) for i in self.r.smembers(self.done_key)}

    def counts(self) -> dict[str, int]:
        """Return the counters summed over the finished parts."""
        return {as_text(k): int(v) for k, v in self.r.hgetall(self.counts_key).items()}

    def put_extra(self, pipe: Pipeline, name: str, payload: bytes) -> None:
        """Store a payload the stage's last step needs (``<base>:<name>``, compressed)."""
        pipe.set(f"{self.base}:{name}", zlib.compress(payload), ex=self.ttl_s)

    def get_extra(self, name: str) -> bytes | None:
        """Return the payload stored by :meth:`put_extra`, or None when it expired."""
        blob = self.r.get(f"{self.base}:{name}")
        return zlib.decompress(blob) if isinstance(blob, bytes) else None

    def put_meta(self, pipe: Pipeline, fields: Mapping[str, str | int]) -> None:
        """Store the stage's small fields (a hash: ``<base>:meta``)."""
        pipe.hset(self.meta_key, mapping={k: v for k, v in fields.items()})
        pipe.expire(self.meta_key, self.ttl_s)

    def meta(self) -> dict[str, str]:
        """Return the fields stored by :meth:`put_meta` (empty when they expired)."""
        return {as_text(k): as_text(v) for k, v in self.r.hgetall(self.meta_key).items()}

    def clear(self, count: int, *extras: str) -> None:
        """Delete the stage's keys: ``count`` payloads, the done-set, counts, meta, ``extras``.

        By name: a SCAN of the keyspace would cost more the more keys Redis holds.
        """
        named = (f"{self.base}:{name}" for name in extras)
        payloads = (self.key(i) for i in range(count))
        self.r.delete(*payloads, *named, self.done_key, self.counts_key, self.meta_key)

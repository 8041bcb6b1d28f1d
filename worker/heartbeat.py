"""Worker identity and heartbeats: who is alive, and which tasks each one holds.

Every ``celery worker`` gets an id when it starts (:func:`assign_worker_id`, inherited
by its pool children through the environment). Its main process beats every
``heartbeat_interval_s``: ``cw:worker:<id>`` (TTL ``heartbeat_ttl_s``) names the task
ids it holds (waiting for a slot, running, or held until a retry's countdown), and
``cw:workers`` records the time of its last beat.

A worker is *gone* when it is registered in ``cw:workers`` but its heartbeat key has
expired: killed as a whole (SIGKILL of the process group, a lost host), or cut from
Redis for longer than the TTL. A process that never beat (a test, a CLI) is never
judged gone: its locks expire by their TTL as before.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import redis

from chunkweave.worker import keys

log = logging.getLogger(__name__)

#: The environment variable carrying the worker id from the main process to its children.
WORKER_ID_ENV = "CHUNKWEAVE_WORKER_ID"
#: Registered workers silent for this long are dropped from ``cw:workers``.
_FORGET_AFTER_S = 24 * 3600


def assign_worker_id(hostname: str | None = None) -> str:
    """Give this process (a worker's main process, before it forks) a unique id."""
    wid = f"{hostname or socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:6]}"
    os.environ[WORKER_ID_ENV] = wid
    return wid


def worker_id() -> str:
    """Return this worker's id, or ``""`` in a process that is no worker (never beats)."""
    return os.environ.get(WORKER_ID_ENV, "")


@dataclass(frozen=True)
class Beat:
    """One live worker's last heartbeat: when, and the task ids it held then."""

    worker: str
    at: float
    tasks: frozenset[str]


def beat(client: redis.Redis, wid: str, tasks: Iterable[str], *, ttl_s: float) -> None:
    """Write one heartbeat of ``wid`` holding ``tasks``."""
    now = time.time()
    value = json.dumps({"at": now, "tasks": sorted(tasks)})
    pipe = client.pipeline(transaction=True)
    pipe.set(keys.heartbeat(wid), value, px=max(1, int(ttl_s * 1000)))
    pipe.zadd(keys.WORKERS, {wid: now})
    pipe.execute()


def forget(client: redis.Redis, wid: str) -> None:
    """Remove ``wid``'s heartbeat and registration (a worker that stopped cleanly)."""
    pipe = client.pipeline(transaction=True)
    pipe.delete(keys.heartbeat(wid))
    pipe.zrem(keys.WORKERS, wid)
    pipe.execute()


def read_beats(client: redis.Redis) -> tuple[dict[str, Beat], set[str]]:
    """Return the live workers' beats and the ids of registered workers that are gone."""
    found = client.zrange(keys.WORKERS, 0, -1)
    registered = [w.decode() if isinstance(w, bytes) else str(w) for w in found]
    if not registered:
        return {}, set()
    values = client.mget([keys.heartbeat(w) for w in registered])
    beats: dict[str, Beat] = {}
    gone: set[str] = set()
    for wid, raw in zip(registered, values, strict=True):
        if raw is None:
            gone.add(wid)
            continue
        data = json.loads(raw)
        beats[wid] = Beat(wid, float(data["at"]), frozenset(data.get("tasks", ())))
    client.zremrangebyscore(keys.WORKERS, "-inf", time.time() - _FORGET_AFTER_S)
    return beats, gone


def is_gone(client: redis.Redis, wid: str) -> bool:
    """Tell whether ``wid`` is a registered worker whose heartbeat has expired."""
    if not wid:
        return False
    pipe = client.pipeline(transaction=False)
    pipe.zscore(keys.WORKERS, wid)
    pipe.exists(keys.heartbeat(wid))
    registered, alive = pipe.execute()
    return registered is not None and not alive


def beat_of(client: redis.Redis, wid: str) -> Beat | None:
    """Return ``wid``'s current heartbeat, or None."""
    raw = client.get(keys.heartbeat(wid))
    if raw is None:
        return None
    data = json.loads(raw)
    return Beat(wid, float(data["at"]), frozenset(data.get("tasks", ())))


def held_task_ids() -> set[str]:
    """Task ids this worker's main process holds: waiting, running or counting down."""
    from celery.worker import state

    return set(state.requests)


class Heartbeat:
    """A daemon thread beating for ``wid`` until :meth:`stop`; survives Redis outages."""

    def __init__(
        self,
        client: redis.Redis,
        wid: str,
        *,
        interval_s: float,
        ttl_s: float,
        tasks: Callable[[], Iterable[str]] = held_task_ids,
    ) -> None:
        self.client = client
        self.wid = wid
        self.interval_s = interval_s
        self.ttl_s = ttl_s
        self.tasks = tasks
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cw-heartbeat", daemon=True)
        #: Whether the last beat reached Redis (a stop then tidies up; else it does not wait).
        self.healthy = False

    def start(self) -> Heartbeat:
        """Beat once now, then every interval in the background."""
        self._thread.start()
        return self

    def _run(self) -> None:
        failing = False
        while True:
            try:
                beat(self.client, self.wid, self.tasks(), ttl_s=self.ttl_s)
                if failing:
                    log.info("heartbeat of %s resumed", self.wid)
                failing = False
            except (redis.RedisError, OSError) as err:
                if not failing:
                    log.warning("heartbeat of %s failed (will retry): %s", self.wid, err)
                failing = True
            self.healthy = not failing
            if self._stop.wait(self.interval_s):
                return

    def stop(self, *, forget_worker: bool = True) -> None:
        """Stop beating; by default also unregister (a clean stop is no death)."""
        self._stop.set()
        self._thread.join(timeout=2)
        if forget_worker and self.healthy:
            try:
                forget(self.client, self.wid)
            except (redis.RedisError, OSError) as err:
                log.warning("could not unregister worker %s: %s", self.wid, err)

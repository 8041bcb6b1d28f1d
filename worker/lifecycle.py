"""A worker's part in owning work: its id, heartbeats, owner records, its reconciler.

Connected to Celery's signals by :mod:`chunkweave.worker.celery_app`:

- ``worker_init`` (main process, before the pool forks): the worker's id, which its
  pool children inherit.
- ``worker_ready``: start beating (:mod:`.heartbeat`) and a reconciler thread
  (:mod:`.reconcile`; one is active across the service at a time).
- ``task_received`` (main process): record this worker as the owner of the document, or
  of the fan-out step, the task stands for, with the task's name and arguments
  (:mod:`.ownership`). Redis trouble here is logged, never
  raised: the message is still consumed and runs.
- ``task_postrun`` (where the task ran): drop this worker's record unless the task
  was handed back for a retry (the retry recorded that itself).
- ``worker_shutdown``: stop the reconciler; hand back what this worker still holds
  (kombu puts those messages back in the queue), then stop beating and unregister.
"""

from __future__ import annotations

import logging
from typing import Any

import redis

from chunkweave.worker import ownership
from chunkweave.worker.heartbeat import Heartbeat, assign_worker_id, worker_id
from chunkweave.worker.settings import get_settings

log = logging.getLogger(__name__)

_parts: dict[str, Any] = {}


def _client() -> redis.Redis:
    """Return the main process's own Redis client for owner records (short timeouts)."""
    client = _parts.get("redis")
    if client is None:
        from chunkweave.worker.runtime import redis_url

        client = redis.Redis.from_url(
            redis_url(get_settings()), socket_timeout=2, socket_connect_timeout=2
        )
        _parts["redis"] = client
    return client


def on_worker_init(sender: Any = None, **_: Any) -> None:
    """Give the worker its id before the pool forks."""
    assign_worker_id(getattr(sender, "hostname", None))


def on_worker_ready(sender: Any = None, **_: Any) -> None:
    """Start the heartbeat and this worker's reconciler (sending through the worker's app)."""
    from chunkweave.worker.reconcile import start_reconciler

    settings = get_settings()
    wid = worker_id() or assign_worker_id()
    _parts["heartbeat"] = Heartbeat(
        _client(),
        wid,
        interval_s=settings.reconcile.heartbeat_interval_s,
        ttl_s=settings.reconcile.heartbeat_ttl_s,
    ).start()
    _parts["reconciler"] = start_reconciler(settings, sender.app)
    every = settings.reconcile.heartbeat_interval_s
    log.info("worker %s: heartbeats every %ss, reconciler started", wid, every)


def on_task_received(request: Any = None, **_: Any) -> None:
    """Record this worker as the owner of the document (or fan-out step) of the task."""
    if request is None:
        return
    kwargs = request.kwargs or {}
    field = ownership.work_field(request.name, kwargs)
    if field is None:
        return
    try:
        ownership.claim(
            _client(),
            str(kwargs["job_id"]),
            field,
            worker=worker_id(),
            task_id=request.id,
            name=request.name,
            kwargs=kwargs,
            ttl_s=get_settings().tasks.job_ttl_s,
        )
    except (redis.RedisError, OSError) as err:
        log.warning("could not record the owner of task %s: %s", request.id, err)


def on_task_postrun(
    task_id: str = "", task: Any = None, kwargs: Any = None, state: str | None = None, **_: Any
) -> None:
    """Drop this worker's owner record of a task that ended (not one handed back)."""
    if state == "RETRY" or task is None or not isinstance(kwargs, dict):
        return
    field = ownership.work_field(task.name, kwargs)
    if field is None:
        return
    from chunkweave.worker.runtime import get_runtime

    try:
        ownership.release(
            get_runtime().redis,
            str(kwargs["job_id"]),
            field,
            worker=worker_id(),
            task_id=task_id,
        )
    except (redis.RedisError, OSError) as err:
        log.warning("could not drop the owner record of task %s: %s", task_id, err)


def on_worker_shutdown(**_: Any) -> None:
    """Stop reconciling; hand back held documents; stop beating and unregister."""
    reconciler = _parts.pop("reconciler", None)
    if reconciler is not None:
        reconciler.stop()
    heartbeat = _parts.pop("heartbeat", None)
    if heartbeat is None:
        return
    if heartbeat.healthy:  # Redis answers: tidy up; else stop at once (the reconciler will)
        try:
            _hand_back_all(worker_id())
        except (redis.RedisError, OSError) as err:
            log.warning("could not hand back this worker's documents: %s", err)
    heartbeat.stop(forget_worker=True)


def _hand_back_all(wid: str) -> None:
    from chunkweave.worker.jobs import JobStore

    client = _client()
    jobs = JobStore(client, ttl_s=get_settings().tasks.job_ttl_s)
    for job_id in jobs.active():
        for field, owner in ownership.owners(client, job_id).items():
            if owner.worker == wid:
                ownership.hand_back(client, job_id, field, worker=wid, task_id=owner.task_id)

"""The one Celery app, configured from :class:`chunkweave.worker.settings.Settings`.

Delivery guarantees and bounds, and why:

- JSON only (no pickle): a message can never execute code on a worker.
- ``acks_late`` + ``task_reject_on_worker_lost``: a message is acknowledged after its
  task ends, so a worker killed mid-document (SIGKILL, OOM) has it redelivered.
  Tasks are idempotent and count crashes per document version
  (:mod:`chunkweave.worker.locks`), so redelivery is harmless and bounded.
- Prefetch 1: a worker holds at most one waiting message per process, so a backfill
  spreads over every replica instead of piling onto the first one up.
- Soft/hard time limits per task (prefork pool only: the ``solo`` pool ignores them).
- Redis ``visibility_timeout`` = 2 x hard limit + 60 s: a reserved message may wait for
  one whole task in its process before it starts, and must not be redelivered to
  another worker while it legitimately runs.
- Work is owned by the job record, not by the broker's memory: the visibility timeout
  stays long (it must not redeliver a task that legitimately runs), and a worker
  killed as a whole or a Redis restart is caught within seconds instead by worker
  heartbeats and the reconciler (:mod:`chunkweave.worker.lifecycle`,
  :mod:`chunkweave.worker.reconcile`), which requeue from the job record.
- Memory: each child process gets ``RLIMIT_DATA`` = ``max_memory_mb`` (a hard cap: an
  allocation beyond it fails with ``MemoryError``, recorded as ``out_of_memory``), and
  is recycled after a task once its resident size passes 75% of that.
"""

from __future__ import annotations

import logging
import resource
from typing import Any

from celery import Celery
from celery.signals import (
    task_postrun,
    task_received,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)

from chunkweave import tracing
from chunkweave.worker import lifecycle
from chunkweave.worker.settings import Settings, get_settings
from chunkweave.worker.tasks import TASK_MODULES

log = logging.getLogger(__name__)
# The Weaviate client logs every HTTP request at INFO through httpx: one line per
# batch and schema call drowns the task log. Keep its warnings and errors.
logging.getLogger("httpx").setLevel(logging.WARNING)


def visibility_timeout_s(settings: Settings) -> int:
    """Seconds before Redis redelivers an unacknowledged message (see module doc)."""
    return 2 * settings.task_hard_time_limit_s + 60


def make_app(settings: Settings) -> Celery:
    """Build the Celery app for ``settings`` (broker URL may be unset until used)."""
    broker = (settings.redis_url.get_secret_value() if settings.redis_url else "") or None
    app = Celery("chunkweave", broker=broker, include=list(TASK_MODULES))
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        event_serializer="json",
        task_ignore_result=True,  # state lives in chunkweave.worker.jobs, not in a result backend
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_soft_time_limit=settings.task_soft_time_limit_s,
        task_time_limit=settings.task_hard_time_limit_s,
        broker_transport_options={"visibility_timeout": visibility_timeout_s(settings)},
        broker_connection_retry_on_startup=True,
        worker_max_memory_per_child=settings.max_memory_mb * 1024 * 3 // 4,  # KiB
        worker_cancel_long_running_tasks_on_connection_loss=True,
        task_default_queue=settings.queue,
        task_create_missing_queues=True,
        worker_hijack_root_logger=False,
    )
    return app


app = make_app(get_settings())
tracing.connect_celery()  # traces through task headers, when an exporter is configured

worker_init.connect(lifecycle.on_worker_init, weak=False)
worker_ready.connect(lifecycle.on_worker_ready, weak=False)
worker_shutdown.connect(lifecycle.on_worker_shutdown, weak=False)
task_received.connect(lifecycle.on_task_received, weak=False)
task_postrun.connect(lifecycle.on_task_postrun, weak=False)


@worker_process_init.connect
def _init_child(**_: Any) -> None:
    """Cap the child's memory and build its pipeline once, before any task runs."""
    from chunkweave.worker.runtime import forget_runtime, get_runtime

    settings = get_settings()
    cap = settings.max_memory_mb * 1024 * 1024
    hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
    if hard == resource.RLIM_INFINITY or hard > cap:
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
    # Connections inherited from the parent must not be shared across the fork.
    forget_runtime()
    runtime = get_runtime()
    try:
        runtime.pipeline  # noqa: B018 - built now, so the first task does not pay for it
    except Exception:  # noqa: BLE001 - reported per task, where it can be recorded
        log.exception("pipeline could not be built at process start; will retry per task")


@worker_process_shutdown.connect
def _shutdown_child(**_: Any) -> None:
    from chunkweave.worker.runtime import reset_runtime

    reset_runtime()

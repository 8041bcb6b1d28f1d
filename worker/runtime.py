"""Per-process resources of a worker: settings, Redis, job store and the pipeline.

Created once per worker process (``worker_process_init`` builds the pipeline, so the
embedder model and the Weaviate client load once per child, not per task) and
reused by every task that process runs.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable

import redis

from chunkweave.errors import ChunkweaveError
from chunkweave.storage.protocols import IngestPipeline
from chunkweave.worker.jobs import JobStore
from chunkweave.worker.settings import Settings, get_settings


class NoRedisConfiguredError(ChunkweaveError, RuntimeError):
    """No Redis URL in the settings (``CHUNKWEAVE_REDIS_URL``) nor a running ``serve``'s."""


def redis_url(settings: Settings) -> str:
    """Return the broker/state Redis URL; raise a clear error when none is configured.

    Settings come from :func:`chunkweave.worker.discovery.discover` where a running
    ``serve``'s Redis may stand in for a configured one; the error says whether one was
    recorded on the data directory but is unreachable, or none runs.
    """
    if settings.redis_url is None or not settings.redis_url.get_secret_value():
        from chunkweave.worker.discovery import missing_redis

        raise NoRedisConfiguredError(missing_redis(settings))
    return settings.redis_url.get_secret_value()


def yield_cpu(settings: Settings) -> int:
    """Lower the calling thread's CPU priority by ``settings.tasks.producer_nice``; return it.

    Bulk producers call this before they send: on a machine shared with workers, a
    producer at full priority takes a core from them for as long as it sends (on 2
    cores the first 1,000 documents of a 100k backfill ran a third slower). Sending
    needs little CPU, so at a lower priority it still keeps far ahead of the workers.
    On Linux the niceness belongs to the thread (threads it starts inherit it); other
    systems without per-thread niceness lower the whole process. Where ``os.nice``
    does not exist (Windows) nothing changes. Returns the new niceness (0 if unknown).
    """
    if not hasattr(os, "nice"):
        return 0
    return os.nice(settings.tasks.producer_nice)


def redis_client(settings: Settings) -> redis.Redis:
    """Connect a Redis client for state, locks and metrics (not the Celery broker)."""
    return redis.Redis.from_url(redis_url(settings), health_check_interval=30)


def default_pipeline(settings: Settings) -> IngestPipeline:
    """Build the store pipeline (:mod:`chunkweave.storage.pipeline`) from the settings.

    Workers need a Weaviate URL (``CHUNKWEAVE_WEAVIATE__URL``); ``chunkweave serve``
    sets it to the embedded server when none is configured, and without one the
    embedded server running on the data directory is used (:mod:`..discovery`).
    """
    from chunkweave.storage.embedders import make_embedder
    from chunkweave.storage.pipeline.conductor import open_pipeline

    if settings.weaviate.url is None:
        from chunkweave.worker.discovery import discover

        found = discover(settings)
        if found.weaviate.state != "found":
            raise RuntimeError("the worker: " + found.missing("Weaviate"))
        settings = found.settings
    from chunkweave.storage.reindex.follow import live_chunking

    embedder = make_embedder(settings.embedder)
    # A version built by `chunkweave reindex` records its chunking: workers follow it.
    chunking = live_chunking(settings.weaviate, settings.chunking) or settings.chunking
    return open_pipeline(settings.weaviate, embedder, settings.parse, chunking, settings.files)


def load_factory(dotted: str) -> Callable[[Settings], IngestPipeline]:
    """Resolve ``package.module:function``."""
    module, _, name = dotted.partition(":")
    if not module or not name:
        raise ValueError(f"pipeline_factory {dotted!r}: expected 'module:function'")
    factory: Callable[[Settings], IngestPipeline] = getattr(importlib.import_module(module), name)
    return factory


class Runtime:
    """The resources of one process. Use :func:`get_runtime`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.redis = redis_client(settings)
        self.jobs = JobStore(self.redis, ttl_s=settings.tasks.job_ttl_s)
        self._pipeline: IngestPipeline | None = None
        self._lock = threading.Lock()

    @property
    def pipeline(self) -> IngestPipeline:
        """The process's pipeline, built on first use."""
        with self._lock:
            if self._pipeline is not None and self._pipeline.stale():
                # `chunkweave reindex` switched the alias: rebuild on the new version.
                self._pipeline.close()
                self._pipeline = None
            if self._pipeline is None:
                self._pipeline = load_factory(self.settings.pipeline_factory)(self.settings)
            return self._pipeline

    def close(self) -> None:
        """Release the pipeline's clients and Redis."""
        pipeline, self._pipeline = self._pipeline, None
        if pipeline is not None:
            pipeline.close()
        self.redis.close()


_runtime: Runtime | None = None


def get_runtime() -> Runtime:
    """Return this process's :class:`Runtime` (built from :func:`get_settings` once)."""
    global _runtime
    if _runtime is None:
        _runtime = Runtime(get_settings())
    return _runtime


def forget_runtime() -> None:
    """Drop an inherited runtime without closing it (after fork: the parent owns it)."""
    global _runtime
    _runtime = None


def reset_runtime() -> None:
    """Drop this process's runtime (after fork, or at shutdown)."""
    global _runtime
    if _runtime is not None:
        _runtime.close()
    _runtime = None

"""HTTP API (FastAPI): submit jobs, read job state, delete documents, health, metrics.

Stateless: every replica reads and writes the shared Redis, so any replica answers
for any job. Run with ``chunkweave api`` (uvicorn) or inside ``chunkweave serve``.

- ``POST /jobs``: JSON ``{"sources": [...], "force": false, "webhook_url": null}`` with
  paths (visible to the workers) or ``s3://`` URIs, or ``multipart/form-data`` with
  one or more ``file`` parts (and optional ``webhook_url``). Uploads are written to
  ``Settings.upload_dir`` under their content SHA1, which must be a volume shared
  with every worker (``docker-compose.yml`` mounts one); size limit
  ``max_upload_bytes`` (413 beyond it). Returns ``202 {"job_id": ...}``.
- ``GET /jobs/{id}`` (``?docs=false`` to omit documents), ``GET /jobs?status=&limit=``.
- ``DELETE /documents/{doc_id}``: enqueue removal of a document; returns its job id.
- ``GET /healthz`` (no auth: for load balancers), ``GET /metrics`` (Prometheus text).
- Bearer-token auth on everything else when ``Settings.api_token`` is set.
OpenAPI docs at ``/docs``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version

from fastapi import FastAPI
from prometheus_client import CollectorRegistry

from chunkweave.worker.api.routes import router
from chunkweave.worker.enqueue import Enqueuer
from chunkweave.worker.metrics import RedisCollector
from chunkweave.worker.settings import Settings, get_settings

__all__ = ["app_factory", "create_app"]


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the API for ``settings`` (default: :func:`get_settings`).

    The app owns one :class:`Enqueuer` (Redis and broker connections), closed when
    the app shuts down; handlers reach it and the settings through ``app.state``.
    """
    cfg = settings or get_settings()
    enq = Enqueuer(cfg)
    registry = CollectorRegistry()
    registry.register(RedisCollector(enq.redis, queue=cfg.queue))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        enq.close()

    app = FastAPI(
        lifespan=lifespan,
        title="chunkweave",
        summary="Structure-aware PDF/DOCX ingestion into Weaviate",
        version=version("chunkweave"),
    )
    app.state.settings = cfg
    app.state.enqueuer = enq
    app.state.metrics = registry
    app.include_router(router)
    return app


def app_factory() -> FastAPI:
    """Uvicorn ``--factory`` entry point: the app for the process's settings."""
    return create_app()

"""HTTP API (FastAPI): submit jobs, read job state, delete documents, health, metrics.

Stateless: every replica reads and writes the shared Redis, so any replica answers
for any job. Run with ``chunkweave api`` (uvicorn) or inside ``chunkweave serve``.

- ``POST /jobs``: JSON ``{"sources": [...], "force": false, "webhook_url": null}`` with
  absolute paths under ``CHUNKWEAVE_SOURCES__ROOTS`` (visible to the workers) or
  ``s3://`` URIs of ``CHUNKWEAVE_SOURCES__BUCKETS``, or ``multipart/form-data`` with
  one or more ``file`` parts (and optional ``webhook_url``). Uploads are written to
  ``Settings.upload_dir`` under their content SHA1, which must be a volume shared
  with every worker (``docker-compose.yml`` mounts one); size limit
  ``max_upload_bytes`` (413 beyond it). Returns ``202 {"job_id": ...}``.
- ``GET /jobs/{id}`` (``?docs=false`` to omit documents), ``GET /jobs?status=&limit=&cursor=``
  (pages: follow ``next_cursor``).
- ``DELETE /documents/{doc_id}``: enqueue removal of a document; returns its job id.
- ``POST /reindex``, ``GET /reindex``: a reindex on the workers (:mod:`.reindex`).
- ``GET /healthz`` (no auth: for load balancers; each part's state, :mod:`.health`),
  ``GET /metrics`` (Prometheus text).
- ``GET /ui``: the dashboard (jobs, documents, stage timings, inspector views); see
  :mod:`.ui` (same token, signed in once with it).
- Bearer-token auth on everything else when any token is set (``Settings.api_token``
  or ``Settings.api_tenant_tokens``); then the OpenAPI docs (``/docs``, ``/redoc``,
  ``/openapi.json``) are off. Tokens scoped to tenants see and touch only their
  tenants' jobs and documents, ``/ui`` included; store-wide operations (``/reindex``)
  need the main token (403 for a tenant's).
- Every response carries ``X-Content-Type-Options: nosniff`` and
  ``Referrer-Policy: no-referrer`` (:mod:`.headers`).
- Bodies are bounded as they stream (:mod:`.limits`): ``max_json_bytes`` for JSON,
  ``max_upload_bytes`` per file for uploads.
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from importlib.metadata import version

from fastapi import FastAPI
from prometheus_client import CollectorRegistry

from chunkweave.errors import ChunkweaveError
from chunkweave.worker.api.headers import SecurityHeaders
from chunkweave.worker.api.health import router as health_router
from chunkweave.worker.api.limits import BodyLimit
from chunkweave.worker.api.reindex import router as reindex_router
from chunkweave.worker.api.routes import router
from chunkweave.worker.api.ui import close_store, ui_router
from chunkweave.worker.discovery import discover
from chunkweave.worker.enqueue import Enqueuer
from chunkweave.worker.metrics import RedisCollector
from chunkweave.worker.settings import Settings, get_settings

__all__ = ["InsecureBindError", "app_factory", "check_bind", "create_app"]


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the API for ``settings``.

    By default :func:`get_settings`, pointed at a running ``chunkweave serve``'s Redis
    and Weaviate where they name none (:mod:`..discovery`).
    The app owns one :class:`Enqueuer` (Redis and broker connections), closed when
    the app shuts down; handlers reach it and the settings through ``app.state``.
    """
    cfg = settings or discover(get_settings()).settings
    enq = Enqueuer(cfg)
    registry = CollectorRegistry()
    registry.register(RedisCollector(enq.redis, queue=cfg.queue))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        close_store(app)
        enq.close()

    # With a token, the API documents itself to no one: docs and schema are off.
    open_docs = not cfg.api_guarded
    app = FastAPI(
        lifespan=lifespan,
        title="chunkweave",
        summary="Structure-aware PDF/DOCX ingestion into Weaviate",
        version=version("chunkweave"),
        docs_url="/docs" if open_docs else None,
        redoc_url="/redoc" if open_docs else None,
        openapi_url="/openapi.json" if open_docs else None,
    )
    app.add_middleware(BodyLimit, limit_for=partial(body_limit, cfg))
    app.add_middleware(SecurityHeaders)
    app.state.settings = cfg
    app.state.enqueuer = enq
    app.state.metrics = registry
    app.include_router(health_router)
    app.include_router(router)
    app.include_router(ui_router)
    app.include_router(reindex_router)
    return app


#: Room for multipart boundaries and form fields beyond the uploaded bytes themselves.
MULTIPART_OVERHEAD = 64 * 1024


def body_limit(settings: Settings, content_type: str) -> int:
    """Bytes a request body of ``content_type`` may have."""
    if content_type.startswith("multipart/form-data"):
        return settings.max_upload_bytes + MULTIPART_OVERHEAD
    return settings.max_json_bytes


class InsecureBindError(ChunkweaveError, RuntimeError):
    """The API was asked to listen beyond loopback with no token."""


def is_loopback(host: str) -> bool:
    """Tell whether ``host`` names only this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, settings: Settings, *, insecure: bool) -> str | None:
    """Refuse to serve a non-loopback ``host`` without a token; return a warning, if any.

    ``insecure`` lets an operator who has put the API behind their own gate do so
    anyway, with a warning.
    """
    if is_loopback(host) or settings.api_guarded:
        return None
    if not insecure:
        raise InsecureBindError(
            f"refusing to serve the API on {host} without a token: set CHUNKWEAVE_API_TOKEN "
            "(or pass --insecure if something else guards it)"
        )
    return f"WARNING: the API on {host} has no token: anyone who reaches it can use it"


def app_factory() -> FastAPI:
    """Uvicorn ``--factory`` entry point: the app for the process's settings."""
    return create_app()

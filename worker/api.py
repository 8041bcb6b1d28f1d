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

import hashlib
import hmac
import re
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request, status
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from pydantic import BaseModel, ConfigDict, Field
from starlette.datastructures import UploadFile

from chunkweave.worker.enqueue import Action, Enqueuer, expand
from chunkweave.worker.jobs import JobState, JobStatus
from chunkweave.worker.metrics import RedisCollector
from chunkweave.worker.settings import Settings, get_settings

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_COPY_BLOCK = 1 << 20


class SourcesRequest(BaseModel):
    """Sources to ingest: files/folders the workers can read, or ``s3://`` URIs."""

    model_config = ConfigDict(extra="forbid")

    sources: list[str] = Field(min_length=1)
    force: bool = False
    webhook_url: str | None = None


class JobCreated(BaseModel):
    """The id of the job a request created."""

    job_id: str


def _safe_name(name: str | None) -> str:
    base = Path(name or "upload").name
    return _SAFE_NAME.sub("_", base).lstrip(".") or "upload"


async def _store_upload(upload: UploadFile, settings: Settings) -> Path:
    """Copy one upload to ``upload_dir/<sha1>/<name>``, enforcing the size limit."""
    target_dir = settings.upload_dir
    target_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1()
    size = 0
    with tempfile.NamedTemporaryFile(dir=target_dir, prefix=".upload-", delete=False) as tmp:
        tmp_path = Path(tmp.name)
        try:
            while block := await upload.read(_COPY_BLOCK):
                size += len(block)
                if size > settings.max_upload_bytes:
                    raise HTTPException(
                        status.HTTP_413_CONTENT_TOO_LARGE,
                        f"{upload.filename}: larger than {settings.max_upload_bytes} bytes",
                    )
                digest.update(block)
                tmp.write(block)
        except BaseException:
            tmp_path.unlink(missing_ok=True)
            raise
    final = target_dir / digest.hexdigest() / _safe_name(upload.filename)
    final.parent.mkdir(exist_ok=True)
    tmp_path.replace(final)  # atomic: workers never see a partial upload
    return final


_bearer = HTTPBearer(auto_error=False)


def authorize(
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """Require ``Authorization: Bearer <api_token>`` when a token is configured."""
    token = request.app.state.settings.api_token
    if token is None:
        return
    if creds is None or not hmac.compare_digest(creds.credentials, token.get_secret_value()):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "missing or invalid bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the API for ``settings`` (default: :func:`get_settings`)."""
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
        version="0.1.0",
    )
    auth = [Depends(authorize)]

    @app.post(
        "/jobs",
        status_code=status.HTTP_202_ACCEPTED,
        response_model=JobCreated,
        dependencies=auth,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": SourcesRequest.model_json_schema()},
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "properties": {
                                "file": {
                                    "type": "array",
                                    "items": {"type": "string", "format": "binary"},
                                },
                                "webhook_url": {"type": "string"},
                            },
                            "required": ["file"],
                        }
                    },
                },
            }
        },
    )
    async def create_job(request: Request) -> JobCreated:
        """Queue uploaded files or source URIs for ingestion."""
        ctype = request.headers.get("content-type", "")
        length = int(request.headers.get("content-length") or 0)
        if length > cfg.max_upload_bytes + 64 * 1024:
            raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, "request body too large")
        items: list[tuple[str, Action]] = []
        if ctype.startswith("multipart/form-data"):
            form = await request.form(max_files=1000)
            uploads = [f for f in form.getlist("file") if isinstance(f, UploadFile)]
            if not uploads:
                raise HTTPException(422, "multipart request without a 'file' part")
            for upload in uploads:
                items.append((str(await _store_upload(upload, cfg)), "ingest"))
            hook = form.get("webhook_url")
            body = SourcesRequest(
                sources=[s for s, _ in items],
                webhook_url=hook if isinstance(hook, str) and hook else None,
            )
        else:
            try:
                body = SourcesRequest.model_validate_json(await request.body())
            except ValueError as err:
                raise HTTPException(422, f"invalid JSON body: {err}") from err
            try:
                items = [(doc, "ingest") for src in body.sources for doc in expand(src, cfg)]
            except FileNotFoundError as err:
                raise HTTPException(404, str(err)) from err
        job_id = enq.submit(items, force=body.force, webhook_url=body.webhook_url)
        return JobCreated(job_id=job_id)

    @app.get("/jobs/{job_id}", response_model=JobState, dependencies=auth)
    def get_job(job_id: str, docs: bool = True) -> JobState:
        """Return a job's state, with its documents unless ``docs=false``."""
        job = enq.jobs.get(job_id, with_docs=docs)
        if job is None:
            raise HTTPException(404, f"job {job_id} not found")
        return job

    @app.get("/jobs", response_model=list[JobState], dependencies=auth)
    def list_jobs(
        job_status: Annotated[JobStatus | None, Query(alias="status")] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    ) -> list[JobState]:
        """Recent jobs, newest first, optionally filtered by status."""
        return enq.jobs.list(status=job_status, limit=limit)

    @app.delete(
        "/documents/{doc_id:path}",
        status_code=status.HTTP_202_ACCEPTED,
        response_model=JobCreated,
        dependencies=auth,
    )
    def delete_document(doc_id: str) -> JobCreated:
        """Queue removal of a document (its chunks and ledger entry) by doc_id or source."""
        return JobCreated(job_id=enq.submit([(doc_id, "delete")]))

    @app.get("/healthz")
    def healthz() -> Response:
        """200 when Redis answers, 503 otherwise."""
        try:
            enq.redis.ping()
        except Exception as err:  # noqa: BLE001 - any failure means unhealthy
            return JSONResponse({"status": "unavailable", "error": str(err)}, status_code=503)
        return JSONResponse({"status": "ok"})

    @app.get("/metrics", dependencies=auth)
    def metrics() -> Response:
        """Prometheus text exposition of the shared counters and queue depth."""
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    app.state.settings = cfg
    app.state.enqueuer = enq
    return app


def app_factory() -> Any:
    """Uvicorn ``--factory`` entry point: the app for the process's settings."""
    return create_app()

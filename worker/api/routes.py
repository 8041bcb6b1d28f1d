"""The API's routes. Handlers get the settings and the :class:`Enqueuer` from ``app.state``."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Request, status
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.datastructures import UploadFile

from chunkweave.worker.api.schemas import JOBS_REQUEST_BODY, JobCreated, SourcesRequest
from chunkweave.worker.api.uploads import store_upload
from chunkweave.worker.enqueue import Enqueuer
from chunkweave.worker.jobs import Action, JobState, JobStatus
from chunkweave.worker.settings import Settings
from chunkweave.worker.sources import expand

#: Room for multipart boundaries and form fields beyond the uploaded bytes themselves.
_MULTIPART_OVERHEAD = 64 * 1024

_bearer = HTTPBearer(auto_error=False)


def get_settings_dep(request: Request) -> Settings:
    """Return the settings the app was built with."""
    settings: Settings = request.app.state.settings
    return settings


def get_enqueuer(request: Request) -> Enqueuer:
    """Return the app's enqueuer (Redis job state and the broker)."""
    enq: Enqueuer = request.app.state.enqueuer
    return enq


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
EnqueuerDep = Annotated[Enqueuer, Depends(get_enqueuer)]


def authorize(
    settings: SettingsDep,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """Require ``Authorization: Bearer <api_token>`` when a token is configured."""
    token = settings.api_token
    if token is None:
        return
    if creds is None or not hmac.compare_digest(creds.credentials, token.get_secret_value()):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "missing or invalid bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )


router = APIRouter()
#: Routes behind the bearer token (all but ``/healthz``).
authed = APIRouter(dependencies=[Depends(authorize)])


async def _upload_items(request: Request, settings: Settings) -> SourcesRequest:
    form = await request.form(max_files=1000)
    uploads = [f for f in form.getlist("file") if isinstance(f, UploadFile)]
    if not uploads:
        raise HTTPException(422, "multipart request without a 'file' part")
    stored = [str(await store_upload(upload, settings)) for upload in uploads]
    hook = form.get("webhook_url")
    return SourcesRequest(
        sources=stored, webhook_url=hook if isinstance(hook, str) and hook else None
    )


@authed.post(
    "/jobs",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=JobCreated,
    openapi_extra=JOBS_REQUEST_BODY,
)
async def create_job(request: Request, settings: SettingsDep, enq: EnqueuerDep) -> JobCreated:
    """Queue uploaded files or source URIs for ingestion."""
    length = int(request.headers.get("content-length") or 0)
    if length > settings.max_upload_bytes + _MULTIPART_OVERHEAD:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, "request body too large")
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        body = await _upload_items(request, settings)
        items: list[tuple[str, Action]] = [(s, "ingest") for s in body.sources]
    else:
        try:
            body = SourcesRequest.model_validate_json(await request.body())
        except ValueError as err:
            raise HTTPException(422, f"invalid JSON body: {err}") from err
        try:
            items = [(doc, "ingest") for src in body.sources for doc in expand(src, settings)]
        except FileNotFoundError as err:
            raise HTTPException(404, str(err)) from err
    job_id = enq.submit(items, force=body.force, webhook_url=body.webhook_url)
    return JobCreated(job_id=job_id)


@authed.get("/jobs/{job_id}", response_model=JobState)
def get_job(job_id: str, enq: EnqueuerDep, docs: bool = True) -> JobState:
    """Return a job's state, with its documents unless ``docs=false``."""
    job = enq.jobs.get(job_id, with_docs=docs)
    if job is None:
        raise HTTPException(404, f"job {job_id} not found")
    return job


@authed.get("/jobs", response_model=list[JobState])
def list_jobs(
    enq: EnqueuerDep,
    job_status: Annotated[JobStatus | None, Query(alias="status")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> list[JobState]:
    """Recent jobs, newest first, optionally filtered by status."""
    return enq.jobs.list(status=job_status, limit=limit)


@authed.delete(
    "/documents/{doc_id:path}", status_code=status.HTTP_202_ACCEPTED, response_model=JobCreated
)
def delete_document(doc_id: str, enq: EnqueuerDep) -> JobCreated:
    """Queue removal of a document (its chunks and ledger entry) by doc_id or source."""
    return JobCreated(job_id=enq.submit([(doc_id, "delete")]))


@authed.get("/metrics")
def metrics(request: Request) -> Response:
    """Prometheus text exposition of the shared counters and queue depth."""
    registry: CollectorRegistry = request.app.state.metrics
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


@router.get("/healthz")
def healthz(enq: EnqueuerDep) -> Response:
    """200 when Redis answers, 503 otherwise."""
    try:
        enq.redis.ping()
    except Exception as err:  # noqa: BLE001 - any failure means unhealthy
        return JSONResponse({"status": "unavailable", "error": str(err)}, status_code=503)
    return JSONResponse({"status": "ok"})


router.include_router(authed)

"""The API's routes. Handlers get the settings and the :class:`Enqueuer` from ``app.state``.

Blocking work (walking a folder, listing a bucket, Redis calls that scale with a job)
runs in the thread pool, never on the event loop, so ``/healthz`` and other requests
keep answering while a large job is submitted.
"""

from __future__ import annotations

import hmac
import logging
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Request, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.datastructures import UploadFile

from chunkweave.worker.api.schemas import (
    JOBS_REQUEST_BODY,
    JobCreated,
    JobPage,
    SourcesRequest,
)
from chunkweave.worker.api.uploads import store_upload
from chunkweave.worker.enqueue import Enqueuer, named_doc_id
from chunkweave.worker.jobs import Action, JobState, JobStatus
from chunkweave.worker.settings import Settings
from chunkweave.worker.sources import (
    SourceNotFoundError,
    TooManyDocumentsError,
    expand_confined,
)
from chunkweave.worker.webhook import redact

log = logging.getLogger(__name__)

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


async def _upload_items(
    request: Request, settings: Settings
) -> tuple[SourcesRequest, dict[str, str]]:
    """Store the uploaded files; return the request and their doc ids, if named."""
    form = await request.form(max_files=settings.sources.max_files_per_job, max_fields=1024)
    uploads = [f for f in form.getlist("file") if isinstance(f, UploadFile)]
    if not uploads:
        raise HTTPException(422, "multipart request without a 'file' part")
    names = [n for n in form.getlist("document_id") if isinstance(n, str)]
    if names and len(names) != len(uploads):
        raise HTTPException(422, f"{len(names)} document_id fields for {len(uploads)} files")
    ids = [named_doc_id(n) for n in names]  # ValueError: 422 below, before anything is stored
    stored = [await store_upload(upload, settings) for upload in uploads]
    hook = form.get("webhook_url")
    body = SourcesRequest(
        sources=stored, webhook_url=hook if isinstance(hook, str) and hook else None
    )
    return body, dict(zip(stored, ids, strict=False))


def _confined(body: SourcesRequest, settings: Settings) -> list[tuple[str, Action]]:
    """List the documents of the request's sources, each confined (run in the thread pool)."""
    found = [doc for src in body.sources for doc in expand_confined(src, settings)]
    limit = settings.sources.max_files_per_job
    if len(found) > limit:
        raise TooManyDocumentsError(f"more than {limit} documents for one job")
    return [(doc, "ingest") for doc in found]


def _public(job: JobState) -> JobState:
    """Return the job as callers see it: the webhook URL redacted (it may carry a token)."""
    return job.model_copy(update={"webhook_url": redact(job.webhook_url)})


@authed.post(
    "/jobs",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=JobCreated,
    openapi_extra=JOBS_REQUEST_BODY,
    responses={
        404: {"description": "A source is missing or outside the allowed roots/buckets"},
        413: {"description": "Body or file too large, or too many documents"},
        422: {"description": "Malformed body, source or webhook URL"},
    },
)
async def create_job(request: Request, settings: SettingsDep, enq: EnqueuerDep) -> JobCreated:
    """Queue uploaded files, or sources under the allowed roots and buckets, for ingestion."""
    try:
        if request.headers.get("content-type", "").startswith("multipart/form-data"):
            body, doc_ids = await _upload_items(request, settings)
            items: list[tuple[str, Action]] = [(s, "ingest") for s in body.sources]
        else:
            try:
                body = SourcesRequest.model_validate_json(await request.body())
            except ValueError as err:
                raise HTTPException(422, f"invalid JSON body: {err}") from err
            items = await run_in_threadpool(_confined, body, settings)
            doc_ids = {}
            if body.document_id is not None:
                if len(items) != 1:
                    raise ValueError(
                        f"document_id names one document; the sources hold {len(items)}"
                    )
                doc_ids = {items[0][0]: named_doc_id(body.document_id)}
        job_id = await run_in_threadpool(
            enq.submit, items, force=body.force, webhook_url=body.webhook_url, doc_ids=doc_ids
        )
    except SourceNotFoundError as err:
        raise HTTPException(404, str(err)) from err
    except TooManyDocumentsError as err:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, str(err)) from err
    except ValueError as err:  # malformed source, webhook URL or document_id
        raise HTTPException(422, str(err)) from err
    return JobCreated(job_id=job_id)


@authed.get("/jobs/{job_id}", response_model=JobState)
def get_job(job_id: str, enq: EnqueuerDep, docs: bool = True) -> JobState:
    """Return a job's state, with its documents unless ``docs=false``."""
    job = enq.jobs.get(job_id, with_docs=docs)
    if job is None:
        raise HTTPException(404, f"job {job_id} not found")
    return _public(job)


@authed.get("/jobs", response_model=JobPage)
def list_jobs(
    enq: EnqueuerDep,
    job_status: Annotated[JobStatus | None, Query(alias="status")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    cursor: Annotated[float | None, Query(description="`next_cursor` of the previous page")] = None,
) -> JobPage:
    """One page of jobs, newest first, optionally filtered by status.

    Each request reads a bounded slice of the job index; follow ``next_cursor`` until
    it is null (with a status filter a page may be short and still have a next one).
    """
    jobs, next_cursor = enq.jobs.page(status=job_status, limit=limit, cursor=cursor)
    return JobPage(jobs=[_public(j) for j in jobs], next_cursor=next_cursor)


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
    """200 when Redis answers, 503 otherwise (no detail: it needs no token)."""
    try:
        enq.redis.ping()
    except Exception as err:  # noqa: BLE001 - any failure means unhealthy
        log.warning("healthz: Redis did not answer: %s", err)
        return JSONResponse({"status": "unavailable"}, status_code=503)
    return JSONResponse({"status": "ok"})


router.include_router(authed)

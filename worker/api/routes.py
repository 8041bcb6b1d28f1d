"""The API's routes. Handlers get the settings and the :class:`Enqueuer` from ``app.state``.

Blocking work (walking a folder, listing a bucket, Redis calls that scale with a job)
runs in the thread pool, never on the event loop, so ``/healthz`` and other requests
keep answering while a large job is submitted.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
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
from chunkweave.worker.enqueue import Enqueuer, caller_metadata, check_job_tenant, named_doc_id
from chunkweave.worker.jobs import Action, JobState, JobStatus
from chunkweave.worker.settings import Settings
from chunkweave.worker.sources import (
    SourceNotFoundError,
    SourceUnavailableError,
    TooManyDocumentsError,
    expand_confined,
)
from chunkweave.worker.uploads import release

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


@dataclass(frozen=True)
class Caller:
    """Who is calling: the tenants it may see (``None``: every job and document)."""

    tenants: frozenset[str] | None = None

    def may(self, tenant: str | None) -> bool:
        """Whether the caller may see or touch what belongs to ``tenant``."""
        return self.tenants is None or tenant in self.tenants

    def tenant_for(self, asked: str | None) -> str | None:
        """Return the tenant a job of this caller goes to; 403 for one not its own."""
        if self.tenants is None:
            return asked
        if asked is None and len(self.tenants) == 1:
            return next(iter(self.tenants))
        if asked is None or asked not in self.tenants:
            raise HTTPException(
                status.HTTP_403_FORBIDDEN,
                "this token may only use its own tenant"
                + ("" if asked is None else f", not {asked!r}"),
            )
        return asked


def caller_for(settings: Settings, matches: Callable[[str], bool]) -> Caller | None:
    """Return who holds a configured token that ``matches`` accepts, or ``None``.

    ``matches`` compares a presented credential with one configured token (a bearer
    token, or the ``/ui`` session cookie made from it), in constant time. With no
    token configured everyone may do everything.
    """
    if not settings.api_guarded:
        return Caller()
    token = settings.api_token
    if token is not None and matches(token.get_secret_value()):
        return Caller()
    scoped = frozenset(
        tenant
        for tenant, secret in settings.api_tenant_tokens.items()
        if matches(secret.get_secret_value())
    )
    return Caller(scoped) if scoped else None


def authorize(
    request: Request,
    settings: SettingsDep,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    """Require ``Authorization: Bearer <token>`` when tokens are configured.

    ``api_token`` may do everything; a token of ``api_tenant_tokens`` only what
    belongs to its tenants. Every configured token is compared (constant time).
    """
    given = creds.credentials if creds is not None else ""
    caller = caller_for(settings, lambda secret: hmac.compare_digest(given, secret))
    if caller is None or (creds is None and settings.api_guarded):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "missing or invalid bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )
    request.state.caller = caller
    return caller


CallerDep = Annotated[Caller, Depends(authorize)]


def require_main(caller: CallerDep) -> Caller:
    """Refuse a tenant-scoped token (403): store-wide operations need the main token."""
    if caller.tenants is not None:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            "this route spans every tenant (reindex, metrics): it needs the main token, "
            "not a tenant's",
        )
    return caller


#: A page cursor: the ``next_cursor`` of the previous page, a finite creation time.
Cursor = Annotated[
    float | None,
    Query(ge=0, allow_inf_nan=False, description="`next_cursor` of the previous page"),
]


router = APIRouter()
#: Routes behind the bearer token (all but ``/healthz``).
authed = APIRouter(dependencies=[Depends(authorize)])


async def _upload_items(
    request: Request, settings: Settings, caller: Caller
) -> tuple[SourcesRequest, dict[str, str], dict[str, dict[str, Any]]]:
    """Store the uploaded files; return the request and their doc ids, if named."""
    form = await request.form(max_files=settings.sources.max_files_per_job, max_fields=1024)
    uploads = [f for f in form.getlist("file") if isinstance(f, UploadFile)]
    if not uploads:
        raise HTTPException(422, "multipart request without a 'file' part")
    names = [n for n in form.getlist("document_id") if isinstance(n, str)]
    if names and len(names) != len(uploads):
        raise HTTPException(422, f"{len(names)} document_id fields for {len(uploads)} files")
    ids = [named_doc_id(n) for n in names]  # ValueError: 422 below, before anything is stored
    metas = _form_metadata(form.getlist("metadata"), uploads, settings)
    tenant = form.get("tenant")
    check_job_tenant(
        caller.tenant_for(tenant if isinstance(tenant, str) and tenant else None), settings
    )
    r = get_enqueuer(request).redis
    stored: list[str] = []
    try:
        for upload in uploads:
            stored.append(await store_upload(upload, settings, r))
    except BaseException:
        # A refused request leaves nothing behind: not the files it had stored already.
        for source in stored:
            await run_in_threadpool(release, source, settings, r)
        raise
    hook = form.get("webhook_url")
    body = SourcesRequest(
        sources=stored,
        webhook_url=hook if isinstance(hook, str) and hook else None,
        tenant=tenant if isinstance(tenant, str) and tenant else None,
    )
    per_file = dict(zip(stored, metas, strict=False)) if metas else {}
    return body, dict(zip(stored, ids, strict=False)), per_file


def _form_metadata(
    fields: list[Any], uploads: list[UploadFile], settings: Settings
) -> list[dict[str, Any]]:
    """Read the ``metadata`` form fields: one JSON object for every file, or one per file.

    Validated before anything is stored (422 naming the file, the key and why).
    """
    texts = [f for f in fields if isinstance(f, str)]
    if not texts:
        return []
    if len(texts) not in (1, len(uploads)):
        raise HTTPException(422, f"{len(texts)} metadata fields for {len(uploads)} files")
    out: list[dict[str, Any]] = []
    for i, upload in enumerate(uploads):
        text = texts[0] if len(texts) == 1 else texts[i]
        name = upload.filename or f"file {i + 1}"
        try:
            raw = json.loads(text)
        except ValueError as err:
            raise HTTPException(422, f"{name}: metadata is not JSON: {err}") from err
        if not isinstance(raw, dict):
            raise HTTPException(422, f"{name}: metadata must be a JSON object")
        out.append(caller_metadata(raw, settings, where=name))  # ValueError: 422
    return out


def _confined(body: SourcesRequest, settings: Settings) -> list[tuple[str, Action]]:
    """List the documents of the request's sources, each confined (run in the thread pool)."""
    found = [doc for src in body.sources for doc in expand_confined(src, settings)]
    limit = settings.sources.max_files_per_job
    if len(found) > limit:
        raise TooManyDocumentsError(f"more than {limit} documents for one job")
    return [(doc, "ingest") for doc in found]


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
async def create_job(
    request: Request, settings: SettingsDep, enq: EnqueuerDep, caller: CallerDep
) -> JobCreated:
    """Queue uploaded files, or sources under the allowed roots and buckets, for ingestion.

    ``metadata`` and ``tenant`` are checked before anything is stored or queued; a
    tenant-scoped token may only name its own tenant (403).
    """
    per_file: dict[str, dict[str, Any]] = {}
    uploaded: list[str] = []  # held for the job; released if no job is made
    try:
        if request.headers.get("content-type", "").startswith("multipart/form-data"):
            body, doc_ids, per_file = await _upload_items(request, settings, caller)
            uploaded = list(body.sources)
            items: list[tuple[str, Action]] = [(s, "ingest") for s in body.sources]
        else:
            try:
                body = SourcesRequest.model_validate_json(await request.body())
            except ValueError as err:
                raise HTTPException(422, f"invalid JSON body: {err}") from err
            tenant = caller.tenant_for(body.tenant)  # 403 before the sources are read
            check_job_tenant(tenant, settings)
            caller_metadata(body.metadata, settings, where="metadata")
            items = await run_in_threadpool(_confined, body, settings)
            doc_ids = {}
            if body.document_id is not None:
                if len(items) != 1:
                    raise ValueError(
                        f"document_id names one document; the sources hold {len(items)}"
                    )
                doc_ids = {items[0][0]: named_doc_id(body.document_id)}
        try:
            job_id = await run_in_threadpool(
                partial(
                    enq.submit,
                    items,
                    force=body.force,
                    webhook_url=body.webhook_url,
                    doc_ids=doc_ids,
                    metadata=body.metadata,
                    per_source=per_file,
                    tenant=caller.tenant_for(body.tenant),
                )
            )
        except BaseException:
            for source in uploaded:  # refused: the uploads it stored are not left behind
                await run_in_threadpool(release, source, settings, enq.redis)
            raise
    except SourceNotFoundError as err:
        raise HTTPException(404, str(err)) from err
    except SourceUnavailableError as err:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(err)) from err
    except TooManyDocumentsError as err:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, str(err)) from err
    except ValueError as err:  # malformed source, webhook URL or document_id
        raise HTTPException(422, str(err)) from err
    return JobCreated(job_id=job_id)


@authed.get("/jobs/{job_id}", response_model=JobState)
def get_job(job_id: str, enq: EnqueuerDep, caller: CallerDep, docs: bool = True) -> JobState:
    """Return a job's state, with its documents unless ``docs=false``.

    Another tenant's job reads exactly as a missing one (404).
    """
    job = enq.jobs.get(job_id, with_docs=docs)
    if job is None or not caller.may(job.tenant):
        raise HTTPException(404, f"job {job_id} not found")
    return job.shown()


@authed.get("/jobs", response_model=JobPage)
def list_jobs(
    enq: EnqueuerDep,
    caller: CallerDep,
    job_status: Annotated[JobStatus | None, Query(alias="status")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    cursor: Cursor = None,
) -> JobPage:
    """One page of jobs, newest first, optionally filtered by status.

    Each request reads a bounded slice of the job index; follow ``next_cursor`` until
    it is null (with a status filter a page may be short and still have a next one).
    A tenant-scoped token lists only its tenants' jobs.
    """
    jobs, next_cursor = enq.jobs.page(
        status=job_status, limit=limit, cursor=cursor, tenants=caller.tenants
    )
    return JobPage(jobs=[j.shown() for j in jobs], next_cursor=next_cursor)


@authed.delete(
    "/documents/{doc_id:path}", status_code=status.HTTP_202_ACCEPTED, response_model=JobCreated
)
def delete_document(
    doc_id: str,
    enq: EnqueuerDep,
    caller: CallerDep,
    tenant: Annotated[str | None, Query(description="The document's tenant.")] = None,
) -> JobCreated:
    """Queue removal of a document (its chunks and ledger entry) by doc_id or source.

    In ``tenant`` (a tenant-scoped token: only its own, 403 for another's).
    """
    try:
        job_id = enq.submit([(doc_id, "delete")], tenant=caller.tenant_for(tenant))
    except ValueError as err:
        raise HTTPException(422, str(err)) from err
    return JobCreated(job_id=job_id)


@authed.get("/metrics", dependencies=[Depends(require_main)])
def metrics(request: Request) -> Response:
    """Prometheus text exposition of the shared counters and queue depth.

    Counts every tenant's documents: not for a tenant-scoped token (403).
    """
    registry: CollectorRegistry = request.app.state.metrics
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


router.include_router(authed)

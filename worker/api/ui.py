"""The service dashboard: ``GET /ui`` (jobs), ``/ui/jobs/{id}`` (documents), ``/ui/inspect``.

Same token rule as the API: with any token configured (``api.token`` or a tenant's in
``api.tenant_tokens``) nothing here answers without one. A browser signs in once at
``POST /ui/login`` with a token and gets a session cookie (HttpOnly, SameSite=Strict,
path ``/ui``) holding an HMAC of the token, not the token; a ``Authorization: Bearer``
header works too. Without a valid one every page answers 401 with the sign-in form.
A tenant's token sees only its tenants' jobs and documents. Pages are read-only and
run no script but their own (a hash-pinned Content-Security-Policy).

``/ui/inspect?doc_id=`` is the inspector report (:mod:`chunkweave.worker.inspect`)
of a stored document: its chunks and regions read from Weaviate, the pages drawn
from the source when it is still readable, under the allowed roots (the API's
confinement), unchanged since ingestion and a PDF; otherwise the panel alone, with
the reason on the page.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import unquote, urlparse

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse

from chunkweave.parsers.document import file_sha1
from chunkweave.worker.api import ui_html
from chunkweave.worker.api.routes import Caller, Cursor, EnqueuerDep, SettingsDep, caller_for
from chunkweave.worker.enqueue import check_job_tenant
from chunkweave.worker.inspect.write import inspect_csp
from chunkweave.worker.jobs import JobStatus
from chunkweave.worker.settings import Settings

#: The session cookie's name.
COOKIE = "chunkweave_ui"
#: Documents shown per page of a job.
DOCS_PER_PAGE = 200
#: Longest ``doc_id`` the inspector view accepts.
MAX_DOC_ID = 2048

ui_router = APIRouter(prefix="/ui", include_in_schema=False)
_store_lock = threading.Lock()


def session_value(token: str) -> str:
    """Return the cookie value of a session for ``token`` (an HMAC; the token is not in it)."""
    return hmac.new(token.encode(), b"chunkweave /ui session", hashlib.sha256).hexdigest()


def _caller(request: Request, settings: Settings) -> Caller | None:
    """Return who is signed in (bearer header or session cookie), or ``None``.

    Any configured token signs in, the main one or a tenant's; a tenant's sees only
    its tenants' jobs and documents.
    """
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() == "bearer" and given.strip():
        bearer = given.strip()
        return caller_for(settings, lambda secret: hmac.compare_digest(bearer, secret))
    cookie = request.cookies.get(COOKIE, "")
    if not cookie and settings.api.guarded:
        return None
    return caller_for(settings, lambda secret: hmac.compare_digest(cookie, session_value(secret)))


def _html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers={"Content-Security-Policy": ui_html.CSP})


def _denied() -> HTMLResponse:
    return _html(ui_html.login(), 401)


@ui_router.get("", response_class=HTMLResponse)
def jobs(
    request: Request,
    settings: SettingsDep,
    enq: EnqueuerDep,
    status: Annotated[JobStatus | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 25,
    cursor: Cursor = None,
) -> Response:
    """Show the job list, newest first, a page at a time, optionally filtered by status."""
    caller = _caller(request, settings)
    if caller is None:
        return _denied()
    found, next_cursor = enq.jobs.page(
        status=status, limit=limit, cursor=cursor, tenants=caller.tenants
    )
    names = enq.jobs.sources([j.id for j in found])
    return _html(ui_html.jobs_page(found, status, limit, next_cursor, names))


@ui_router.get("/", include_in_schema=False)
def jobs_slash() -> RedirectResponse:
    """``/ui/`` is ``/ui``."""
    return RedirectResponse("/ui", status_code=307)


@ui_router.post("/login")
def login(request: Request, settings: SettingsDep, token: Annotated[str, Form()] = "") -> Response:
    """Check the token (the main one or a tenant's); on success set the session cookie."""
    if not settings.api.guarded:
        return RedirectResponse("/ui", status_code=303)
    configured = [settings.api.token, *settings.api.tenant_tokens.values()]
    secrets = [t.get_secret_value() for t in configured if t is not None]
    # Every token is compared (constant time each), so timing tells nothing of which.
    matched = [secret for secret in secrets if hmac.compare_digest(token, secret)]
    if not matched:
        return _html(ui_html.login("wrong token"), 401)
    resp = RedirectResponse("/ui", status_code=303)
    resp.set_cookie(
        COOKIE,
        session_value(matched[0]),
        httponly=True,
        samesite="strict",
        path="/ui",
        secure=request.url.scheme == "https",
    )
    return resp


@ui_router.get("/jobs/{job_id}", response_class=HTMLResponse)
def job(
    job_id: str,
    request: Request,
    settings: SettingsDep,
    enq: EnqueuerDep,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> Response:
    """One job's documents (a page of :data:`DOCS_PER_PAGE`), with timings and inspector links.

    Another tenant's job reads exactly as a missing one (404).
    """
    caller = _caller(request, settings)
    if caller is None:
        return _denied()
    state = enq.jobs.get(job_id, with_docs=True)
    if state is None or not caller.may(state.tenant):
        return _html(ui_html.page("not found", f"<p>job {_esc(job_id)} not found</p>"), 404)
    docs = list(state.docs or ())[offset : offset + DOCS_PER_PAGE]
    return _html(ui_html.job_page(state, docs, offset, DOCS_PER_PAGE))


@ui_router.get("/inspect", response_class=HTMLResponse)
def inspect(
    request: Request,
    settings: SettingsDep,
    doc_id: Annotated[str, Query(min_length=1, max_length=MAX_DOC_ID)],
    tenant: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
) -> Response:
    """Show the inspector report of a stored document (see the module docstring).

    On a multi-tenant store the document is read in ``tenant`` (a tenant's token: its
    own, named or implied; the main token must name one, else 422).
    """
    caller = _caller(request, settings)
    if caller is None:
        return _denied()
    try:
        tenant = check_job_tenant(caller.tenant_for(tenant), settings)
    except HTTPException as err:
        return _html(ui_html.page("inspect", f"<p>{_esc(str(err.detail))}</p>"), err.status_code)
    except ValueError as err:
        return _html(ui_html.page("inspect", f"<p>{_esc(str(err))}</p>"), 422)
    from chunkweave.storage.errors import TooManyChunksError
    from chunkweave.worker.inspect import build_report
    from chunkweave.worker.inspect.stored import stored_chunks
    from chunkweave.worker.inspect.write import iter_html

    weaviate_settings = settings
    if settings.weaviate.url is None:  # a `serve` on the data directory may have started since
        from chunkweave.worker.discovery import discover

        found = discover(settings)
        if found.weaviate.state != "found":
            body = f"<p>{_esc(found.missing('Weaviate'))}: nothing to inspect</p>"
            return _html(ui_html.page("inspect", body), 503)
        weaviate_settings = found.settings
    try:
        with _store_lock:
            store = _store(request, weaviate_settings)
            chunks = stored_chunks(store if tenant is None else store.for_tenant(tenant), doc_id)
    except TooManyChunksError as err:
        return _html(ui_html.page("inspect", f"<p>{_esc(str(err))}</p>"), 413)
    if not chunks:
        return _html(ui_html.page("inspect", f"<p>no chunks stored for {_esc(doc_id)}</p>"), 404)
    first = chunks[0]
    pdf, why = readable_source(first.source, first.doc_sha1, settings)
    note = "Stored chunks: embed_text is not stored and left-out elements are not known."
    if why:
        note = f"{why}: the chunks are shown without page images. {note}"
    pages = sorted({p for c in chunks for p in c.pages})
    report = build_report(
        chunks,
        source=first.source,
        format="pdf" if pages else "docx",
        page_count=len(pages) or None,
        source_pdf=pdf,
        note=note,
        embed_text_known=False,
    )
    password = settings.parse.password
    secret = password.get_secret_value() if password is not None else None
    return StreamingResponse(
        iter_html(report, password=secret),
        media_type="text/html; charset=utf-8",
        headers={"Content-Security-Policy": inspect_csp()},
    )


def readable_source(
    source: str, doc_sha1: str, settings: Settings
) -> tuple[str | None, str | None]:
    """Return ``(path, None)`` when ``source`` can be drawn, else ``(None, why not)``.

    Drawn only when it is a local file under the allowed roots (resolved, symlinks
    followed), still holds the bytes that were ingested (same SHA1) and is a PDF.
    """
    parsed = urlparse(source)
    if parsed.scheme == "file":
        path = Path(unquote(parsed.path))
    elif parsed.scheme and len(parsed.scheme) > 1:
        return None, f"{parsed.scheme}:// sources are not read back for page images"
    else:
        path = Path(source)
    try:
        resolved = path.expanduser().resolve()
    except OSError:
        return None, "the source cannot be resolved"
    # The document's own upload (kept: ``upload_retention=keep``) may be drawn too: the
    # caller read the document, so it may see the file it was made from.
    allowed = (*settings.source_roots, settings.upload_dir.expanduser().resolve())
    if not any(resolved.is_relative_to(root) for root in allowed):
        return None, "the source is outside the allowed roots"
    if not resolved.is_file():
        return None, "the source is no longer readable"
    with open(resolved, "rb") as fh:
        if fh.read(5) != b"%PDF-":
            return None, "the source is not a PDF"
    if doc_sha1 and file_sha1(resolved) != doc_sha1:
        return None, "the source changed since it was ingested"
    return str(resolved), None


def _store(request: Request, settings: Settings) -> Any:
    """Return the app's chunk store, opened on first use (the caller holds the lock)."""
    store = getattr(request.app.state, "ui_store", None)
    if store is None:
        from chunkweave.storage.embedders import make_embedder
        from chunkweave.storage.stores import open_store
        from chunkweave.storage.values import EmbedderIdentity

        embedder = make_embedder(settings.embedder)
        identity = EmbedderIdentity(embedder.name, embedder.dimension)
        store = open_store(settings.weaviate, identity)
        request.app.state.ui_store = store
    return store


def close_store(app: Any) -> None:
    """Close the store the dashboard opened, if any (at app shutdown)."""
    store = getattr(app.state, "ui_store", None)
    if store is not None:
        store.close()
        app.state.ui_store = None


def _esc(text: str) -> str:
    import html

    return html.escape(text)

"""``chunkweave mcp``: a Model Context Protocol server (stdio) over one chunkweave store.

Tools (the official ``mcp`` SDK's :class:`MCPServer`):

- ``search``: the stored chunks best matching a query (hybrid, or by vector or
  keyword only), optionally filtered by document, source, type or page;
  at most :data:`MAX_K` hits, the query at most :data:`MAX_QUERY_CHARS` characters.
  An agent is no trusted caller: it searches as the principals the server is
  configured with (``chunkweave mcp --principal``, ``CHUNKWEAVE_MCP_PRINCIPALS``),
  under the collection's ACL rule; configured with none it fails closed and sees
  only documents that carry no ``acl``.
- ``enqueue``: queue paths under ``CHUNKWEAVE_SOURCES__ROOTS``
  or ``s3://`` URIs of the allowed buckets for ingestion, exactly as
  ``POST /jobs`` does: each source confined (symlinks resolved), at most
  ``max_files_per_job`` documents; anything else is refused as not found.
- ``job_status``: a job's state and (at most :data:`MAX_DOCS` of) its documents.
- ``list_jobs``: the newest jobs, optionally by status.
- ``list_documents``: the document ledger (what is stored, what failed), paged.

Every failure comes back as a tool error with its reason (refusals, bad arguments,
a Redis or Weaviate that cannot be reached); tracebacks go to stderr only with
``chunkweave --debug mcp``. stdout is the protocol channel, so nothing else is
printed there.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import asdict
from typing import Any, Literal

from chunkweave.worker.settings import Settings

log = logging.getLogger(__name__)

#: Most hits one search returns.
MAX_K = 50
#: Longest query text.
MAX_QUERY_CHARS = 2000
#: Most documents of one job a status answer lists (the counts cover all of them).
MAX_DOCS = 200
#: Most ledger entries or jobs one call lists.
MAX_LIST = 500

ChunkType = Literal["text", "table", "list", "code", "formula", "figure", "section"]
Status = Literal["queued", "running", "done", "failed"]


class Tools:
    """What the tools do, on one settings object; the store and Redis are opened on first use."""

    def __init__(self, settings: Settings, principals: tuple[str, ...] = ()) -> None:
        self.settings = settings
        #: Who the agent searches as (empty: only documents without an ``acl``).
        self.principals = principals or settings.mcp_principals
        self._lock = threading.Lock()
        self._store: Any = None
        self._embedder: Any = None
        self._enqueuer: Any = None

    def close(self) -> None:
        """Close what was opened."""
        if self._store is not None:
            self._store.close()
        if self._enqueuer is not None:
            self._enqueuer.close()

    def _open_store(self) -> tuple[Any, Any]:
        with self._lock:
            if self._store is None:
                from chunkweave.storage.embedders import make_embedder
                from chunkweave.storage.stores import open_store
                from chunkweave.storage.values import EmbedderIdentity

                embedder = make_embedder(self.settings.embedder)
                identity = EmbedderIdentity(embedder.name, embedder.dimension)
                self._store = open_store(self.settings.weaviate, identity)
                self._embedder = embedder
            return self._store, self._embedder

    def _open_enqueuer(self) -> Any:
        with self._lock:
            if self._enqueuer is None:
                from chunkweave.worker.enqueue import Enqueuer

                self._enqueuer = Enqueuer(self.settings)
            return self._enqueuer

    def search(
        self,
        query: str,
        k: int = 5,
        doc_id: str | None = None,
        source: str | None = None,
        type: ChunkType | None = None,
        page: int | None = None,
        mode: Literal["hybrid", "vector", "keyword"] = "hybrid",
    ) -> dict[str, Any]:
        """Return the best ``k`` stored chunks for ``query`` (see the module docstring)."""
        from chunkweave.storage.filters import Condition, SearchRequest
        from chunkweave.storage.metadata import HAS_ACL

        if not query.strip():
            raise ValueError("query is empty")
        if len(query) > MAX_QUERY_CHARS:
            raise ValueError(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
        if not 1 <= k <= MAX_K:
            raise ValueError(f"k must be 1-{MAX_K}")
        where: list[Condition] = []
        for name, value in (("doc_id", doc_id), ("source", source), ("type", type)):
            if value is not None:
                where.append(Condition(name, "equal", value))
        if page is not None:
            where.append(Condition("pages", "equal", int(page)))
        if not self.principals:
            # Fails closed: no ACL-restricted chunk reaches an agent nobody vouched for.
            where.append(Condition(HAS_ACL, "equal", False))
        store, embedder = self._open_store()
        vector = None
        if mode != "keyword" and embedder.dimension:
            vector = embedder.embed_query(query)
        request = SearchRequest(
            query,
            vector,
            k=k,
            where=tuple(where),
            hybrid=mode == "hybrid",
            principals=self.principals or None,
        )
        hits = store.search(request)
        return {
            "hits": [
                {
                    "rank": rank,
                    "score": hit.score,
                    "text": hit.text,
                    "heading_path": list(hit.heading_path),
                    "pages": list(hit.pages),
                    "source": hit.source,
                    "doc_id": hit.doc_id,
                    "type": hit.type,
                    "regions": [r.model_dump(mode="json") for r in hit.regions],
                    # Small-to-big: the table rows / sentence spans that matched.
                    "matched": [asdict(m) for m in hit.matched],
                }
                for rank, hit in enumerate(hits, 1)
            ]
        }

    def enqueue(self, sources: list[str], force: bool = False) -> dict[str, Any]:
        """Queue ``sources`` for ingestion under the API's confinement; return the job id."""
        from chunkweave.worker.sources import (
            SourceNotFoundError,
            TooManyDocumentsError,
            expand_confined,
        )

        if not sources:
            raise ValueError("no sources given")
        limit = self.settings.sources.max_files_per_job
        if len(sources) > limit:
            raise ValueError(f"{len(sources)} sources; one job holds at most {limit} documents")
        found: list[str] = []
        for src in sources:
            try:
                documents = expand_confined(src, self.settings)
            except SourceNotFoundError as err:
                raise SourceNotFoundError(_refusal(src, self.settings)) from err
            if not documents:
                raise ValueError(f"{src}: no PDF or DOCX document there (hidden, temp names skip)")
            found.extend(documents)
            if len(found) > limit:
                raise TooManyDocumentsError(f"more than {limit} documents for one job")
        enq = self._open_enqueuer()
        job_id = enq.submit([(doc, "ingest") for doc in found], force=force)
        return {"job_id": job_id, "documents": len(found)}

    def job_status(self, job_id: str) -> dict[str, Any]:
        """Return a job's state with at most :data:`MAX_DOCS` of its documents."""
        job = self._open_enqueuer().jobs.get(job_id, with_docs=True)
        if job is None:
            raise ValueError(f"job {job_id} not found")
        docs = list(job.docs or ())
        out = (
            job.shown().model_copy(update={"docs": tuple(docs[:MAX_DOCS])}).model_dump(mode="json")
        )
        out["docs_omitted"] = max(0, len(docs) - MAX_DOCS)
        return dict(out)

    def list_jobs(self, status: Status | None = None, limit: int = 20) -> dict[str, Any]:
        """Return the newest ``limit`` jobs (without their documents), optionally by status."""
        if not 1 <= limit <= MAX_LIST:
            raise ValueError(f"limit must be 1-{MAX_LIST}")
        jobs, _ = self._open_enqueuer().jobs.page(status=status, limit=limit)
        return {"jobs": [j.shown().model_dump(mode="json") for j in jobs]}

    def list_documents(
        self, status: Literal["ok", "failed"] | None = None, limit: int = 100, offset: int = 0
    ) -> dict[str, Any]:
        """Return ledger entries sorted by source, ``limit`` from ``offset``, and the total."""
        if not 1 <= limit <= MAX_LIST:
            raise ValueError(f"limit must be 1-{MAX_LIST}")
        if offset < 0:
            raise ValueError("offset must be >= 0")
        store, _ = self._open_store()
        ledger = store.open_ledger()
        entries = sorted(
            (e for e in ledger.entries() if status is None or e.status == status),
            key=lambda e: e.source,
        )
        return {
            "total": len(entries),
            "documents": [e.model_dump(mode="json") for e in entries[offset : offset + limit]],
        }


def _refusal(src: str, settings: Settings) -> str:
    """Which confinement check ``src`` failed: the agent runs under the operator's roots."""
    from chunkweave.worker.sources.local import refusal
    from chunkweave.worker.sources.s3 import PREFIX, split_s3

    if not src.startswith(PREFIX):
        return refusal(src, settings)
    bucket, _key = split_s3(src)
    if bucket not in settings.sources.buckets:
        allowed = ", ".join(settings.sources.buckets) or "none"
        return f"{src}: bucket {bucket!r} is not allowed ({allowed}; CHUNKWEAVE_SOURCES__BUCKETS)"
    return f"{src}: no such object or prefix in an allowed bucket (or S3 cannot be reached)"


def build_server(tools: Tools, *, debug: bool = False) -> Any:
    """Return the :class:`mcp.server.mcpserver.MCPServer` exposing ``tools``.

    Every failure reaches the client as a tool error with its reason (a refusal or a
    bad argument as its message; anything else as ``Type: message``, such as a Redis
    or Weaviate that cannot be reached). The traceback goes to stderr only with
    ``debug`` (``chunkweave --debug mcp``).
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from chunkweave.storage.errors import StoreError
    from chunkweave.worker.sources import (
        InvalidSourceError,
        SourceNotFoundError,
        TooManyDocumentsError,
    )

    expected = (
        ValueError,
        SourceNotFoundError,
        InvalidSourceError,
        TooManyDocumentsError,
        StoreError,
    )
    server = MCPServer(
        name="chunkweave",
        instructions=(
            "Search and feed a chunkweave store of PDF/DOCX chunks. Sources must lie "
            "under the service's allowed roots or buckets."
        ),
    )

    def guarded(fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except expected as err:
                raise ToolError(str(err)) from err
            except Exception as err:  # noqa: BLE001 - the agent gets the reason, not a trace
                if debug:
                    log.exception("tool %s failed", fn.__name__)
                raise ToolError(f"{type(err).__name__}: {err}") from err

        call.__name__ = fn.__name__
        call.__doc__ = fn.__doc__
        call.__annotations__ = fn.__annotations__
        call.__wrapped__ = fn  # type: ignore[attr-defined]
        return call

    for fn in (
        tools.search,
        tools.enqueue,
        tools.job_status,
        tools.list_jobs,
        tools.list_documents,
    ):
        server.add_tool(guarded(fn), name=fn.__name__, description=fn.__doc__)
    return server

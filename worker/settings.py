"""The one settings object, loaded once from the environment (prefix ``CHUNKWEAVE_``).

Nested fields use ``__``: ``CHUNKWEAVE_WEAVIATE__URL``, ``CHUNKWEAVE_EMBEDDER__KIND``,
``CHUNKWEAVE_CHUNKING__MAX_TOKENS``. Secrets are ``SecretStr``: never logged or printed.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from chunkweave.chunking.models import ChunkOptions
from chunkweave.parsers.document import ParseOptions
from chunkweave.storage.config import EmbedderConfig, FilesConfig, WeaviateConfig


class S3Config(BaseModel):
    """An S3-compatible endpoint and its credentials."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key_id: SecretStr | None = None
    secret_access_key: SecretStr | None = None
    poll_interval_s: float = Field(default=10.0, gt=0)


class SourcesConfig(BaseModel):
    """What the HTTP API may read: ``POST /jobs`` sources are confined to these.

    A local path must resolve (symlinks followed) under one of ``roots``; an
    ``s3://`` URI must name one of ``buckets``. Anything else is answered exactly as
    a missing source is, so the API is no oracle for what exists on the server.
    The CLI and ``from chunkweave import enqueue`` run as their user and are not
    confined.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Folders API callers may name (default: the uploads folder, and under
    #: ``chunkweave serve`` the watched folder).
    roots: tuple[Path, ...] = ()
    #: Buckets API callers may name (default: none; under ``serve``, the watched one).
    buckets: tuple[str, ...] = ()
    #: Documents one job may hold; a source that expands to more is refused.
    max_files_per_job: int = Field(default=10_000, gt=0)


class SuperviseConfig(BaseModel):
    """How ``chunkweave serve`` keeps what it started running (:mod:`chunkweave.worker.supervise`).

    A part that dies (the embedded Redis or Weaviate, the worker or API process) is
    restarted after ``backoff_s``, doubling per restart up to ``backoff_max_s``; a part
    up for ``healthy_s`` starts again from ``backoff_s``. After ``max_failed_restarts``
    restarts in a row that did not come up, serve stops with an error.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    backoff_s: float = Field(default=1.0, gt=0)
    backoff_max_s: float = Field(default=30.0, gt=0)
    healthy_s: float = Field(default=60.0, gt=0)
    max_failed_restarts: int = Field(default=10, ge=1)
    #: Seconds serve waits for a worker to finish its running tasks when it stops
    #: (SIGTERM, then SIGKILL); 2 s when Redis is gone, since a worker can finish nothing.
    stop_grace_s: float = Field(default=30.0, gt=0)
    #: Where serve writes its parts' state for its API's ``/healthz``; serve sets it for
    #: the API it starts (not a setting to set by hand).
    health_file: Path | None = None


class Settings(BaseSettings):
    """Everything chunkweave is configured with. Build with :func:`get_settings`."""

    model_config = SettingsConfigDict(
        env_prefix="CHUNKWEAVE_", env_nested_delimiter="__", extra="forbid", frozen=True
    )

    data_dir: Path = Field(default_factory=lambda: Path(user_data_dir("chunkweave")))
    redis_url: SecretStr | None = None
    weaviate: WeaviateConfig = WeaviateConfig()
    embedder: EmbedderConfig = EmbedderConfig()
    parse: ParseOptions = ParseOptions()
    chunking: ChunkOptions = ChunkOptions()
    s3: S3Config = S3Config()
    sources: SourcesConfig = SourcesConfig()
    files: FilesConfig = FilesConfig()
    api_token: SecretStr | None = None
    #: Tokens scoped to tenants (``{"tenant-a": "token-a"}``): a caller with one may
    #: enqueue, list, read and delete only its tenant's jobs and documents
    #: (``api_token`` may do all). Any of them also turns the OpenAPI docs off.
    api_tenant_tokens: dict[str, SecretStr] = Field(default_factory=dict)
    #: Who an MCP agent searches as (``chunkweave mcp --principal`` adds to them): only
    #: chunks whose ``acl`` names one of them. None: only documents with no ``acl``.
    mcp_principals: tuple[str, ...] = ()
    #: Bytes of one uploaded file; also bounds a multipart request (plus form overhead).
    max_upload_bytes: int = Field(default=100 * 1024 * 1024, gt=0)
    #: Bytes of a JSON request body (``POST /jobs`` with source URIs).
    max_json_bytes: int = Field(default=1024 * 1024, gt=0)
    #: What happens to an uploaded file once its document is stored (or has failed for
    #: good): ``delete`` it, or ``keep`` it in ``upload_dir``.
    upload_retention: Literal["delete", "keep"] = "delete"
    task_soft_time_limit_s: int = Field(default=540, gt=0)
    task_hard_time_limit_s: int = Field(default=600, gt=0)
    max_memory_mb: int = Field(default=2048, gt=0)
    max_attempts: int = Field(default=3, ge=1)
    fanout_pages: int = Field(default=200, gt=0)
    # The service: queue, locks, job state, watcher, API.
    #: Celery queue the tasks are routed to (``chunkweave worker --queues`` reads it).
    queue: str = "chunkweave"
    #: Pages per fan-out part when a PDF is split (see ``chunkweave.worker.tasks.fanout``).
    fanout_part_pages: int = Field(default=100, gt=0)
    #: Chunks per embed slice of a fanned-out document (``chunkweave.worker.tasks.slices``);
    #: documents with fewer chunks are embedded by the joining task itself.
    fanout_embed_chunks: int = Field(default=256, gt=0)
    #: TTL of the per-document write lock; a live task renews it every third of this.
    lock_ttl_s: int = Field(default=30, ge=2)
    #: Retries of a task that met a transient error (store/embedder unavailable).
    task_max_retries: int = Field(default=5, ge=0)
    #: Upper bound of the exponential retry backoff (jitter applies below it).
    retry_backoff_max_s: int = Field(default=300, gt=0)
    #: How long job state, attempt counters and fan-out scratch live in Redis.
    job_ttl_s: int = Field(default=7 * 24 * 3600, gt=0)
    #: Niceness that bulk producers add to their own CPU priority (``enqueue``,
    #: ``backfill``, ``watch`` and serve's watcher), so workers on the same machine keep
    #: the CPU while thousands of tasks are sent; 0 leaves the priority alone.
    producer_nice: int = Field(default=10, ge=0, le=19)
    #: Seconds between full reconciles of a watched folder (events cover the rest).
    watch_reconcile_s: float = Field(default=300.0, gt=0)
    #: Seconds a watched file must stay unchanged before a polling watcher acts on it.
    watch_settle_s: float = Field(default=1.0, ge=0)
    #: Where HTTP uploads are written; must be visible to every worker (shared volume).
    uploads_dir: Path | None = None
    #: ``s3://bucket/prefix/`` for HTTP uploads instead of ``uploads_dir``: API and
    #: workers on different hosts then need no shared disk (uses ``s3``'s endpoint).
    uploads_s3: str | None = None
    #: Key that signs completion webhooks (HMAC-SHA256 in ``X-Chunkweave-Signature``);
    #: every webhook is signed, so a job with a webhook needs it.
    webhook_secret: SecretStr | None = None
    #: Hosts (names, addresses or CIDR ranges) a webhook may reach although they are
    #: loopback, private or link-local (by default only public addresses are called).
    webhook_allow_hosts: tuple[str, ...] = ()
    webhook_retries: int = Field(default=5, ge=0)
    webhook_timeout_s: float = Field(default=10.0, gt=0)
    #: ``module:function`` building the per-process pipeline from the settings (see
    #: :mod:`chunkweave.worker.runtime`); replace it to plug in a different pipeline
    #: (the tests plug in one that hangs or crashes on purpose).
    pipeline_factory: str = "chunkweave.worker.runtime:default_pipeline"
    # --- Work ownership (issue 37): worker heartbeats and the reconciler -------------
    # (to be folded into a sub-model with the others; see chunkweave.worker.reconcile)
    #: Seconds between a worker's heartbeats (each names the tasks the worker holds).
    heartbeat_interval_s: float = Field(default=5.0, gt=0)
    #: Seconds a heartbeat lives: a worker silent this long is gone, its documents
    #: are requeued and its document locks may be broken at once.
    heartbeat_ttl_s: float = Field(default=15.0, gt=0)
    #: Seconds between reconciler passes (one reconciler at a time, in serve and workers).
    reconcile_interval_s: float = Field(default=10.0, gt=0)
    #: Seconds a queued document may have no message anywhere (queue, unacknowledged,
    #: held by a live worker) before an audit requeues it.
    reconcile_grace_s: float = Field(default=30.0, gt=0)
    #: Seconds between audits of queued documents against the broker (besides the one
    #: after every Redis restart); 0: only after restarts.
    reconcile_audit_s: float = Field(default=300.0, ge=0)
    #: Times the reconciler requeues one document before recording it ``poison``.
    max_requeues: int = Field(default=3, ge=0)

    # --- serve's supervision (issue 37; worker/serve.py, worker/supervise.py) ---
    #: Restart backoff and shutdown grace of ``chunkweave serve``'s parts
    #: (``CHUNKWEAVE_SUPERVISE__BACKOFF_S`` etc.).
    supervise: SuperviseConfig = SuperviseConfig()

    @property
    def api_guarded(self) -> bool:
        """Whether the API asks callers for a token (the main one or a tenant's)."""
        return self.api_token is not None or bool(self.api_tenant_tokens)

    @property
    def upload_dir(self) -> Path:
        """Directory for HTTP uploads (``uploads_dir`` or ``<data_dir>/uploads``)."""
        return self.uploads_dir or self.data_dir / "uploads"

    @property
    def source_roots(self) -> tuple[Path, ...]:
        """Folders API sources may lie under, resolved (``sources.roots``).

        The uploads folder is not one: an upload is never a source a caller names.
        """
        return tuple(p.expanduser().resolve() for p in self.sources.roots)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Load the settings once per process."""
    return Settings()

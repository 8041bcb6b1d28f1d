"""Talking to Weaviate reliably: connect, classify failures, retry with bounded backoff.

Every call the store and the ledger make goes through :func:`retrying` (usually as
:meth:`WeaviateSession.retry`): transient failures (server down, timeouts) are
retried ``WeaviateConfig.retries`` times, then raise :class:`StoreUnavailableError`;
any other Weaviate error raises :class:`StoreError` at once. No weaviate-client
exception leaves a call made through it.
"""

from __future__ import annotations

import logging
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import urlsplit

import weaviate
from weaviate.classes.config import Configure
from weaviate.classes.init import AdditionalConfig, Auth, Timeout
from weaviate.collections.classes.data import DataObject
from weaviate.exceptions import (
    UnexpectedStatusCodeError,
    WeaviateBaseError,
    WeaviateConnectionError,
    WeaviateGRPCUnavailableError,
    WeaviateInsertManyAllFailedError,
    WeaviateRetryError,
    WeaviateTimeoutError,
)

from chunkweave.errors import ChunkweaveError
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.errors import StoreError, StoreUnavailableError
from chunkweave.storage.weaviate.grpc_batch import BatchSender, Item, Pending, Vector

T = TypeVar("T")


_TRANSIENT = (
    WeaviateConnectionError,
    WeaviateTimeoutError,
    WeaviateGRPCUnavailableError,
    WeaviateRetryError,
)
# Not a bare "connect": HNSW errors say "find and connect neighbors" (not transient).
_TRANSIENT_MARKERS = (
    "unavailable",
    "connection",  # refused, reset, closed, aborted
    "failed to connect",
    "deadline",
    "timed out",
    "timeout",
    # A restarted server answers before its schema (and shards) are loaded: a class
    # the store created (ensure_schema ran before any write) is missing only for now.
    "could not find class",
    "not present in schema",
    "non-existing index",  # the schema is back, its index not loaded yet
    "shard not found",
    "is not ready",
    "not ready yet",
    # 5xx answers relayed in text (per-object messages, wrapped errors).
    "status code: 500",
    "status code: 502",
    "status code: 503",
    "status code: 504",
    "internal server error",
    "bad gateway",
    "gateway timeout",
)
#: gRPC codes worth a retry: DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, UNAVAILABLE.
_TRANSIENT_GRPC = frozenset({4, 8, 10, 14})


def is_transient(err: BaseException | str) -> bool:
    """Whether a failure looks like the server being down, slow or restarting (worth a retry).

    Transient: the client's connection, timeout and retry errors; an HTTP 5xx or a gRPC
    UNAVAILABLE-like status; and any message saying the connection failed, a call timed
    out, or the schema is not (yet) loaded ("could not find class Chunk in schema", as a
    restarted server says until it has read its schema back). Everything else (a bad
    object, a refused property, a 4xx) is not.
    """
    if isinstance(err, _TRANSIENT):
        return True
    if isinstance(err, UnexpectedStatusCodeError):
        status = err.status_code
        if status >= 500 or status in _TRANSIENT_GRPC:
            return True
    # Query errors, per-object batch messages and the client's start-up error ("Could
    # not connect to Weaviate: Connection to Weaviate failed") say it in text.
    if isinstance(err, str | WeaviateBaseError):
        return any(marker in str(err).lower() for marker in _TRANSIENT_MARKERS)
    return False


class _NoObjectDump(logging.Filter):
    """Drop the client's ERROR record that lists every failed object of an insert_many.

    It carries each object's properties and full vector (megabytes for a large
    slice); :func:`send_objects` returns the reasons and the store raises them.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.msg
        return not (isinstance(msg, dict) and str(msg.get("message", "")).startswith("Failed"))


logging.getLogger("weaviate-client").addFilter(_NoObjectDump())


class _ServerDown(ChunkweaveError):
    """The liveness probe failed: the server is not answering at all."""


def retrying(
    cfg: WeaviateConfig,
    what: str,
    call: Callable[[], T],
    probe: Callable[[], bool] | None = None,
) -> T:
    """Run ``call``, retrying transient failures ``cfg.retries`` times with backoff.

    Backoff doubles from 0.5 s up to 8 s. ``probe`` (a cheap liveness check) runs
    first each time: the client's own gRPC retries wait about a minute per call on a
    dead server, the probe fails in milliseconds. Non-transient Weaviate errors raise
    :class:`StoreError` at once; exhausted retries raise :class:`StoreUnavailableError`.
    """
    delay = 0.5
    last: Exception | None = None
    for attempt in range(cfg.retries + 1):
        try:
            if probe is not None and not probe():
                raise _ServerDown("server is not live")
            return call()
        except StoreError:
            raise
        except _ServerDown as err:
            last = err
        except WeaviateBaseError as err:
            if not is_transient(err):
                raise StoreError(f"{what}: {err}") from err
            last = err
        if attempt < cfg.retries:
            time.sleep(delay)
            delay = min(delay * 2, 8.0)
    raise StoreUnavailableError(
        f"{what}: Weaviate unreachable at {cfg.url} after {cfg.retries} retries: {last}"
    ) from last


def connect(cfg: WeaviateConfig) -> weaviate.WeaviateClient:
    """Open a v4 client for ``cfg`` (``cfg.url`` must be set)."""
    if not cfg.url:
        raise StoreError("no Weaviate URL configured (CHUNKWEAVE_WEAVIATE__URL)")
    parts = urlsplit(cfg.url)
    secure = parts.scheme == "https"
    host = parts.hostname or "127.0.0.1"
    timeout = Timeout(init=min(cfg.timeout_s, 30), query=cfg.timeout_s, insert=cfg.timeout_s)
    api_key = cfg.api_key.get_secret_value() if cfg.api_key else None

    def _open() -> weaviate.WeaviateClient:
        return weaviate.connect_to_custom(
            http_host=host,
            http_port=parts.port or (443 if secure else 80),
            http_secure=secure,
            grpc_host=host,
            grpc_port=cfg.grpc_port,
            grpc_secure=secure,
            auth_credentials=Auth.api_key(api_key) if api_key else None,
            additional_config=AdditionalConfig(timeout=timeout),
        )

    return retrying(cfg, "connecting", _open)


class WeaviateSession:
    """One open client and its config: what the chunk store and the ledger share.

    Gives tenant-scoped collection handles, creates the configured tenant, and runs
    calls with :func:`retrying` behind a liveness probe. The session owns the client
    (:meth:`close`).
    """

    def __init__(
        self, client: weaviate.WeaviateClient, cfg: WeaviateConfig, *, owns_client: bool = True
    ) -> None:
        self.client = client
        self.cfg = cfg
        #: False for a tenant's view of another session's client (see :meth:`for_tenant`).
        self.owns_client = owns_client

    def close(self) -> None:
        """Close the client (a tenant view leaves it to the session it came from)."""
        if self.owns_client:
            self.client.close()

    def for_tenant(self, tenant: str) -> WeaviateSession:
        """Return the same client, scoped to ``tenant`` (multi-tenancy must be on)."""
        if not self.cfg.multi_tenancy:
            raise StoreError(
                f"tenant {tenant!r} given but multi-tenancy is off "
                "(CHUNKWEAVE_WEAVIATE__MULTI_TENANCY=true, on a new collection)"
            )
        cfg = self.cfg.model_copy(update={"tenant": tenant})
        return WeaviateSession(self.client, cfg, owns_client=False)

    def live(self) -> bool:
        """Whether the server answers its liveness endpoint right now."""
        # Plain HTTP with a short timeout: the client's own check logs noisily when down.
        url = f"{(self.cfg.url or '').rstrip('/')}/v1/.well-known/live"
        try:
            with urllib.request.urlopen(url, timeout=min(5.0, self.cfg.timeout_s)) as resp:
                return bool(resp.status == 200)
        except (OSError, ValueError):
            return False

    def retry(self, what: str, call: Callable[[], T]) -> T:
        """Run ``call`` with bounded retries, probing liveness first (see :func:`retrying`)."""
        return retrying(self.cfg, what, call, probe=self.live)

    def put_object(self, coll: Any, uuid: str, props: Mapping[str, Any], what: str) -> None:
        """Write (replace) one object of ``coll`` under ``uuid``; raise ``StoreError`` if refused.

        ``what`` names the write in retries and in the error ("ledger write for X").
        """
        obj = DataObject(properties=dict(props), uuid=uuid)
        result = self.retry(what, lambda: coll.data.insert_many([obj]))
        if result.has_errors:
            reasons = "; ".join(e.message for e in result.errors.values())
            raise StoreError(f"{what}: {reasons}")

    def handle(self, name: str) -> Any:
        """Return a handle on collection ``name`` (tenant-scoped when a tenant is set).

        With multi-tenancy on and no tenant there is nothing to read or write:
        raises :class:`StoreError` (a search must name its tenant).
        """
        if self.cfg.multi_tenancy and not self.cfg.tenant:
            raise StoreError(
                f"collection {name!r} is multi-tenant: name a tenant (--tenant, tenant=...)"
            )
        coll = self.client.collections.use(name)
        return coll.with_tenant(self.cfg.tenant) if self.cfg.tenant else coll

    def multi_tenancy(self) -> Any:
        """Return the multi-tenancy setting of a new collection (``None``: off)."""
        if not self.cfg.multi_tenancy:
            return None
        return Configure.multi_tenancy(
            enabled=True, auto_tenant_creation=True, auto_tenant_activation=True
        )

    def alias_target(self, name: str) -> str | None:
        """Return the collection alias ``name`` points at, or ``None`` when it is no alias."""
        got = self.retry(f"reading alias {name}", lambda: self.client.alias.get(alias_name=name))
        return None if got is None else str(got.collection)

    def resolve(self, name: str) -> str:
        """Return the collection ``name`` serves when it is an alias, else ``name``.

        The tenants and schema endpoints do not resolve an alias; objects, batches
        and searches do.
        """
        if not self.cfg.versioned:
            return name
        return self.alias_target(name) or name

    def ensure_tenant(self, name: str) -> None:
        """Create the configured tenant on collection ``name`` if it is missing.

        Writes create tenants automatically but reads on a missing tenant fail, and
        the pipeline reads (existing ids, ledger) before its first write.
        """
        tenant = self.cfg.tenant
        if not self.cfg.multi_tenancy or not tenant:
            return
        name = self.resolve(name)
        tenants = self.client.collections.use(name).tenants

        def _ensure() -> None:
            if tenants.exists(tenant):
                return
            try:
                tenants.create(tenant)
            except WeaviateBaseError:
                if not tenants.exists(tenant):  # another worker may have won the race
                    raise

        self.retry(f"creating tenant {tenant} on {name}", _ensure)


def send_objects(
    coll: Any,
    objects: Mapping[str, Pending],
    *,
    batch_size: int,
    concurrent_requests: int,
    client_encoder: bool = False,
) -> dict[str, str]:
    """Write ``{uuid: (properties, vector)}`` once; return ``{uuid: error}`` for failures.

    Slices of ``batch_size`` go out as single gRPC ``BatchObjects`` calls,
    ``concurrent_requests`` at a time, so the next slice is encoded while the server
    indexes the previous one. Slices are encoded by :mod:`chunkweave.storage.weaviate.grpc_batch` (a
    quarter of the CPU of ``insert_many``'s encoding) and sent over the client's
    connection; ``client_encoder`` (or a client without that connection) uses
    ``insert_many`` instead. (The client's ``batch.fixed_size`` makes the same calls
    but validates every vector through pydantic and polls its queue first.) Transient
    failures come back as errors for the caller to retry; any other exception raises
    :class:`StoreError`. A server that dies during a call costs the client's own gRPC
    retries (about 15 s).
    """
    items: list[Item] = list(objects.items())
    sender = None if client_encoder else BatchSender.of(coll)
    send: Callable[[list[Item]], dict[int, str]] = (
        sender.send if sender else lambda part: _insert_many(coll, part)
    )
    slices = [items[start : start + batch_size] for start in range(0, len(items), batch_size)]
    workers = min(concurrent_requests, len(slices))
    if workers <= 1:
        results = [_send_slice(send, part) for part in slices]
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="chunkweave-upsert") as pool:
            results = list(pool.map(lambda part: _send_slice(send, part), slices))
    return {uuid: msg for failed in results for uuid, msg in failed.items()}


def _send_slice(send: Callable[[list[Item]], dict[int, str]], part: list[Item]) -> dict[str, str]:
    try:
        errors = send(part)
    except WeaviateInsertManyAllFailedError as err:
        # Every object of the slice was refused; the message lists the distinct reasons.
        return {uuid: str(err) for uuid, _ in part}
    except WeaviateBaseError as err:
        if not is_transient(err):
            raise StoreError(f"batch upsert: {err}") from err
        return {uuid: str(err) for uuid, _ in part}
    return {part[i][0]: msg for i, msg in errors.items()}


def _insert_many(coll: Any, part: list[Item]) -> dict[int, str]:
    objs = [
        DataObject(properties=props, uuid=uuid, vector=_as_list(vector))
        for uuid, (props, vector) in part
    ]
    return {i: e.message for i, e in coll.data.insert_many(objs).errors.items()}


def _as_list(vector: Vector | None) -> Sequence[float] | None:
    # The client packs lists as they are; numpy rows (and other sequences) become lists.
    if vector is None or isinstance(vector, list):
        return vector
    tolist = getattr(vector, "tolist", None)
    return list(tolist() if callable(tolist) else vector)

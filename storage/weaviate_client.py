"""Talking to Weaviate reliably: connect, classify failures, retry with bounded backoff.

Every call the store makes goes through :func:`retrying`: transient failures (server
down, timeouts) are retried ``WeaviateConfig.retries`` times, then raise
:class:`StoreUnavailableError`; anything else raises :class:`StoreError` at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import urlsplit

import weaviate
from weaviate.classes.init import AdditionalConfig, Auth, Timeout
from weaviate.collections.classes.data import DataObject
from weaviate.exceptions import (
    WeaviateBaseError,
    WeaviateConnectionError,
    WeaviateGRPCUnavailableError,
    WeaviateInsertManyAllFailedError,
    WeaviateQueryError,
    WeaviateRetryError,
    WeaviateTimeoutError,
)

from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.grpc_batch import BatchSender, Item, Pending, Vector

T = TypeVar("T")


class StoreError(RuntimeError):
    """A write or read was refused by Weaviate (the message carries its reasons)."""

    code = "store_error"


class StoreUnavailableError(StoreError):
    """Weaviate stayed unreachable (or kept timing out) through every retry."""

    code = "store_unavailable"


class EmbedderMismatchError(StoreError):
    """The collection holds vectors from a different embedder than the configured one."""

    code = "embedder_mismatch"


_TRANSIENT = (
    WeaviateConnectionError,
    WeaviateTimeoutError,
    WeaviateGRPCUnavailableError,
    WeaviateRetryError,
)
# Not a bare "connect": HNSW errors say "find and connect neighbors" (not transient).
_TRANSIENT_MARKERS = (
    "unavailable",
    "connection",
    "failed to connect",
    "deadline",
    "timed out",
    "timeout",
)


def is_transient(err: BaseException | str) -> bool:
    """Whether a failure looks like the server being down or slow (worth a retry)."""
    if isinstance(err, _TRANSIENT):
        return True
    # Query errors and per-object batch messages wrap the gRPC status in text.
    if isinstance(err, str | WeaviateQueryError):
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


class _ServerDown(Exception):
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
    indexes the previous one. Slices are encoded by :mod:`chunkweave.storage.grpc_batch` (a
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

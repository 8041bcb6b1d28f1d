"""Talking to Weaviate reliably: connect, classify failures, retry with bounded backoff.

Every call the store makes goes through :func:`retrying`: transient failures (server
down, timeouts) are retried ``WeaviateConfig.retries`` times, then raise
:class:`StoreUnavailableError`; anything else raises :class:`StoreError` at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

import weaviate
from weaviate.classes.init import AdditionalConfig, Auth, Timeout
from weaviate.exceptions import (
    WeaviateBaseError,
    WeaviateConnectionError,
    WeaviateGRPCUnavailableError,
    WeaviateQueryError,
    WeaviateRetryError,
    WeaviateTimeoutError,
)

from storage.config import WeaviateConfig

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
_TRANSIENT_MARKERS = ("unavailable", "connection refused", "deadline", "timed out", "connect")


def is_transient(err: BaseException | str) -> bool:
    """Whether a failure looks like the server being down or slow (worth a retry)."""
    if isinstance(err, _TRANSIENT):
        return True
    # Query errors and per-object batch messages wrap the gRPC status in text.
    if isinstance(err, str | WeaviateQueryError):
        return any(marker in str(err).lower() for marker in _TRANSIENT_MARKERS)
    return False


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

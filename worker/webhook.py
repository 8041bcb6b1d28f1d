"""Completion webhooks: one signed POST per finished job.

The body is the job summary as JSON (``chunkweave.worker.jobs.JobState`` without documents).
When ``webhook_secret`` is set, ``X-Chunkweave-Signature: sha256=<hex>`` carries the
HMAC-SHA256 of ``<timestamp>.<body>`` with ``X-Chunkweave-Timestamp: <timestamp>``,
so receivers can reject forged and replayed calls. Delivery is retried by the
``send_webhook`` task with exponential backoff; any 2xx counts as delivered.
"""

from __future__ import annotations

import hashlib
import hmac
import time

import httpx


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=<hex>`` HMAC of ``timestamp.body`` under ``secret``."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """Check ``signature`` against the body (constant-time comparison)."""
    return hmac.compare_digest(sign(secret, timestamp, body), signature)


class WebhookError(RuntimeError):
    """The receiver did not accept the webhook (non-2xx or unreachable)."""


def deliver(url: str, body: bytes, *, secret: str | None, timeout_s: float) -> None:
    """POST ``body`` to ``url`` once; raise :class:`WebhookError` unless it answers 2xx."""
    timestamp = str(int(time.time()))
    headers = {"Content-Type": "application/json", "X-Chunkweave-Timestamp": timestamp}
    if secret:
        headers["X-Chunkweave-Signature"] = sign(secret, timestamp, body)
    try:
        resp = httpx.post(url, content=body, headers=headers, timeout=timeout_s)
    except httpx.HTTPError as err:
        raise WebhookError(f"webhook {url}: {type(err).__name__}: {err}") from err
    if not 200 <= resp.status_code < 300:
        raise WebhookError(f"webhook {url}: HTTP {resp.status_code}")

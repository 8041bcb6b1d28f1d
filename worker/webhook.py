"""Completion webhooks: one signed POST per finished job, to public addresses only.

The body is the job summary as JSON (:class:`chunkweave.worker.jobs.JobState` without
documents, its webhook URL redacted). Every webhook is signed:
``X-Chunkweave-Signature: sha256=<hex>`` carries the HMAC-SHA256 of
``<timestamp>.<body>`` under ``webhook_secret``, with ``X-Chunkweave-Timestamp``, so
receivers can reject forged and replayed calls. A job cannot ask for a webhook when
no secret is configured.

A webhook is a request the service makes on a caller's behalf, so it must not become a
way into the service's own network (SSRF): only ``http``/``https`` URLs, and the host
must resolve to public addresses only, never loopback, private, link-local (cloud
metadata), multicast or reserved ones, unless ``webhook_allow_hosts`` names the host,
the address or a range holding it. The checked address is the one connected to
(pinned: the name is not resolved twice), redirects are not followed. Delivery is
retried by the ``send_webhook`` task; any 2xx counts as delivered.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
import time
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

import httpx

from chunkweave.errors import ChunkweaveError

_SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class WebhookError(ChunkweaveError, RuntimeError):
    """The receiver did not accept the webhook (non-2xx or unreachable)."""


class WebhookRefusedError(ChunkweaveError, ValueError):
    """The webhook URL is not one the service will call (scheme, host or address)."""


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """Return ``sha256=<hex>``, the HMAC of ``timestamp.body`` under ``secret``."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """Check ``signature`` against the body (constant-time comparison)."""
    return hmac.compare_digest(sign(secret, timestamp, body), signature)


def redact(url: str | None) -> str | None:
    """Show a webhook URL without what may carry a secret (credentials, path, query)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal keeps its brackets, or the port would join it
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, "/…" if parts.path not in ("", "/") else "/", "", ""))


def check_url(url: str) -> None:
    """Refuse a URL that is not ``http(s)://host...`` (raises :class:`WebhookRefusedError`)."""
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES or not parts.hostname:
        raise WebhookRefusedError(f"webhook {redact(url)}: only http:// and https:// URLs")


def _allowed(host: str, address: IPAddress, allow: Sequence[str]) -> bool:
    for entry in allow:
        if entry.lower() == host.lower():
            return True
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue  # a host name, compared above
    return False


#: IPv6 ranges whose last 32 bits are an IPv4 address a gateway forwards to: NAT64's
#: well-known and local-use prefixes (RFC 6052, RFC 8215) and the deprecated
#: IPv4-compatible form (``::a.b.c.d``).
_LOW32_EMBEDDING = tuple(
    ipaddress.ip_network(n) for n in ("64:ff9b::/96", "64:ff9b:1::/48", "::/96")
)


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """Return the IPv4 address an IPv6 address carries inside, if it is of such a form.

    Mapped (``::ffff:a.b.c.d``), compatible (``::a.b.c.d``), NAT64 (``64:ff9b::a.b.c.d``),
    6to4 (``2002:AABB:CCDD::``) and Teredo (the client address) all reach an IPv4 host,
    so they are judged by it. ``::`` and ``::1`` are not IPv4-compatible addresses.
    """
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if int(address) > 1 and any(address in net for net in _LOW32_EMBEDDING):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _public(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        inner = embedded_ipv4(address)
        if inner is not None:
            return _public(inner)
    return address.is_global and not address.is_multicast


def resolve(url: str, allow: Sequence[str] = ()) -> IPAddress:
    """Return the address to connect to for ``url``, or refuse it.

    Every address the host resolves to must be public (or allow-listed), so a name
    with one public and one private record cannot be used to reach the private one.
    """
    check_url(url)
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or _DEFAULT_PORTS[parts.scheme]
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise WebhookError(f"webhook {redact(url)}: cannot resolve {host}: {err}") from err
    addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
    refused = [a for a in addresses if not (_public(a) or _allowed(host, a, allow))]
    if not addresses or refused:
        raise WebhookRefusedError(
            f"webhook {redact(url)}: {host} resolves to a non-public address "
            "(allow it with CHUNKWEAVE_WEBHOOK__ALLOW_HOSTS)"
        )
    return addresses[0]


def deliver(
    url: str, body: bytes, *, secret: str, timeout_s: float, allow: Sequence[str] = ()
) -> None:
    """POST ``body`` to ``url`` once; raise :class:`WebhookError` unless it answers 2xx.

    Raises :class:`WebhookRefusedError` (not worth retrying) for a URL it will not call.
    """
    address = resolve(url, allow)
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or _DEFAULT_PORTS[parts.scheme]
    literal = f"[{address}]" if address.version == 6 else str(address)
    pinned = urlunsplit((parts.scheme, f"{literal}:{port}", parts.path, parts.query, ""))
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "Host": parts.netloc.rpartition("@")[2],
        "X-Chunkweave-Timestamp": timestamp,
        "X-Chunkweave-Signature": sign(secret, timestamp, body),
    }
    try:
        with httpx.Client(timeout=timeout_s, follow_redirects=False) as client:
            resp = client.post(
                pinned,
                content=body,
                headers=headers,
                # TLS: present and check the certificate for the name, not the address.
                extensions={"sni_hostname": host},
            )
    except httpx.HTTPError as err:
        raise WebhookError(f"webhook {redact(url)}: {type(err).__name__}: {err}") from err
    if not 200 <= resp.status_code < 300:
        raise WebhookError(f"webhook {redact(url)}: HTTP {resp.status_code}")

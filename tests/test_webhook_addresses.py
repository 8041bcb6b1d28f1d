"""Webhook targets written as IPv6 forms that carry an IPv4 address inside.

Each form below reaches 127.0.0.1 or a private IPv4 host through a gateway or the
kernel; the address check must judge it by that IPv4 address (issue 37, item 13).
"""

from __future__ import annotations

import ipaddress

import pytest

from chunkweave.worker.webhook import WebhookRefusedError, embedded_ipv4, redact, resolve


@pytest.mark.parametrize(
    "url",
    [
        "http://[::127.0.0.1]/hook",  # IPv4-compatible
        "http://[::ffff:127.0.0.1]/hook",  # IPv4-mapped
        "http://[64:ff9b::7f00:1]/hook",  # NAT64, well-known prefix
        "http://[64:ff9b:1::a00:7]/hook",  # NAT64, local-use prefix, 10.0.0.7
        "http://[2002:7f00:1::]/hook",  # 6to4 of 127.0.0.1
        "http://[2002:c0a8:101::1]:8080/hook",  # 6to4 of 192.168.1.1
        "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook",  # Teredo, client 127.0.0.1
        "http://[::a9fe:a9fe]/latest/meta-data/",  # compatible form of 169.254.169.254
    ],
)
def test_ipv6_forms_of_internal_ipv4_are_refused(url: str):
    with pytest.raises(WebhookRefusedError, match="non-public address"):
        resolve(url)


@pytest.mark.parametrize(
    ("text", "inner"),
    [
        ("::127.0.0.1", "127.0.0.1"),
        ("64:ff9b::8.8.8.8", "8.8.8.8"),
        ("2002:0808:0808::1", "8.8.8.8"),
        ("::ffff:10.1.2.3", "10.1.2.3"),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1"),
        ("::1", None),
        ("::", None),
        ("2606:4700::1111", None),
    ],
)
def test_embedded_ipv4(text: str, inner: str | None):
    found = embedded_ipv4(ipaddress.IPv6Address(text))
    assert (str(found) if found is not None else None) == inner


def test_embedded_public_ipv4_and_plain_public_ipv6_are_allowed():
    # The check is by the address inside, not a blanket refusal of the forms.
    assert str(resolve("http://[64:ff9b::808:808]/hook")) == "64:ff9b::808:808"
    assert str(resolve("http://[2606:4700::1111]/hook")) == "2606:4700::1111"


def test_redacted_ipv6_urls_keep_their_brackets():
    assert redact("http://[2001:db8::1]:8443/t/SECRET?k=1") == "http://[2001:db8::1]:8443/…"
    assert redact("https://[::1]/x") == "https://[::1]/…"

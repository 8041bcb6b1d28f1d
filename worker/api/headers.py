"""Headers every response carries: no content sniffing, no referrer sent onwards.

``X-Content-Type-Options: nosniff`` keeps a browser from reading a JSON body or an
error as HTML; ``Referrer-Policy: no-referrer`` keeps job ids and document ids in
``/ui`` links from leaking to wherever a page links. The HTML pages add their own
Content-Security-Policy (:mod:`.ui`).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Added to every HTTP response (a handler's own value of the same header wins).
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; add the headers to its response's start message."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers += [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)

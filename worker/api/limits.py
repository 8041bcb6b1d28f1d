"""Request body limits enforced on the bytes as they arrive, not on ``Content-Length``.

A client may send no length at all (chunked transfer) or lie about it, so the count
runs over the body as it streams into the app: past the limit the app's next read
raises :class:`BodyTooLargeError` and the client gets 413. Nothing is spooled or
parsed beyond the limit.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chunkweave.errors import ChunkweaveError


class BodyTooLargeError(ChunkweaveError):
    """The request body passed its limit (answered 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body larger than {limit} bytes")
        self.limit = limit


class BodyLimit:
    """ASGI middleware: cap each request's body at ``limit_for(content_type)`` bytes."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on with a ``receive`` that counts body bytes."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        limit = self.limit_for(headers.get(b"content-type", b"").decode("latin-1"))
        declared = headers.get(b"content-length")
        started = False
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLargeError(limit)
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            if declared is not None and declared.isdigit() and int(declared) > limit:
                raise BodyTooLargeError(limit)  # refused before a byte is read
            await self.app(scope, counted, tracked)
        except BodyTooLargeError as err:
            if started:
                raise
            response = JSONResponse({"detail": str(err)}, status_code=413)
            await response(scope, receive, send)

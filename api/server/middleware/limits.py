"""The request body limit (413) and the request timeout (504), around every request.

Both refuse before any route runs, so the refusal's shape is chosen by where the request is
going (``Refusals``): a mounted protocol (the Iceberg REST catalog) answers in its own error
model, everything else in problem+json.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.server import errors
from api.wire.codes import Code

Refusal = Callable[[Code, str], Response]
"""Builds the answer refusing a request with ``code`` and a message."""


class Refusals:
    """The shape of a refusal made before routing: the mount's the path is under, else ours.

    Args:
        mounts: each mounted sub-application's path (``/iceberg``) and its refusal.
    """

    def __init__(self, mounts: Mapping[str, Refusal]) -> None:
        self.mounts = dict(mounts)

    def __call__(self, scope: Scope, code: Code, message: str) -> Response:
        """Return the refusal of the request of ``scope``."""
        path = str(scope.get("path", ""))
        for mount, refusal in self.mounts.items():
            if path.startswith(mount + "/"):
                return refusal(code, message)
        return errors.problem(code, message)


class BodyLimitMiddleware:
    """Refuse request bodies over ``max_bytes`` with 413, before anything parses them."""

    def __init__(self, app: ASGIApp, max_bytes: int, refusals: Refusals) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.refusals = refusals

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, counting its body bytes."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            response = self.refusals(
                scope, Code.REQUEST_TOO_LARGE, f"request body exceeds {self.max_bytes} bytes"
            )
            await response(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise errors.ApiError(
                        Code.REQUEST_TOO_LARGE, f"request body exceeds {self.max_bytes} bytes"
                    )
            return message

        await self.app(scope, limited, send)


class RequestTimeoutMiddleware:
    """Answer 504 (TIMEOUT) when a request takes longer than ``timeout_s``.

    Event streams (endless by design) and ready-waits (bounded by their own ``timeout``) are
    left alone. Once an answer has started, it is not cut.
    """

    def __init__(self, app: ASGIApp, timeout_s: float, refusals: Refusals) -> None:
        self.app = app
        self.timeout_s = timeout_s
        self.refusals = refusals

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the request under the deadline."""
        path = scope.get("path", "")
        if scope["type"] != "http" or path == "/v1/events" or path.endswith("/ready"):
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            async with asyncio.timeout(self.timeout_s):
                await self.app(scope, receive, tracking)
        except TimeoutError:
            if started:
                raise
            response = self.refusals(
                scope, Code.TIMEOUT, f"the request took longer than {self.timeout_s:g} s"
            )
            await response(scope, receive, send)

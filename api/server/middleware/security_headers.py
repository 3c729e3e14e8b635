"""``SecurityHeadersMiddleware``: headers that keep browsers from misusing the answers.

Every answer says ``nosniff`` and sends no referrer. The catalog browser's pages also carry
a content security policy that allows only this server's own scripts, styles and
connections and no framing, so an injected string cannot run and another site cannot
frame the page to trick a click.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; "
    "object-src 'none'"
)
"""The content security policy of the catalog browser (``/ui/``)."""


class SecurityHeadersMiddleware:
    """Add the security headers to every HTTP answer (the page policy under ``/ui``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; add the headers to its answer."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        page = scope.get("path", "").startswith("/ui")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("Referrer-Policy", "no-referrer")
                if page:
                    headers["Content-Security-Policy"] = PAGE_POLICY
                    headers["X-Frame-Options"] = "DENY"
            await send(message)

        await self.app(scope, receive, with_headers)

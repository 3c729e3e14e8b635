"""``HostCheckMiddleware``: without auth, answer only requests addressed to this machine.

With auth off, a web page the developer visits could otherwise send requests to the
catalog through a name that resolves to 127.0.0.1 (DNS rebinding): the browser sends that
name as ``Host``. Requests whose ``Host`` is not a loopback name, the bind address itself or a
name listed in ``CATALOG_ALLOWED_HOSTS`` are refused with 403 (HOST_NOT_ALLOWED). With auth
on, a token is needed anyway and every ``Host`` is accepted.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from api.server import errors
from api.wire.codes import Code

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def host_name(header: str) -> str:
    """Return the name in a ``Host`` header, without its port, lower-cased."""
    header = header.strip().lower()
    if header.startswith("["):  # [::1]:8000
        return header[1 : header.find("]")] if "]" in header else header
    name, _, _ = header.partition(":")
    return name.rstrip(".")


class HostCheckMiddleware:
    """Refuse requests whose ``Host`` is not one of ``allowed`` (plus loopback names)."""

    def __init__(self, app: ASGIApp, bind_host: str, allowed: frozenset[str]) -> None:
        self.app = app
        self.allowed = LOOPBACK_NAMES | {h.lower() for h in allowed}
        if bind_host.lower() not in _WILDCARDS:
            self.allowed |= {bind_host.lower()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on if its ``Host`` is allowed."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        header = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        name = host_name(header)
        if name in self.allowed or name.endswith(".localhost"):
            await self.app(scope, receive, send)
            return
        response = errors.problem(
            Code.HOST_NOT_ALLOWED,
            f"this server runs without auth and answers only requests to a loopback name; "
            f"the Host {name or '(none)'} is not one: use http://127.0.0.1, turn auth on, or "
            "list the name in CATALOG_ALLOWED_HOSTS",
        )
        await response(scope, receive, send)

"""A catalog server that records every Iceberg REST request it answers, for failure reports.

Engines hide the server's answer behind their own error text; each test names the requests
that went wrong (method, path, body sent, status, body answered) from this record instead.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

BODY_LIMIT = 4000


@dataclass
class Exchange:
    """One request and its answer."""

    method: str
    path: str
    query: str
    request_body: str
    status: int = 0
    response_body: str = ""

    def __str__(self) -> str:
        target = self.path + (f"?{self.query}" if self.query else "")
        sent = f" {self.request_body}" if self.request_body else ""
        return f"{self.method} {target}{sent} -> {self.status} {self.response_body}"


class RequestLog:
    """The exchanges under ``/iceberg`` a server answered, in order (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []

    def add(self, exchange: Exchange) -> None:
        with self._lock:
            self._exchanges.append(exchange)

    def mark(self) -> int:
        """Return a position: ``since(mark)`` answers what came after it."""
        with self._lock:
            return len(self._exchanges)

    def since(self, mark: int = 0) -> list[Exchange]:
        with self._lock:
            return list(self._exchanges[mark:])

    def failures(self, mark: int = 0) -> list[Exchange]:
        """Return the exchanges since ``mark`` answered with a 4xx or 5xx status.

        A ``HEAD`` answered 404 is an engine asking whether something exists (Spark asks
        whether a view holds a name before it replaces a table) and hearing no: not a failure.
        """
        return [
            e for e in self.since(mark) if e.status >= 400 and (e.method, e.status) != ("HEAD", 404)
        ]

    def report(self, mark: int = 0) -> str:
        """Return the failed exchanges since ``mark``, one a line (or a line saying none)."""
        failed = self.failures(mark)
        if not failed:
            return "(the catalog server answered no request with an error)"
        return "\n".join(str(e) for e in failed)


def _text(body: bytes) -> str:
    text = body.decode("utf-8", "replace")
    with contextlib.suppress(ValueError):  # compact JSON: one line a request
        text = json.dumps(json.loads(text), separators=(",", ":"))
    return text if len(text) <= BODY_LIMIT else text[:BODY_LIMIT] + "..."


class RecordingMiddleware:
    """ASGI middleware: records each ``/iceberg`` request's body, status and answer."""

    def __init__(self, app: ASGIApp, log: RequestLog) -> None:
        self.app = app
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/iceberg"):
            await self.app(scope, receive, send)
            return
        exchange = Exchange(
            scope["method"], scope["path"], scope.get("query_string", b"").decode(), ""
        )
        sent: list[bytes] = []
        answered: list[bytes] = []

        async def recv() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                sent.append(message.get("body", b""))
            return message

        async def snd(message: Message) -> None:
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
            elif message["type"] == "http.response.body":
                answered.append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, recv, snd)
        finally:
            exchange.request_body = _text(b"".join(sent))
            exchange.response_body = _text(b"".join(answered))
            self.log.add(exchange)

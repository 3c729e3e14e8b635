"""``HeaderTimeout``: a connection that does not finish its request headers in time is closed.

uvicorn times out idle keep-alive connections, but a client that keeps sending a byte now
and then (slowloris) holds its connection, and a socket that sends nothing after connecting
is never closed. Here a timer runs from the moment a connection opens, and again from the
moment each response completes; if the next request's headers are still incomplete when it
fires, the connection is closed (as Go's ``ReadHeaderTimeout`` and nginx's
``client_header_timeout``). A request whose headers arrived is never cut by it: the request
timeout covers its body and handling.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


def with_header_timeout(seconds: float) -> type[H11Protocol]:
    """Return uvicorn's h11 protocol closing connections whose headers take over ``seconds``.

    Pass the result as ``uvicorn.Config(http=...)``.
    """

    class HeaderTimeout(H11Protocol):
        """uvicorn's h11 protocol with a header read timeout."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def _arm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
            self._header_timer = self.loop.call_later(seconds, self._expire)

        def _expire(self) -> None:
            self._header_timer = None
            # IDLE: the client has not yet sent a whole request line and headers.
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.logger.info(
                    "closing a connection whose request headers took over %gs", seconds
                )
                self.transport.close()

    return HeaderTimeout

"""Real uvicorn servers on loopback ports, each on its own thread and event loop.

``api_servers`` starts any number of servers (and restarts them on the same port); every one
is stopped when the test ends. ``api_server`` is one server on the parametrized ``store_url``
(a fresh SQLite file, or a fresh prefix on the session's etcd).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.api.servers import RunningServer, ServerFactory


@pytest.fixture
def api_servers() -> Iterator[ServerFactory]:
    """Start servers with ``api_servers.start(store_url, ...)``; all stop after the test."""
    factory = ServerFactory()
    try:
        yield factory
    finally:
        factory.stop_all()


@pytest.fixture
def api_server(api_servers: ServerFactory, store_url: str) -> RunningServer:
    """One server (delay 20 ms, skew 10 ms) on a fresh store of each backend."""
    return api_servers.start(store_url)

"""Real uvicorn servers on loopback ports, each on its own thread and event loop."""

from __future__ import annotations

import asyncio
import atexit
import os
import secrets
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from api.server.app import create_app
from api.server.auth import TokenAuthority
from api.server.config import ServerSettings
from api.server.header_timeout import with_header_timeout
from api.wire.roles import Role
from catalog.runtime.node import CatalogNode
from updatelog.url import open_log

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0


def _secret_file() -> tuple[str, bytes]:
    """Write this test run's token secret to a private file, removed when the run ends."""
    fd, path = tempfile.mkstemp(prefix="catalog-tests-", suffix=".secret")
    secret = secrets.token_urlsafe(48).encode()
    with os.fdopen(fd, "wb") as out:
        out.write(secret)
    atexit.register(os.unlink, path)
    return path, secret


TOKEN_SECRET_FILE, TOKEN_SECRET = _secret_file()
"""The token secret every test server is given (as CATALOG_TOKEN_SECRET_FILE)."""


def free_port() -> int:
    """Return a TCP port that is free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class RunningServer:
    """One uvicorn server serving ``create_app(settings)`` on a background thread.

    Attributes:
        settings: what the app was built with (``host`` and ``port`` are where it listens).
        app: the FastAPI app; ``node`` is its catalog node once started.
        url: the base URL, ``http://127.0.0.1:<port>``.
    """

    def __init__(self, settings: ServerSettings, graceful_shutdown_s: int = 1) -> None:
        self.settings = settings
        self.graceful_shutdown_s = graceful_shutdown_s
        self.url = f"http://{settings.host}:{settings.port}"
        self.app: FastAPI = create_app(settings)
        config = uvicorn.Config(
            self.app,
            host=settings.host,
            port=settings.port,
            log_level="warning",
            log_config=None,
            lifespan="on",
            http=with_header_timeout(settings.header_timeout_s),
            # Open event streams never end by themselves: cut them after this long.
            timeout_graceful_shutdown=graceful_shutdown_s,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, name=f"uvicorn-{settings.port}", daemon=True
        )
        self._stopped = False

    @property
    def node(self) -> CatalogNode:
        """Return the catalog node the app serves."""
        node: CatalogNode = self.app.state.node
        return node

    @property
    def running(self) -> bool:
        """Return True until ``stop``."""
        return not self._stopped

    def start(self) -> RunningServer:
        """Start serving and wait until ``/healthz`` answers.

        Raises:
            RuntimeError: the server did not come up (its thread ended or time ran out).
        """
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"uvicorn on {self.url} exited during start-up")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"uvicorn on {self.url} did not start in {START_TIMEOUT_S} s")
            time.sleep(0.01)
        with httpx.Client(timeout=2.0) as http:
            while http.get(self.url + "/healthz").status_code != 200:  # bounded by the deadline
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.url}/healthz did not answer")
                time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Stop the server (cutting open streams after the graceful timeout). Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self._server.should_exit = True
        self._thread.join(STOP_TIMEOUT_S)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(STOP_TIMEOUT_S)
        if self._thread.is_alive():
            raise RuntimeError(f"uvicorn on {self.url} did not stop")


class ServerFactory:
    """Starts servers for one test and stops them all at its end."""

    def __init__(self) -> None:
        self.servers: list[RunningServer] = []
        self._warehouse: tempfile.TemporaryDirectory[str] | None = None

    def start(
        self,
        store: str,
        *,
        node_name: str | None = None,
        delay_ms: int = 20,
        max_clock_skew_ms: int = 10,
        port: int | None = None,
        graceful_shutdown_s: int = 1,
        **overrides: Any,
    ) -> RunningServer:
        """Start a server on ``store``; other ``ServerSettings`` fields go in ``overrides``."""
        overrides.setdefault("token_secret_file", TOKEN_SECRET_FILE)
        if "warehouse" not in overrides and not store.startswith("sqlite:"):
            # An etcd cluster's default warehouse is ./warehouse: keep tests out of the checkout
            # (one folder for every server the test starts: a cluster has one warehouse).
            if self._warehouse is None:
                self._warehouse = tempfile.TemporaryDirectory(prefix="test-warehouse-")
            overrides["warehouse"] = str(Path(self._warehouse.name) / "warehouse")
        settings = ServerSettings(
            store=store,
            node_name=node_name or f"n{len(self.servers) + 1}",
            host="127.0.0.1",
            port=port or free_port(),
            delay_ms=delay_ms,
            max_clock_skew_ms=max_clock_skew_ms,
            **overrides,
        )
        return self._run(RunningServer(settings, graceful_shutdown_s))

    def restart(
        self, server: RunningServer, between: Callable[[], object] | None = None
    ) -> RunningServer:
        """Stop ``server``, run ``between`` while it is down, start it again on its port."""
        server.stop()
        if between is not None:
            between()
        return self._run(RunningServer(server.settings, server.graceful_shutdown_s))

    def _run(self, server: RunningServer) -> RunningServer:
        self.servers.append(server)
        return server.start()

    def stop_all(self) -> None:
        """Stop every server started (in reverse order)."""
        errors: list[BaseException] = []
        for server in reversed(self.servers):
            try:
                server.stop()
            except RuntimeError as e:
                errors.append(e)
        if self._warehouse is not None:
            self._warehouse.cleanup()
        if errors:
            raise errors[0]


def issue_token(
    store: str, role: Role, ttl_s: int = 600, now: float | None = None, subject: str = "tests"
) -> str:
    """Sign a token with the keys kept in ``store`` (creating them if needed), as an admin would.

    ``now`` (Unix seconds) backdates it, e.g. to get an expired token.
    """

    async def sign() -> str:
        log = open_log(store)
        try:
            clock = time.time if now is None else lambda: now
            authority = TokenAuthority(log, TOKEN_SECRET, now=clock)
            await authority.load()
            return (await authority.issue(role, ttl_s, subject))[0]
        finally:
            await log.close()

    return asyncio.run(sign())

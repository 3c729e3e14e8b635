"""The FastAPI application: one catalog node behind the REST API of docs/design.md."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api import errors
from api.auth import TokenAuthority, auth_enabled, is_loopback, read_token_secret
from api.config import ServerSettings
from api.host_check import HostCheckMiddleware
from api.iceberg import errors as iceberg_errors
from api.iceberg import router as iceberg
from api.iceberg.errors import IcebergError, answering_iceberg_errors, on_iceberg_error
from api.metrics import ApiMetrics
from api.request_checks import check_request
from api.routes import catalog as catalog_routes
from api.routes import data, ddl, events, ops, tokens, versions
from api.security_headers import SecurityHeadersMiddleware
from api.slots import Slots
from catalog.errors import CatalogError
from catalog.runtime.node import CatalogNode
from schemasync.errors import SchemaSyncError
from updatelog.errors import UpdateLogError

log = logging.getLogger(__name__)
UI_DIR = Path(__file__).parent / "ui"


class BodyLimitMiddleware:
    """Refuse request bodies over ``max_bytes`` with 413, before anything parses them."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, counting its body bytes."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise errors.ApiError(
                        errors.ApiCode.REQUEST_TOO_LARGE,
                        f"request body exceeds {self.max_bytes} bytes",
                    )
            return message

        await self.app(scope, limited, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = _refusal(
            scope, errors.ApiCode.REQUEST_TOO_LARGE, f"request body exceeds {self.max_bytes} bytes"
        )
        await response(scope, receive, send)


def _refusal(scope: Scope, code: errors.ApiCode, message: str) -> Response:
    """Return a middleware's refusal, in the Iceberg protocol's shape on its routes."""
    if str(scope.get("path", "")).startswith(iceberg_errors.PREFIX):
        return iceberg_errors.iceberg_error(errors.ApiError(code, message))
    return errors.problem(code, message)


class RequestTimeoutMiddleware:
    """Answer 504 (TIMEOUT) when a request takes longer than ``timeout_s``.

    Event streams (endless by design) and ready-waits (bounded by their own ``timeout``) are
    left alone. Once an answer has started, it is not cut.
    """

    def __init__(self, app: ASGIApp, timeout_s: float) -> None:
        self.app = app
        self.timeout_s = timeout_s

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
            response = _refusal(
                scope, errors.ApiCode.TIMEOUT, f"the request took longer than {self.timeout_s:g} s"
            )
            await response(scope, receive, send)


def create_app(
    settings: ServerSettings | None = None,
    *,
    node: CatalogNode | None = None,
    authority: TokenAuthority | None = None,
) -> FastAPI:
    """Build the app. It opens a node from ``settings`` on start-up, unless given one.

    Args:
        settings: server settings (from the environment by default).
        node: an already started node to serve (the app then does not close it).
        authority: the loaded token authority of ``node``, when auth is on and the caller
            has made it already; otherwise the app makes its own on start-up.
    """
    settings = settings or ServerSettings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = node is None
        served = node or await CatalogNode.start(
            settings.store, settings.node_name, settings.node_options()
        )
        app.state.node = served
        if auth_enabled(settings.host, settings.auth):
            checking = authority
            if checking is None:
                secret = read_token_secret(settings.token_secret_file)
                checking = TokenAuthority(served.log, secret)
                await checking.load()
            app.state.authority = checking
        else:
            app.state.authority = None
            if not is_loopback(settings.host):
                log.warning(
                    "AUTH IS OFF on %s: anyone who reaches this address may change the catalog",
                    settings.host,
                )
        app.state.metrics.bind(served)
        log.info(
            "catalog node %s serving http://%s:%d from %s at catalog version %d",
            served.node_name,
            settings.host,
            settings.port,
            _redacted(settings.store),
            served.service.latest_version,
        )
        try:
            yield
        finally:
            if owned:
                await served.close()

    app = FastAPI(
        title="event-catalog",
        version="1",
        summary="An event-sourced, versioned DDL catalog.",
        lifespan=lifespan,
        docs_url=None,  # served from /ui/docs/, with no assets from another origin
        redoc_url=None,
        dependencies=[Depends(check_request)],
    )
    app.state.settings = settings
    app.state.metrics = ApiMetrics()
    app.state.response_cache = catalog_routes.ResponseCache()
    app.state.subscribers = Slots(settings.max_subscribers, settings.max_subscribers_per_principal)
    app.state.ddl_slots = Slots(settings.max_inflight_ddl, settings.max_inflight_ddl_per_principal)
    for router in (
        ddl.router,
        catalog_routes.router,
        versions.router,
        events.router,
        ops.router,
        data.router,
        tokens.router,
        iceberg.router,
    ):
        app.include_router(router)
    # The catalog browser: static files, no external assets; its data comes from the API.
    app.mount("/ui", StaticFiles(directory=UI_DIR, html=True), name="ui")

    @app.get("/", include_in_schema=False)
    async def home() -> RedirectResponse:
        return RedirectResponse("/ui/")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> RedirectResponse:
        return RedirectResponse("/ui/docs/")

    handlers: list[tuple[Any, Any]] = [
        (CatalogError, errors.on_catalog_error),
        (UpdateLogError, errors.on_log_error),
        (SchemaSyncError, errors.on_schema_sync_error),
        (errors.ApiError, errors.on_api_error),
        (IcebergError, on_iceberg_error),
        (RequestValidationError, errors.on_request_validation),
        (StarletteHTTPException, errors.on_http_error),
        (Exception, errors.on_unexpected),
    ]
    for exc_type, handler in handlers:
        app.add_exception_handler(exc_type, answering_iceberg_errors(handler))
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(RequestTimeoutMiddleware, timeout_s=settings.request_timeout_s)
    app.add_middleware(SecurityHeadersMiddleware)
    if not auth_enabled(settings.host, settings.auth):
        app.add_middleware(
            HostCheckMiddleware, bind_host=settings.host, allowed=settings.allowed_hosts
        )
    return app


def _redacted(url: str) -> str:
    head, sep, query = url.partition("?")
    return head + (sep + "…" if query else "")

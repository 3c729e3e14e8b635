"""The FastAPI application: one catalog node behind the REST API of docs/design.md."""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Mount

from api.iceberg import errors as iceberg_errors
from api.iceberg.app import MOUNT as ICEBERG_MOUNT
from api.iceberg.app import create_iceberg_app
from api.server import errors
from api.server.auth import TokenAuthority, auth_enabled, is_loopback, read_token_secret
from api.server.config import ServerSettings
from api.server.metrics import ApiMetrics
from api.server.middleware.host_check import HostCheckMiddleware
from api.server.middleware.limits import BodyLimitMiddleware, Refusals, RequestTimeoutMiddleware
from api.server.middleware.security_headers import SecurityHeadersMiddleware
from api.server.outside_tokens import OutsideTokens
from api.server.request_checks import check_request
from api.server.routes import (
    backups,
    data,
    ddl,
    events,
    grants,
    leases,
    ops,
    principals,
    tokens,
    versions,
)
from api.server.routes import catalog as catalog_routes
from api.server.slots import Slots
from catalog.errors import CatalogError
from catalog.runtime.node import CatalogNode
from schemasync.errors import SchemaSyncError
from updatelog.errors import UpdateLogError

log = logging.getLogger(__name__)
UI_DIR = Path(__file__).parent / "ui"


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
            oidc = settings.oidc()
            app.state.outside_tokens = None if oidc is None else OutsideTokens(oidc)
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
        leases.router,
        tokens.router,
        backups.router,
        principals.router,
        principals.oauth_router,
        grants.router,
    ):
        app.include_router(router)
    # The Iceberg REST protocol: its own app, with its own error model, on the same state.
    iceberg = create_iceberg_app(app.state)
    mount = Mount(ICEBERG_MOUNT, app=iceberg, name="iceberg")
    # Starlette's mount pattern stops at a newline, which a path parameter may hold (%0A):
    # such a request still belongs to the protocol (and gets its answer).
    mount.path_regex = re.compile(mount.path_regex.pattern, re.DOTALL)
    app.router.routes.append(mount)
    # The mount's own path is no route (404), not a redirect to the mount's root.
    app.router.add_route(ICEBERG_MOUNT, _no_such_path, include_in_schema=False)
    app.openapi = lambda: _merged_openapi(app, iceberg)  # type: ignore[method-assign]
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
        (RequestValidationError, errors.on_request_validation),
        (StarletteHTTPException, errors.on_http_error),
        (Exception, errors.on_unexpected),
    ]
    for exc_type, handler in handlers:
        app.add_exception_handler(exc_type, handler)
    refusals = Refusals({ICEBERG_MOUNT: iceberg_errors.refusal})
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes, refusals=refusals)
    app.add_middleware(
        RequestTimeoutMiddleware, timeout_s=settings.request_timeout_s, refusals=refusals
    )
    app.add_middleware(SecurityHeadersMiddleware)
    if not auth_enabled(settings.host, settings.auth):
        app.add_middleware(
            HostCheckMiddleware, bind_host=settings.host, allowed=settings.allowed_hosts
        )
    return app


async def _no_such_path(_: Request) -> Response:
    raise StarletteHTTPException(404)


def _merged_openapi(app: FastAPI, mounted: FastAPI) -> dict[str, Any]:
    """Return the server's OpenAPI document with the Iceberg sub-application's paths in it.

    A mounted app's routes are not in its parent's document; the reference at /docs shows
    both, as one document.
    """
    if app.openapi_schema is None:
        document = get_openapi(
            title=app.title,
            version=app.version,
            summary=app.summary,
            openapi_version=app.openapi_version,
            routes=app.routes,
        )
        inner = get_openapi(title=mounted.title, version=mounted.version, routes=mounted.routes)
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        inner_schemas = inner.get("components", {}).get("schemas", {})
        # A protocol body may share a name with a catalog model (Iceberg's PartitionSpec and
        # the catalog's own): the protocol's is then named Iceberg<Name> in the one document.
        renamed = {
            name: f"Iceberg{name}"
            for name, schema in inner_schemas.items()
            if name in schemas and schemas[name] != schema
        }
        if renamed:
            text = json.dumps(inner)
            for name, new in renamed.items():
                text = text.replace(
                    f'"#/components/schemas/{name}"', f'"#/components/schemas/{new}"'
                )
            inner = json.loads(text)
            inner_schemas = {
                renamed.get(n, n): v for n, v in inner["components"]["schemas"].items()
            }
        for path, item in inner["paths"].items():
            document["paths"][ICEBERG_MOUNT + path] = item
        for name, schema in inner_schemas.items():
            if schemas.setdefault(name, schema) != schema:
                raise RuntimeError(f"two OpenAPI schemas are named {name}")
        app.openapi_schema = document
    return app.openapi_schema


def _redacted(url: str) -> str:
    head, sep, query = url.partition("?")
    return head + (sep + "…" if query else "")

"""The Iceberg REST catalog as a sub-application of the server, mounted at ``/iceberg``.

It answers every error in the protocol's shape (its own exception handlers) and shares the
server's state (the node, settings, token authority, metrics, DDL slots): a mounted app has
a state of its own, and the routes read ``request.app.state``. The server's middleware (host
check, body limit, timeout, security headers) runs around it as around every request; the
body check runs as its app-wide dependency, as on the server's own routes; unknown query
parameters are ignored, not refused as the server's own routes refuse them (the protocol
grows, and a server ignores what it does not know).
"""

from __future__ import annotations

import re

from fastapi import Depends, FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.datastructures import State
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.iceberg import router
from api.iceberg.errors import IcebergError, on_iceberg_error
from api.server.errors import ApiError
from api.server.request_checks import check_body
from catalog.errors import CatalogError
from schemasync.errors import SchemaSyncError
from updatelog.errors import UpdateLogError

MOUNT = "/iceberg"
"""Where the server mounts the sub-application."""


def _operation_id(route: APIRoute) -> str:
    """Name an operation as FastAPI names the server's own: by its full path, mount included."""
    assert route.methods
    named = re.sub(r"\W", "_", f"{route.name}{MOUNT}{route.path_format}")
    return f"{named}_{next(iter(route.methods)).lower()}"


def create_iceberg_app(state: State) -> FastAPI:
    """Build the sub-application over the server's ``state``.

    Its OpenAPI document is merged into the server's (``/openapi.json``), under ``MOUNT``.
    """
    app = FastAPI(
        title="event-catalog Iceberg REST catalog",
        version="1",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=[Depends(check_body)],
        generate_unique_id_function=_operation_id,
    )
    app.state = state
    app.include_router(router.router)
    app.include_router(router.pinned)
    # Every error takes the protocol's shape; ``Exception`` (a bug) answers 500 in it too.
    for exc_type in (
        CatalogError,
        UpdateLogError,
        SchemaSyncError,
        ApiError,
        IcebergError,
        RequestValidationError,
        StarletteHTTPException,
        Exception,
    ):
        app.add_exception_handler(exc_type, on_iceberg_error)
    return app

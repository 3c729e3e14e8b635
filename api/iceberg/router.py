"""The Iceberg REST catalog's routes (``/v1`` of the sub-application at ``/iceberg``).

Namespaces are schemas, tables are tables and views are views (``namespace_routes``,
``table_routes``, ``commit_routes``, ``transaction_routes``, ``view_routes``). Each route takes
the privileges its objects need (``visibility``): a reader holds ``SELECT`` everywhere, a
writer also ``CREATE``, ``MODIFY``, ``ALTER`` and ``DROP``; grants give them object by object.

``/oauth/tokens`` signs engines in (``api.server.oauth``). Every other route but ``/config``
is served twice: at ``/v1/...`` on the latest catalog, and at
``/v1/{prefix}/...`` for a pinned prefix (``pins``), where a read answers the catalog as of
the pin and a change is refused. The pinned routes are matched second, so a namespace named
like a route (``/v1/namespaces/namespaces``) still reaches the unpinned one.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.routing import APIRoute

from api.iceberg import (
    commit_routes,
    namespace_routes,
    signing_routes,
    table_routes,
    transaction_routes,
    view_routes,
)
from api.iceberg.errors import documented_errors
from api.iceberg.paths import WRITE
from api.iceberg.pins import pinned_read, pinned_write
from api.server.oauth import add_token_route

PARTS = (
    namespace_routes.router,
    table_routes.router,
    commit_routes.router,
    transaction_routes.router,
    view_routes.router,
    signing_routes.router,
)
"""The routers of the routes, in the order they are matched."""

router = APIRouter(prefix="/v1", tags=["iceberg"], responses=documented_errors())
for _part in PARTS:
    router.include_router(_part)
add_token_route(router)

pinned = APIRouter(prefix="/v1/{prefix}", tags=["iceberg"], responses=documented_errors())
"""The same routes under a pinned prefix (left out of the OpenAPI document: the protocol's
``{prefix}`` is described once, in ``docs/iceberg.md``)."""
for _part in PARTS:
    for _route in _part.routes:
        if not isinstance(_route, APIRoute) or _route.path in ("/config", "/aws/s3/sign"):
            continue
        changes = any(d in WRITE for d in _route.dependencies)
        pin = Depends(pinned_write if changes else pinned_read)
        pinned.add_api_route(
            _route.path,
            _route.endpoint,
            methods=list(_route.methods or ()),
            response_model=_route.response_model,
            status_code=_route.status_code,
            dependencies=[*_route.dependencies, pin],
            name=f"pinned_{_route.name}",
            include_in_schema=False,
        )

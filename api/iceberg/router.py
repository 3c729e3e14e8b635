"""The Iceberg REST catalog's routes (``/v1`` of the sub-application at ``/iceberg``).

Namespaces are schemas, tables are tables (``namespace_routes``, ``table_routes``,
``commit_routes``). Reads take the reader role, changes the writer role, as on ``/v1``.
"""

from __future__ import annotations

from fastapi import APIRouter

from api.iceberg import commit_routes, namespace_routes, table_routes
from api.iceberg.errors import documented_errors

router = APIRouter(prefix="/v1", tags=["iceberg"], responses=documented_errors())
router.include_router(namespace_routes.router)
router.include_router(table_routes.router)
router.include_router(commit_routes.router)

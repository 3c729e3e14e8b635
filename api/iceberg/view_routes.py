"""The Iceberg REST catalog's view routes: list, create, load, replace, drop, exists, rename.

Each change is one catalog command run by ``execute_batch``, so it makes one catalog version;
the catalog keeps every view's versions and query texts and never runs them. Views share
their namespace's names with tables: a view cannot take a table's name, nor a table a view's.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from api.iceberg.models import ListTablesResponse, RenameTableRequest
from api.iceberg.paths import (
    NAMESPACE_SEPARATOR,
    READ,
    WRITE,
    NamespacePath,
    PageSize,
    PageToken,
    ViewPath,
    named_page,
)
from api.iceberg.reads import latest_of, read_catalog
from api.iceberg.view_metadata import (
    alter_view_command,
    create_view_command,
    forget_view_files,
    written_view_file,
)
from api.iceberg.view_models import CommitViewRequest, CreateViewRequest, LoadViewResult
from api.iceberg.visibility import seen_names, seen_schema, seen_view
from api.server.execution import execute_batch, node_of
from api.server.permits import permit
from api.server.responses import json_response
from catalog.catalog import Catalog
from catalog.commands.views import DropViewCommand, RenameViewCommand
from catalog.descriptors import Privilege, SchemaDescriptor, SecurableKind
from catalog.errors import AlreadyExistsError, ErrorCode

router = APIRouter()


@router.get("/namespaces/{namespace}/views", response_model=ListTablesResponse, dependencies=READ)
async def list_views(
    request: Request,
    namespace: NamespacePath,
    page_token: PageToken = None,
    page_size: PageSize = None,
) -> Response:
    """The views of a schema."""
    cat = read_catalog(request)
    schema = seen_schema(request, cat, namespace)
    names = seen_names(request, cat, SecurableKind.VIEW, cat.schema_views(schema.id))
    return json_response(named_page(schema.name, names, page_token, page_size))


def _check_name_free(cat: Catalog, schema: SchemaDescriptor, name: str) -> None:
    """Refuse a name a view or table holds, in Iceberg's words."""
    if cat.find_view(schema.name, name) is not None:
        raise AlreadyExistsError(
            f"View already exists: {schema.name}.{name}", code=ErrorCode.VIEW_EXISTS
        )
    if cat.find_table(schema.name, name) is not None:
        raise AlreadyExistsError(
            f"Table with same name already exists: {schema.name}.{name}",
            code=ErrorCode.TABLE_EXISTS,
        )


@router.post("/namespaces/{namespace}/views", response_model=LoadViewResult, dependencies=WRITE)
async def create_view(
    request: Request, namespace: NamespacePath, body: CreateViewRequest
) -> Response:
    """Create a view (one ``CREATE VIEW``); its query texts are kept as given."""
    cat = latest_of(request)
    schema = seen_schema(request, cat, namespace)
    permit(request, cat, Privilege.CREATE, SecurableKind.SCHEMA, schema.id)
    _check_name_free(cat, schema, body.name)
    result = await execute_batch(request, [create_view_command(schema.name, body)])
    found = node_of(request).service.catalog(result.version).view(schema.name, body.name)
    file, metadata = await written_view_file(request, found)
    return json_response(LoadViewResult(metadata_location=file, metadata=metadata))


@router.get(
    "/namespaces/{namespace}/views/{view}", response_model=LoadViewResult, dependencies=READ
)
async def load_view(request: Request, namespace: NamespacePath, view: ViewPath) -> Response:
    """A view's metadata: its kept versions, the current one, its schemas and properties."""
    _, found = seen_view(request, read_catalog(request), namespace, view, (Privilege.SELECT,))
    file, metadata = await written_view_file(request, found)
    return json_response(LoadViewResult(metadata_location=file, metadata=metadata))


@router.head("/namespaces/{namespace}/views/{view}", status_code=204, dependencies=READ)
async def view_exists(request: Request, namespace: NamespacePath, view: ViewPath) -> Response:
    """204 when the view exists, else 404."""
    seen_view(request, read_catalog(request), namespace, view)
    return Response(status_code=204)


@router.post(
    "/namespaces/{namespace}/views/{view}", response_model=LoadViewResult, dependencies=WRITE
)
async def replace_view(
    request: Request, namespace: NamespacePath, view: ViewPath, body: CommitViewRequest
) -> Response:
    """Change a view as the commit's updates say, if its requirement holds (one version)."""
    schema, found = seen_view(request, latest_of(request), namespace, view)
    command = alter_view_command(schema.name, found.name, body)
    result = await execute_batch(request, [command])
    changed = node_of(request).service.catalog(result.version).view(schema.name, found.name)
    file, metadata = await written_view_file(request, changed)
    return json_response(LoadViewResult(metadata_location=file, metadata=metadata))


@router.delete("/namespaces/{namespace}/views/{view}", status_code=204, dependencies=WRITE)
async def drop_view(request: Request, namespace: NamespacePath, view: ViewPath) -> Response:
    """Drop a view (``DROP VIEW``); reads as of earlier moments still see it."""
    schema, found = seen_view(request, latest_of(request), namespace, view)
    await execute_batch(request, [DropViewCommand(**{"schema": schema.name, "name": found.name})])
    await forget_view_files(request, found.id)
    return Response(status_code=204)


@router.post("/views/rename", status_code=204, dependencies=WRITE)
async def rename_view(request: Request, body: RenameTableRequest) -> Response:
    """Rename a view, or move it to another namespace."""
    source, destination = body.source, body.destination
    cat = latest_of(request)
    schema, found = seen_view(request, cat, NAMESPACE_SEPARATOR.join(source.namespace), source.name)
    target = seen_schema(request, cat, NAMESPACE_SEPARATOR.join(destination.namespace))
    if (target.id, destination.name) != (schema.id, found.name):
        was, to = f"{schema.name}.{found.name}", f"{target.name}.{destination.name}"
        if cat.find_view(target.name, destination.name) is not None:
            raise AlreadyExistsError(
                f"Cannot rename {was} to {to}. View already exists", code=ErrorCode.VIEW_EXISTS
            )
        if cat.find_table(target.name, destination.name) is not None:
            raise AlreadyExistsError(
                f"Cannot rename {was} to {to}. Table already exists", code=ErrorCode.TABLE_EXISTS
            )
    command = RenameViewCommand(
        **{"schema": schema.name, "name": found.name},
        new_name=destination.name,
        new_schema=target.name,
    )
    await execute_batch(request, [command])
    return Response(status_code=204)

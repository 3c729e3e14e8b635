"""The Iceberg REST catalog's config and namespace routes.

Namespaces are the catalog's schemas, one level each.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from api.iceberg.errors import IcebergError, unsupported
from api.iceberg.models import (
    CatalogConfig,
    CreateNamespaceRequest,
    ListNamespacesResponse,
    NamespaceResponse,
    UpdateNamespacePropertiesRequest,
    UpdateNamespacePropertiesResponse,
)
from api.iceberg.paths import (
    ENDPOINTS,
    READ,
    WRITE,
    NamespacePath,
    PageSize,
    PageToken,
    page,
)
from api.iceberg.pins import is_pin, parse_pin, resolve
from api.iceberg.reads import latest_of, read_catalog
from api.iceberg.visibility import seen_names, seen_schema
from api.server.execution import execute_batch
from api.server.permits import permit
from api.server.responses import json_response
from catalog.commands.schemas import (
    AlterSchemaPropertiesCommand,
    CreateSchemaCommand,
    DropSchemaCommand,
)
from catalog.descriptors import CATALOG_ID, Privilege, SecurableKind
from catalog.errors import AlreadyExistsError, ErrorCode
from catalog.properties import named_properties, properties_dict

router = APIRouter()


@router.get("/config", response_model=CatalogConfig, dependencies=READ)
async def get_config(
    request: Request,
    warehouse: Annotated[str | None, Query(max_length=1000)] = None,
) -> Response:
    """The client settings and the endpoints this server implements.

    A ``warehouse`` that names a pin (``<name>@v<version>``, ``<name>@<RFC 3339 time>``) is
    answered as the client's ``prefix``: its reads then see the catalog as of that moment
    (``pins``). The pin is resolved here, so one the catalog cannot answer fails at once.
    """
    overrides: dict[str, str] = {}
    if warehouse is not None and is_pin(warehouse):
        await resolve(request, parse_pin(warehouse))
        overrides["prefix"] = warehouse
    return json_response(CatalogConfig(overrides=overrides, endpoints=list(ENDPOINTS)))


@router.get("/namespaces", response_model=ListNamespacesResponse, dependencies=READ)
async def list_namespaces(
    request: Request,
    parent: Annotated[str | None, Query(max_length=1000)] = None,
    page_token: PageToken = None,
    page_size: PageSize = None,
) -> Response:
    """The schemas, each a one-level namespace; a namespace has no children.

    A ``parent`` answers none, or 404 when it is no namespace.
    """
    cat = read_catalog(request)
    if parent:
        seen_schema(request, cat, parent)
    names = [] if parent else seen_names(request, cat, SecurableKind.SCHEMA, cat.schemas())
    shown, token = page(names, page_token, page_size)
    return json_response(
        ListNamespacesResponse(namespaces=[[n] for n in shown], next_page_token=token)
    )


@router.post("/namespaces", response_model=NamespaceResponse, dependencies=WRITE)
async def create_namespace(request: Request, body: CreateNamespaceRequest) -> Response:
    """Create a schema (``CREATE SCHEMA``) with its properties, kept verbatim."""
    if len(body.namespace) != 1:
        raise unsupported("namespaces are the catalog's schemas: give exactly one level")
    name = body.namespace[0]
    # The privilege first: a caller that may not create learns nothing of what is there.
    permit(request, latest_of(request), Privilege.CREATE, SecurableKind.CATALOG, CATALOG_ID)
    if latest_of(request).find_schema(name) is not None:
        raise AlreadyExistsError(f"Namespace already exists: {name}", code=ErrorCode.SCHEMA_EXISTS)
    command = CreateSchemaCommand(name=name, properties=body.properties)
    await execute_batch(request, [command])
    return json_response(NamespaceResponse(namespace=body.namespace, properties=body.properties))


@router.get("/namespaces/{namespace}", response_model=NamespaceResponse, dependencies=READ)
async def load_namespace(request: Request, namespace: NamespacePath) -> Response:
    """One schema, with its properties."""
    found = seen_schema(request, read_catalog(request), namespace)
    return json_response(
        NamespaceResponse(namespace=[found.name], properties=properties_dict(found.properties))
    )


@router.post(
    "/namespaces/{namespace}/properties",
    response_model=UpdateNamespacePropertiesResponse,
    dependencies=WRITE,
)
async def update_namespace_properties(
    request: Request, namespace: NamespacePath, body: UpdateNamespacePropertiesRequest
) -> Response:
    """Set and remove a schema's properties (one catalog version, or none when unchanged).

    A key both set and removed is refused (422); a removed key the schema lacks is named in
    ``missing``.
    """
    both = sorted(set(body.updates) & set(body.removals))
    if both:
        raise IcebergError(
            "UnprocessableEntityException",
            422,
            f"{named_properties(both)} are both updated and removed; give each once",
        )
    schema = seen_schema(request, latest_of(request), namespace)
    name, held = schema.name, properties_dict(schema.properties)
    command = AlterSchemaPropertiesCommand(
        name=name, set_properties=body.updates, remove_properties=tuple(body.removals)
    )
    await execute_batch(request, [command])
    removals = list(dict.fromkeys(body.removals))
    return json_response(
        UpdateNamespacePropertiesResponse(
            updated=sorted(body.updates),
            removed=[k for k in removals if k in held],
            missing=[k for k in removals if k not in held],
        )
    )


@router.head("/namespaces/{namespace}", status_code=204, dependencies=READ)
async def namespace_exists(request: Request, namespace: NamespacePath) -> Response:
    """204 when the schema exists, else 404."""
    seen_schema(request, read_catalog(request), namespace)
    return Response(status_code=204)


@router.delete("/namespaces/{namespace}", status_code=204, dependencies=WRITE)
async def drop_namespace(request: Request, namespace: NamespacePath) -> Response:
    """Drop an empty schema (``DROP SCHEMA``)."""
    name = seen_schema(request, latest_of(request), namespace).name
    await execute_batch(request, [DropSchemaCommand(name=name)])
    return Response(status_code=204)

"""Reads of the catalog: whole, a table, an index, a view, zones; at a version or a time.

A caller of the role ``none`` reads the part of each version it may see (``catalog.visible``):
what its grants show it, and nothing of principals, roles or grants.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import Response

from api.server.auth import require
from api.server.errors import problem_responses
from api.server.execution import node_of
from api.server.permits import seen_catalog
from api.server.responses import json_response
from api.server.routes.params import AT_DOC, NAME_DOC, VERSION_DOC, resolve_catalog
from api.wire.models import (
    CatalogBody,
    IndexBody,
    IndexesBody,
    SchemaBody,
    SchemasBody,
    SystemViewsBody,
    TableBody,
    TableHistoryBody,
    ViewBody,
    ViewsBody,
    ZoneBody,
    ZonesBody,
)
from api.wire.roles import Role
from catalog.catalog import Catalog
from catalog.descriptors import IndexDescriptor
from catalog.identifiers import DEFAULT_SCHEMA, parse_name

router = APIRouter(
    prefix="/v1",
    tags=["catalog"],
    responses=problem_responses(400, 401, 403, 404, 410, 422, 503),
    dependencies=[Depends(require(Role.NONE))],  # the role none reads what it sees
)

Version = Annotated[int | None, Query(ge=0, description=VERSION_DOC)]
At = Annotated[str | None, Query(min_length=1, max_length=64, description=AT_DOC)]
Name = Annotated[str, Path(min_length=1, max_length=300, description=NAME_DOC)]
NameFilter = Annotated[str | None, Query(min_length=1, max_length=300, description=NAME_DOC)]
MAX_HISTORY_PAGE = 100
"""The most schema versions one page of a table's history holds."""


@dataclass(frozen=True, slots=True)
class CatalogRead:
    """Which catalog a read asks for: at ``version``, as of ``at``, or the latest."""

    request: Request
    version: int | None
    at: str | None

    async def catalog(self) -> Catalog:
        """Return that catalog, as the caller may see it (``catalog.visible``).

        Resolved in the route, once every parameter is valid.
        """
        cat = await resolve_catalog(node_of(self.request), self.version, self.at)
        return seen_catalog(self.request, cat)


async def _catalog_read(request: Request, version: Version = None, at: At = None) -> CatalogRead:
    return CatalogRead(request, version, at)


ReadAt = Annotated[CatalogRead, Depends(_catalog_read)]
"""A read's ``version`` and ``at`` query parameters."""


@router.get("/catalog", response_model=CatalogBody)
async def get_catalog(read: ReadAt) -> Response:
    """The whole catalog at a version, as of a time, or the latest."""
    cat = await read.catalog()
    return json_response(CatalogBody.of(cat, history=False))


@router.get("/schemas", response_model=SchemasBody)
async def list_schemas(read: ReadAt) -> Response:
    """Every schema."""
    cat = await read.catalog()
    return json_response(SchemasBody(version=cat.version, schemas=cat.schemas()))


@router.get("/schemas/{schema}", response_model=SchemaBody)
async def get_schema(read: ReadAt, schema: Name) -> Response:
    """One schema with the (exact) names of its tables and alive indexes."""
    cat = await read.catalog()
    found = cat.schema(parse_name(schema))
    tables = cat.schema_tables(found.id)
    indexes = sorted(i.name for t in tables for i in cat.table_indexes(t.id) if i.is_alive)
    return json_response(
        SchemaBody(
            version=cat.version,
            schema_=found,
            tables=sorted(t.name for t in tables),
            indexes=indexes,
        )
    )


@router.get("/indexes", response_model=IndexesBody)
async def list_indexes(
    read: ReadAt, schema: NameFilter = None, table: NameFilter = None
) -> Response:
    """Alive indexes: every one, a schema's, or one table's (in PUBLIC unless ``schema``)."""
    cat = await read.catalog()
    found: list[IndexDescriptor]
    if table is not None:
        owner = cat.table(
            DEFAULT_SCHEMA if schema is None else parse_name(schema), parse_name(table)
        )
        found = cat.table_indexes(owner.id)
    elif schema is not None:
        tables = cat.schema_tables(cat.schema(parse_name(schema)).id)
        found = [i for t in tables for i in cat.table_indexes(t.id)]
    else:
        found = cat.indexes()
    alive = sorted((i for i in found if i.is_alive), key=lambda i: i.id)
    return json_response(IndexesBody(version=cat.version, indexes=alive))


@router.get("/zones", response_model=ZonesBody)
async def list_zones(read: ReadAt) -> Response:
    """Every zone, and the default one (where a table created without a zone goes)."""
    cat = await read.catalog()
    default = cat.default_zone()
    return json_response(
        ZonesBody(
            version=cat.version,
            default_zone=None if default is None else default.name,
            zones=cat.zones(),
        )
    )


@router.get("/system-views", response_model=SystemViewsBody)
async def list_system_views(read: ReadAt) -> Response:
    """The system views the database's nodes registered (all in ``SYSTEM``), oldest first."""
    cat = await read.catalog()
    return json_response(SystemViewsBody(version=cat.version, system_views=cat.system_views()))


@router.get(
    "/schemas/{schema}/tables/{name}",
    response_model=TableBody,
)
async def get_table(
    request: Request, schema: Name, name: Name, version: Version = None, at: At = None
) -> Response:
    """One table with its indexes and zone."""
    schema, name = parse_name(schema), parse_name(name)
    # A caller of the role none reads its part: a table it may not see is missing there (and
    # one it sees is the same answer as everyone's, so the cache holds one per version).
    cat = seen_catalog(request, await resolve_catalog(node_of(request), version, at))
    cat.table(schema, name)  # TABLE_NOT_FOUND before the cache, which holds everyone's answers
    cache: ResponseCache = request.app.state.response_cache
    body = cache.get(("table", cat.version, schema, name), lambda: _table_json(cat, schema, name))
    return Response(body, media_type="application/json")


class ResponseCache:
    """Serialised answers keyed by catalog version and path: a version never changes.

    Bounded in entries and in bytes, least recently used first out; an answer larger than a
    quarter of the byte budget is served but not kept.
    """

    def __init__(self, size: int = 4096, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._size = size
        self._max_bytes = max_bytes
        self._bytes = 0
        self._entries: OrderedDict[tuple[object, ...], bytes] = OrderedDict()

    @property
    def bytes_held(self) -> int:
        """Return the bytes of the answers kept."""
        return self._bytes

    def get(self, key: tuple[object, ...], build: Callable[[], bytes]) -> bytes:
        """Return the bytes cached for ``key``, building and keeping them on a miss."""
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
            return found
        found = build()
        if len(found) <= self._max_bytes // 4:
            self._entries[key] = found
            self._bytes += len(found)
            while len(self._entries) > self._size or self._bytes > self._max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= len(dropped)
        return found


def _table_json(cat: Catalog, schema: str, name: str) -> bytes:
    table = cat.table(schema, name)
    body = TableBody.model_construct(
        version=cat.version,
        activation_ts=cat.activation_ts,
        schema_=schema,
        table=table.current(),
        indexes=cat.table_indexes(table.id),
        zone=cat.zone_by_id(table.zone_id),
    )
    return body.model_dump_json(by_alias=True).encode()


@router.get("/schemas/{schema}/tables/{name}/schema-versions", response_model=TableHistoryBody)
async def get_table_history(
    read: ReadAt,
    schema: Name,
    name: Name,
    from_schema_version: Annotated[int, Query(ge=1, alias="from")] = 1,
    limit: Annotated[int, Query(ge=1, le=MAX_HISTORY_PAGE)] = 20,
) -> Response:
    """A page of a table's schema versions (its columns at each), oldest first.

    Table answers carry only the current schema version; this is where the rest is read.
    """
    cat = await read.catalog()
    table = cat.table(parse_name(schema), parse_name(name))
    page = [v for v in table.versions if v.version >= from_schema_version][: limit + 1]
    return json_response(
        TableHistoryBody(
            version=cat.version,
            table_id=table.id,
            schema_versions=page[:limit],
            next_schema_version=page[limit].version if len(page) > limit else None,
        )
    )


@router.get("/schemas/{schema}/tables", response_model=list[str])
async def list_tables(read: ReadAt, schema: Name) -> list[str]:
    """The (exact) names of a schema's tables."""
    cat = await read.catalog()
    return [t.name for t in cat.schema_tables(cat.schema(parse_name(schema)).id)]


@router.get(
    "/schemas/{schema}/indexes/{name}",
    response_model=IndexBody,
)
async def get_index(read: ReadAt, schema: Name, name: Name) -> Response:
    """One (alive) index."""
    cat = await read.catalog()
    index = cat.index(parse_name(schema), parse_name(name))
    return json_response(IndexBody(version=cat.version, index=index))


@router.get("/zones/{name}", response_model=ZoneBody)
async def get_zone(read: ReadAt, name: Name) -> Response:
    """One zone and the ids of the tables it holds (the default zone is ``"Default"``)."""
    cat = await read.catalog()
    zone = cat.zone(parse_name(name))
    return json_response(
        ZoneBody(version=cat.version, zone=zone, table_ids=[t.id for t in cat.zone_tables(zone.id)])
    )


@router.get("/views", response_model=ViewsBody)
async def list_views(read: ReadAt, schema: NameFilter = None) -> Response:
    """Views: every one, or one schema's; each with its kept versions and query texts."""
    cat = await read.catalog()
    found = cat.views() if schema is None else cat.schema_views(cat.schema(parse_name(schema)).id)
    return json_response(ViewsBody(version=cat.version, views=found))


@router.get("/schemas/{schema}/views/{name}", response_model=ViewBody)
async def get_view(read: ReadAt, schema: Name, name: Name) -> Response:
    """One view: its current version's query per dialect, its columns, its kept versions."""
    cat = await read.catalog()
    view = cat.view(parse_name(schema), parse_name(name))
    return json_response(ViewBody(version=cat.version, view=view))

"""A view's Iceberg metadata, projected from its descriptor, and the commands a request makes.

A view's location is the one its engine gave, else ``<warehouse>/view_<id>``; its metadata
file is ``<warehouse>/metadata/view_<id>/catalog-v<N>.metadata.json``, named by the catalog
version that last changed it and written before it is answered (as a table's is).
"""

from __future__ import annotations

import asyncio
import contextlib

from fastapi import Request

from api.iceberg.errors import IcebergError, bad_request
from api.iceberg.metadata import iceberg_field, location_uri
from api.iceberg.metadata_files import unwritable, write_new_json
from api.iceberg.models import IcebergSchema
from api.iceberg.reads import file_version, warehouse_of
from api.iceberg.types import NoCounterpartError, catalog_type
from api.iceberg.view_models import (
    AddSchemaUpdate,
    AddViewVersionUpdate,
    AssignUUIDUpdate,
    CommitViewRequest,
    CreateViewRequest,
    RemovePropertiesUpdate,
    SetCurrentViewVersionUpdate,
    SetLocationUpdate,
    SetPropertiesUpdate,
    SQLViewRepresentation,
    UpgradeFormatVersionUpdate,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersionBody,
)
from api.wire.codes import IcebergType
from catalog.column_types import NESTED_TYPES
from catalog.commands.base import unique
from catalog.commands.view_changes import LAST_ADDED
from catalog.commands.views import (
    AlterViewCommand,
    CreateViewCommand,
    NewViewSchema,
    ViewColumnSpec,
    ViewQuery,
    ViewVersionSpec,
)
from catalog.data.table_files import TableFileError, remove_folder
from catalog.data.warehouse import METADATA_FOLDER, warehouse_root
from catalog.descriptors.views import VIEW_FORMAT_VERSION, ViewDescriptor, ViewSchema, ViewVersion
from catalog.properties import properties_dict


def _view_folder(warehouse: str, view_id: int) -> str:
    return location_uri(f"{warehouse_root(warehouse)}/view_{view_id}")


def _metadata_folder(warehouse: str, view_id: int) -> str:
    return f"{warehouse_root(warehouse)}/{METADATA_FOLDER}/view_{view_id}"


def view_metadata(view: ViewDescriptor, warehouse: str) -> ViewMetadata:
    """Return ``view``'s Iceberg metadata.

    Raises:
        IcebergError: a column's type has no Iceberg counterpart.
    """
    return ViewMetadata(
        view_uuid=view.uuid,
        format_version=VIEW_FORMAT_VERSION,
        location=view.location or _view_folder(warehouse, view.id),
        current_version_id=view.current_version_id,
        versions=[_version(v) for v in view.versions],
        version_log=[
            ViewHistoryEntry(version_id=e.version_id, timestamp_ms=e.timestamp_ms) for e in view.log
        ],
        schemas=[_schema(view, s) for s in view.schemas],
        properties=properties_dict(view.properties),
    )


def _version(version: ViewVersion) -> ViewVersionBody:
    return ViewVersionBody(
        version_id=version.version_id,
        timestamp_ms=version.timestamp_ms,
        schema_id=version.schema_id,
        summary=properties_dict(version.summary),
        representations=[
            SQLViewRepresentation(sql=r.sql, dialect=r.dialect) for r in version.representations
        ],
        default_catalog=version.default_catalog,
        default_namespace=list(version.default_namespace),
    )


def _schema(view: ViewDescriptor, schema: ViewSchema) -> IcebergSchema:
    try:
        fields = [iceberg_field(c, c.doc) for c in schema.columns]
    except NoCounterpartError as e:
        raise bad_request(f"view {view.name}, {e}") from e
    return IcebergSchema(schema_id=schema.schema_id, fields=fields)


async def written_view_file(request: Request, view: ViewDescriptor) -> tuple[str, ViewMetadata]:
    """Return the metadata file of ``view``'s state and the metadata it holds, written first.

    Raises:
        IcebergError: ServiceUnavailableException when the warehouse cannot be written.
    """
    version = file_version(request, view.update_ts)
    warehouse = warehouse_of(request)
    metadata = view_metadata(view, warehouse)
    file = f"{location_uri(_metadata_folder(warehouse, view.id))}/catalog-v{version}.metadata.json"
    body = metadata.model_dump(mode="json", by_alias=True, exclude_none=True)
    try:
        await asyncio.to_thread(write_new_json, file, body)
    except OSError as e:
        raise unwritable(f"the metadata file {file} of view {view.name}", e) from e
    return file, metadata


async def forget_view_files(request: Request, view_id: int) -> None:
    """Remove a dropped view's metadata files (a read pinned before the drop writes them again)."""
    folder = _metadata_folder(warehouse_of(request), view_id)
    with contextlib.suppress(OSError, TableFileError):  # left: the next drop's expiry tries
        await asyncio.to_thread(remove_folder, folder)


def _columns(view: str, schema: IcebergSchema) -> NewViewSchema:
    columns = []
    for field in schema.fields:
        try:
            mapped = catalog_type(field.type)
        except NoCounterpartError as e:
            raise bad_request(f"view {view}, field {field.name}: {e}") from e
        if mapped.type in NESTED_TYPES:
            raise bad_request(
                f"view {view}, field {field.name}: a view's columns hold plain values; this "
                f"catalog keeps no {mapped.type} column of a view (a table's columns may be one)"
            )
        columns.append(
            ViewColumnSpec(
                name=field.name,
                type=mapped.type,
                nullable=not field.required,
                precision=mapped.precision,
                scale=mapped.scale,
                doc=field.doc,
            )
        )
    if not columns:
        raise bad_request(f"view {view}: a view's schema has at least one field")
    unique(tuple(c.name for c in columns), f"column name in view {view}")
    return NewViewSchema(columns=tuple(columns), field_ids=tuple(f.id for f in schema.fields))


def _version_spec(view: str, body: ViewVersionBody, schema_id: int) -> ViewVersionSpec:
    if not body.representations:
        raise bad_request(f"view {view}: a view version has at least one SQL representation")
    seen: set[str] = set()
    for representation in body.representations:
        dialect = representation.dialect.lower()
        if dialect in seen:
            # Iceberg's words and type (Java's client raises IllegalArgumentException for it)
            raise IcebergError(
                IcebergType.ILLEGAL_ARGUMENT,
                400,
                f"Invalid view version: Cannot add multiple queries for dialect {dialect}",
            )
        seen.add(dialect)
    return ViewVersionSpec(
        schema_id=schema_id,
        queries=tuple(ViewQuery(dialect=r.dialect, sql=r.sql) for r in body.representations),
        default_namespace=tuple(body.default_namespace),
        default_catalog=body.default_catalog,
        summary=body.summary,
        timestamp_ms=body.timestamp_ms,
    )


def create_view_command(schema: str, body: CreateViewRequest) -> CreateViewCommand:
    """Return the ``CREATE VIEW`` an Iceberg create asks for.

    Raises:
        IcebergError: BadRequestException for a type with no counterpart or no query.
    """
    columns = _columns(body.name, body.schema_)
    return CreateViewCommand(
        **{"schema": schema},
        name=body.name,
        columns=columns.columns,
        field_ids=columns.field_ids,
        version=_version_spec(body.name, body.view_version, LAST_ADDED),
        properties=body.properties,
        location=body.location,
    )


def alter_view_command(schema: str, name: str, body: CommitViewRequest) -> AlterViewCommand:
    """Return the change an Iceberg view commit asks for, in the catalog's terms.

    A version naming the schema this commit adds (by the id the engine gave it) names the
    schema added last; the current version naming the version this commit adds, likewise.

    Raises:
        IcebergError: BadRequestException for an update the catalog cannot make.
    """
    schemas: list[NewViewSchema] = []
    versions: list[ViewVersionSpec] = []
    added_schema_ids: set[int] = set()
    added_version_ids: set[int] = set()
    current: int | None = None
    set_properties: dict[str, str] = {}
    removals: list[str] = []
    location = None
    for update in body.updates:
        if isinstance(update, AddSchemaUpdate):
            schemas.append(_columns(name, update.schema_))
            if update.schema_.schema_id is not None:
                added_schema_ids.add(update.schema_.schema_id)
        elif isinstance(update, AddViewVersionUpdate):
            wanted = update.view_version.schema_id
            schema_id = LAST_ADDED if wanted in added_schema_ids else wanted
            versions.append(_version_spec(name, update.view_version, schema_id))
            added_version_ids.add(update.view_version.version_id)
        elif isinstance(update, SetCurrentViewVersionUpdate):
            wanted = update.view_version_id
            current = LAST_ADDED if wanted in added_version_ids else wanted
        elif isinstance(update, SetPropertiesUpdate):
            set_properties.update(update.updates)
        elif isinstance(update, RemovePropertiesUpdate):
            removals.extend(update.removals)
        elif isinstance(update, SetLocationUpdate):
            location = update.location
        elif isinstance(update, UpgradeFormatVersionUpdate):
            if update.format_version != VIEW_FORMAT_VERSION:
                raise bad_request(
                    f"view {name}: format version {update.format_version} is not supported; "
                    f"views are kept in format version {VIEW_FORMAT_VERSION}"
                )
        elif isinstance(update, AssignUUIDUpdate):
            pass  # checked against the view's uuid below
    uuids = [u.uuid for u in body.updates if isinstance(u, AssignUUIDUpdate)]
    uuids += [r.uuid for r in body.requirements]
    if len(set(uuids)) > 1:
        raise bad_request(f"view {name}: the commit names two uuids, {' and '.join(uuids)}")
    return AlterViewCommand(
        **{"schema": schema},
        name=name,
        expected_uuid=uuids[0] if uuids else None,
        add_schemas=tuple(schemas),
        add_versions=tuple(versions),
        current_version_id=current,
        set_properties=set_properties,
        remove_properties=tuple(removals),
        location=location,
    )

"""An Iceberg ``CreateTableRequest`` as one ``CreateTableCommand``.

The Iceberg schema's fields become the columns (required is NOT NULL) and its identifier
fields the primary key; a schema without identifier fields makes a table without a key
(``keyless``), as engines create them. The catalog gives the columns their own ids (1, 2, ...
in field order, as Iceberg does on create); the answer carries those. The partition spec,
write order, properties other than the catalog's own and field docs become the table's
Iceberg state (``IcebergTableSpec``), as Iceberg assigns them on create: spec 0 with field
ids from 1000, order 1. The table lives at the location the request names, if it names one
the catalog honours (``catalog.data.locations``), else in its warehouse folder
``<warehouse>/table_<id>``, and is created at once (no staged creation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.iceberg.errors import bad_request
from api.iceberg.models import CreateTableRequest, IcebergSchema, PartitionSpec, SortOrder
from api.iceberg.nested_types import (
    all_field_ids,
    column_of,
    refuse_nested_identifiers,
    source_paths,
)
from api.iceberg.properties import FORMAT_VERSION_PROPERTY, property_fields, split_properties
from catalog.commands.iceberg_tables import (
    IcebergTableSpec,
    NewPartitionSpec,
    NewSortOrder,
    PartitionFieldSpec,
    SortFieldSpec,
)
from catalog.commands.tables import CreateTableCommand
from catalog.descriptors.nested import Path, path_words

SERVED_FORMAT_VERSION = 2
"""The format version of a table created without one."""
SERVED_FORMAT_VERSIONS = (2, 3)
"""The format versions a table is created with or upgraded to (3: with row lineage)."""
SERVED_ONLY = (
    "this catalog serves tables of Iceberg format versions 2 and 3 (format version 1 tables "
    "cannot be created; upgrade them)"
)


def _member(item: Mapping[str, Any], name: str, what: str) -> Any:
    if name not in item:
        raise bad_request(f"{what} needs {name}")
    return item[name]


def _source(names: Mapping[int, Path], item: Mapping[str, Any], what: str) -> str:
    source = _member(item, "source-id", what)
    path = names.get(source) if isinstance(source, int) else None
    if path is None:
        raise bad_request(f"{what}: source-id {source} is no field of the schema")
    if len(path) > 1:
        raise bad_request(
            f"{what}: source-id {source} is the nested field {path_words(path)}; this catalog "
            "partitions and sorts by top-level fields only"
        )
    return path[0]


def new_spec(names: Mapping[int, Path], spec: PartitionSpec) -> NewPartitionSpec:
    """Return a spec of Iceberg's as the catalog's (sources by field name).

    Args:
        names: the path of every field of the schema, by id (``nested_types.source_paths``).
        spec: the spec.

    Raises:
        IcebergError: BadRequestException for a field without its members, naming no field
            or a nested one.
        ValidationError: an unknown transform.
    """
    what = "a partition field"
    return NewPartitionSpec(
        spec_id=spec.spec_id,
        fields=tuple(
            PartitionFieldSpec(
                source=_source(names, f, what),
                transform=str(_member(f, "transform", what)),
                name=f.get("name"),
                field_id=f.get("field-id"),
            )
            for f in spec.fields
        ),
    )


def new_order(names: Mapping[int, Path], order: SortOrder) -> NewSortOrder:
    """Return a sort order of Iceberg's as the catalog's (sources by field name).

    Args:
        names: the path of every field of the schema, by id (``nested_types.source_paths``).
        order: the order.

    Raises:
        IcebergError: BadRequestException for a field without its members, naming no field
            or a nested one.
        ValidationError: an unknown transform, direction or null order.
    """
    what = "a sort field"
    return NewSortOrder(
        order_id=order.order_id if order.fields else 0,
        fields=tuple(
            SortFieldSpec(
                source=_source(names, f, what),
                transform=str(f.get("transform", "identity")),
                direction=f.get("direction", "asc"),
                null_order=f.get("null-order"),
            )
            for f in order.fields
        ),
    )


def create_table_command(namespace: str, request: CreateTableRequest) -> CreateTableCommand:
    """Return the command creating the table ``request`` asks for in schema ``namespace``.

    Raises:
        IcebergError: BadRequestException for what the catalog does not do: a staged
            creation, a property value of the catalog's own it cannot read, a
            spec or order naming no field, or a type with no counterpart.
        ValidationError: a name, column, transform, format version or location the catalog
            refuses (``catalog.data.locations``).
    """
    name = request.name
    if request.stage_create:
        raise bad_request(
            f"table {name}: this catalog creates tables at once; staged creation (a create "
            "transaction) is not supported"
        )
    schema = request.schema_
    own, others = split_properties(request.properties)
    format_version = others.pop(FORMAT_VERSION_PROPERTY, str(SERVED_FORMAT_VERSION))
    if format_version not in map(str, SERVED_FORMAT_VERSIONS):
        raise bad_request(f"table {name}: {SERVED_ONLY}, not {format_version!r}")
    names = source_paths(name, schema.fields)
    iceberg = IcebergTableSpec(
        format_version=int(format_version),
        partition_spec=None
        if request.partition_spec is None
        else new_spec(names, request.partition_spec),
        sort_order=None if request.write_order is None else new_order(names, request.write_order),
        properties=others,
        column_docs={f.name: f.doc for f in schema.fields if f.doc},
    )
    return table_command(namespace, name, schema, iceberg, own, location=request.location)


def table_command(
    namespace: str,
    name: str,
    schema: IcebergSchema,
    iceberg: IcebergTableSpec,
    own: Mapping[str, str],
    **more: object,
) -> CreateTableCommand:
    """Return the ``CREATE TABLE`` of an Iceberg schema, with its Iceberg state.

    Its fields become the columns, its identifier fields the key (none: a table without a
    key); ``own`` are the catalog's own properties, ``more`` further fields of the command.

    With ``column_ids`` among ``more`` (a register), the nested fields keep their ids too.

    Raises:
        IcebergError: BadRequestException for identifier fields that are not top-level
            fields, a repeated field id, a type with no counterpart, or a nested type
            object that cannot be read.
        ValidationError: a name or column the catalog refuses, or a field nested too deep.
    """
    by_id = {f.id: f for f in schema.fields}
    ids = all_field_ids(name, schema.fields)
    if len(set(ids)) != len(ids):
        raise bad_request(f"table {name}: the schema repeats a field id")
    refuse_nested_identifiers(name, schema.fields, schema.identifier_field_ids)
    missing = [i for i in schema.identifier_field_ids if i not in by_id]
    if missing:
        raise bad_request(
            f"table {name}: identifier field ids {', '.join(map(str, missing))} are not "
            "fields of the schema"
        )
    key = [by_id[i].name for i in schema.identifier_field_ids]
    keep_ids = "column_ids" in more
    return CreateTableCommand(
        **{
            "schema": namespace,
            "name": name,
            "columns": [column_of(name, f, keep_ids=keep_ids) for f in schema.fields],
            "primary_key": key,
            "keyless": not key,
            "iceberg": iceberg,
            **more,
            **property_fields(own),
        }
    )

"""Iceberg's nested types read back as the catalog's nested fields.

``api.iceberg.types`` serves a STRUCT, ARRAY or MAP column as Iceberg's nested type object;
this module reads one back. A struct's fields, a list's element (as the field ``element``)
and a map's key and value (``key``, always required, and ``value``) are all read as
``StructField``s (``children``), so one walk serves every nested type, as the catalog's
columns hold them (``catalog.descriptors.nested``). ``column_of`` makes the ``Column`` of a
field with its nested fields, their ids kept when asked (a register keeps every id).

An object is untrusted input: a missing member, a member of the wrong kind, or a field
nested deeper than the catalog's ``MAX_DEPTH`` is refused naming the field's path, before
anything deeper is read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pydantic

from api.iceberg.errors import bad_request, malformed
from api.iceberg.models import StructField
from api.iceberg.types import CatalogType, NoCounterpartError, catalog_type
from catalog.column_types import ColumnType
from catalog.commands.column_definitions import Column
from catalog.descriptors.nested import ELEMENT, KEY, VALUE, Path, check_shape, path_words


def field_type(table: str, field: StructField, path: Path = ()) -> CatalogType:
    """Return the catalog type of an Iceberg field (at ``path``, its own name by default).

    Raises:
        IcebergError: BadRequestException naming the table, the field and its type.
    """
    try:
        return catalog_type(field.type)
    except NoCounterpartError as e:
        raise bad_request(f"table {table}, field {path_words(path or (field.name,))}: {e}") from e


def children(table: str, field: StructField, path: Path) -> list[StructField]:
    """Return the fields a field's nested type holds, as struct fields; none for a primitive.

    Args:
        table: the table's name, for messages.
        field: the field, at ``path``.
        path: the field's path from its top-level column.

    Raises:
        IcebergError: BadRequestException for a type with no counterpart, or an object
            missing a member or holding one of the wrong kind.
        ValidationError: NESTED_TOO_DEEP, a field deeper than the catalog keeps; or a struct
            without fields or with a name twice.
    """
    kind = field_type(table, field, path).type
    body = field.type
    if not isinstance(body, dict):
        return []
    where = f"table {table}, field {path_words(path)}"
    if kind is ColumnType.ARRAY:
        fields = [
            _member_field(where, body, "element", ELEMENT, required_member="element-required")
        ]
    elif kind is ColumnType.MAP:
        fields = [
            _member_field(where, body, "key", KEY, required_member=None),
            _member_field(where, body, "value", VALUE, required_member="value-required"),
        ]
    else:
        listed = body.get("fields")
        if not isinstance(listed, list):
            raise bad_request(f"{where}: a struct type needs its fields (a list)")
        fields = [_struct_field(where, f) for f in listed]
    check_shape(path, kind, [f.name for f in fields], False)
    return fields


def _struct_field(where: str, item: object) -> StructField:
    try:
        return StructField.model_validate(item)
    except pydantic.ValidationError as e:
        raise malformed(f"{where}: a struct's field cannot be read", e) from e


def _member_field(
    where: str, body: dict[str, Any], member: str, name: str, *, required_member: str | None
) -> StructField:
    """Return a list's element or a map's key or value as the struct field ``name``."""
    field_id = body.get(f"{member}-id")
    if not isinstance(field_id, int) or isinstance(field_id, bool):
        raise bad_request(f"{where}: the {member} needs {member}-id (an integer)")
    if member not in body:
        raise bad_request(f"{where}: the type needs its {member}")
    required = True
    if required_member is not None:
        required = body.get(required_member, False)
        if not isinstance(required, bool):
            raise bad_request(f"{where}: {required_member} is true or false")
    try:
        return StructField(id=field_id, name=name, required=required, type=body[member])
    except pydantic.ValidationError as e:
        raise bad_request(f"{where}: the {member}'s type is a name or a nested type") from e


def walk_fields(
    table: str, fields: Sequence[StructField], prefix: Path = ()
) -> Iterator[tuple[Path, StructField]]:
    """Yield every field and nested field of ``fields`` with its path, each before its own.

    Raises:
        IcebergError: BadRequestException, as ``children``.
        ValidationError: as ``children``.
    """
    for field in fields:
        path = (*prefix, field.name)
        yield path, field
        yield from walk_fields(table, children(table, field, path), path)


def column_of(
    table: str, field: StructField, *, keep_ids: bool = False, prefix: Path = ()
) -> Column:
    """Return the column definition an Iceberg field stands for (required is NOT NULL).

    A nested type's fields become the column's ``fields``; with ``keep_ids``, each keeps the
    id the schema gives it (``Column.id``), else the catalog numbers them.

    Raises:
        IcebergError: BadRequestException when a type has no catalog counterpart or a nested
            type object cannot be read.
        ValidationError: a field's name is not a valid column name, or the field is nested
            too deep.
    """
    path = (*prefix, field.name)
    mapped = field_type(table, field, path)
    nested = tuple(
        column_of(table, f, keep_ids=keep_ids, prefix=path) for f in children(table, field, path)
    )
    return Column(
        name=field.name,
        type=mapped.type,
        nullable=not field.required,
        precision=mapped.precision,
        scale=mapped.scale,
        fields=nested,
        id=field.id if keep_ids and prefix else None,
    )


def nested_ids(table: str, fields: Sequence[StructField]) -> dict[int, Path]:
    """Return the path of every nested field (not the top-level ones), by id.

    Raises:
        IcebergError: BadRequestException, as ``children``.
        ValidationError: as ``children``.
    """
    return {f.id: path for path, f in walk_fields(table, fields) if len(path) > 1}


def all_field_ids(table: str, fields: Sequence[StructField]) -> list[int]:
    """Return the id of every field and nested field, in schema order (repeats kept).

    Raises:
        IcebergError: BadRequestException, as ``children``.
        ValidationError: as ``children``.
    """
    return [f.id for _, f in walk_fields(table, fields)]


def refuse_nested_identifiers(
    table: str, schema_fields: Sequence[StructField], ids: Sequence[int]
) -> None:
    """Refuse identifier fields that are nested fields, naming their paths.

    Raises:
        IcebergError: BadRequestException naming the first such field.
    """
    nested = nested_ids(table, schema_fields)
    for i in ids:
        if i in nested:
            raise bad_request(
                f"table {table}: identifier field {path_words(nested[i])} (id {i}) is a nested "
                "field; a table's identifier fields (its primary key) are top-level fields of "
                "plain types"
            )


def source_paths(table: str, fields: Sequence[StructField]) -> dict[int, Path]:
    """Return every field's path by id: what a partition or sort field's source-id names.

    Raises:
        IcebergError: BadRequestException, as ``children``.
        ValidationError: as ``children``.
    """
    return {f.id: path for path, f in walk_fields(table, fields)}

"""Evolution inside STRUCT, ARRAY and MAP columns: add, drop, rename, widen, make nullable.

The rules are the top-level columns' (``catalog.commands.columns``), applied to a field named
by its path, plus the shape's own: fields are added at the end of a struct; an array's
``element`` and a map's ``key`` and ``value`` keep their names and are dropped only with their
column; a struct keeps at least one field; a map's key never becomes nullable nor changes
type (its values are found by it). Each change is one entry as small as the change: the
added fields, or the changed field's header, never the whole column.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from catalog.column_types import ColumnType, check_widening
from catalog.commands.base import unique
from catalog.commands.column_definitions import (
    Column,
    changed_params,
    check_column_count,
    column_descriptors,
    rows_replaced,
)
from catalog.data.iceberg_table import check_columns_dropped
from catalog.descriptors import ColumnDescriptor, TableDescriptor
from catalog.descriptors.nested import (
    KEY,
    Held,
    Path,
    a_type,
    field_count,
    find_path,
    fixed_names,
    parents,
    path_words,
)
from catalog.entries import AlterNestedFieldEntry, EntryBase, NewNestedFieldsEntry
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError, ValidationError


def _not_found(table: TableDescriptor, path: Path) -> NotFoundError:
    return NotFoundError(
        f"field {path_words(path)} not found in table {table.name}",
        code=ErrorCode.COLUMN_NOT_FOUND,
    )


def _existing(table: TableDescriptor, path: Path) -> Held:
    """Return the nested field at ``path`` (two names or more) and what holds it."""
    parent = find_path(table.columns, path[:-1])
    found = None if parent is None else next((f for f in parent.fields if f.name == path[-1]), None)
    if parent is None or found is None:
        raise _not_found(table, path)
    return parent, found


def _struct(table: TableDescriptor, path: Path) -> ColumnDescriptor:
    found = find_path(table.columns, path)
    if found is None:
        raise _not_found(table, path)
    if found.type is not ColumnType.STRUCT:
        inner = {ColumnType.ARRAY: "element", ColumnType.MAP: "value"}.get(found.type)
        hint = f"; add fields to the struct it holds, {path_words(path)}.{inner}" if inner else ""
        raise ValidationError(
            f"field {path_words(path)} is {a_type(found.type)}, not a STRUCT: fields are added to "
            f"structs only{hint}",
            code=ErrorCode.UNSUPPORTED_CHANGE,
        )
    return found


def add_nested(
    table: TableDescriptor,
    parent_path: Path,
    columns: Sequence[Column],
    *,
    if_not_exists: bool,
    replaces_rows: bool,
) -> list[EntryBase]:
    """Return the entry adding ``columns`` at the end of the struct at ``parent_path``.

    Raises:
        NotFoundError: no field at that path.
        AlreadyExistsError: the struct has a field of that name (unless ``if_not_exists``).
        ValidationError: the path is not a struct, the table would have too many fields, a
            field would sit too deep, or a NOT NULL field for rows that have no value.
    """
    parent = _struct(table, parent_path)
    names = {f.name for f in parent.fields}
    added = [c for c in columns if not if_not_exists or c.name not in names]
    if not added:
        return []
    unique(tuple(c.name for c in added), f"field name in {path_words(parent_path)}")
    for c in added:
        where = path_words((*parent_path, c.name))
        if c.name in names:
            raise AlreadyExistsError(
                f"field {where} already exists in table {table.name}",
                code=ErrorCode.COLUMN_EXISTS,
            )
        if not c.nullable and not replaces_rows:
            raise ValidationError(
                f"field {where} must be nullable: the rows already written have no value for it",
                code=ErrorCode.UNSUPPORTED_CHANGE,
            )
        if c.id is not None or c.given_ids():
            raise ValidationError(f"field {where}: a field added to a struct takes the next ids")
    total = field_count(table.columns) + sum(c.field_count() for c in added)
    check_column_count(table.name, total)
    first = table.next_column_id
    numbers = range(first, first + len(added))
    fields, _ = column_descriptors(added, numbers, first + len(added), parent_path)
    entries: list[EntryBase] = [
        NewNestedFieldsEntry(table_id=table.id, parent_id=parent.id, fields=fields)
    ]
    if replaces_rows:
        entries.append(rows_replaced(table))
    return entries


def dropped_fields(
    table: TableDescriptor, paths: Sequence[Path], columns: Collection[str], *, if_exists: bool
) -> list[int]:
    """Return the ids of the nested fields at ``paths`` after checking they may be dropped.

    A field inside one of ``columns`` (dropped by the same command) or inside another of
    ``paths`` goes with it: it must exist (unless ``if_exists``), and is not returned.

    Raises:
        NotFoundError: no field at a path (unless ``if_exists``).
        ValidationError: an array's element or a map's key or value, or the last fields of a
            struct, or a field a partition field uses.
    """
    gone: dict[int, tuple[ColumnDescriptor, Path]] = {}
    held = parents(table.columns) if paths else {}
    given = set(paths)
    for path in paths:
        found = held.get(path)
        if found is None:
            if if_exists:
                continue
            raise _not_found(table, path)
        if path[0] in columns or any(path[:n] in given for n in range(2, len(path))):
            continue
        parent, field = found
        if parent.type is not ColumnType.STRUCT:
            raise ValidationError(
                f"cannot drop {path_words(path)}: the {field.name} of {a_type(parent.type)} goes "
                f"only with it; drop {path_words(path[:-1])} itself",
                code=ErrorCode.UNSUPPORTED_CHANGE,
            )
        gone[field.id] = (parent, path)
    by_parent: dict[int, int] = {}
    for parent, _ in gone.values():
        by_parent[parent.id] = by_parent.get(parent.id, 0) + 1
    for parent, path in gone.values():
        if by_parent[parent.id] == len(parent.fields):
            raise ValidationError(
                f"cannot drop every field of STRUCT {path_words(path[:-1])}; drop the struct "
                "itself",
                code=ErrorCode.UNSUPPORTED_CHANGE,
            )
    check_columns_dropped(
        table.iceberg, {i: path_words(p) for i, (_, p) in gone.items()}, table.name
    )
    return list(gone)


def renamed_field(table: TableDescriptor, path: Path, new_name: str) -> list[EntryBase]:
    """Return the entry renaming the nested field at ``path``; none if the name is the same.

    Raises:
        NotFoundError: no field at the path.
        AlreadyExistsError: a sibling has the new name.
        ValidationError: an array's element or a map's key or value (their names are fixed).
    """
    parent, field = _existing(table, path)
    if new_name == field.name:
        return []
    if fixed_names(parent.type) is not None:
        raise ValidationError(
            f"cannot rename {path_words(path)}: the fields of {a_type(parent.type)} keep their "
            "names",
            code=ErrorCode.UNSUPPORTED_CHANGE,
        )
    if any(f.name == new_name for f in parent.fields):
        raise AlreadyExistsError(
            f"field {path_words((*path[:-1], new_name))} already exists in table {table.name}",
            code=ErrorCode.COLUMN_EXISTS,
        )
    return [_header(table, field, name=new_name)]


def altered_field(
    table: TableDescriptor,
    path: Path,
    *,
    new_type: ColumnType | None,
    precision: int | None,
    scale: int | None,
    length: int | None,
    nullable: bool | None,
    replaces_rows: bool,
) -> list[EntryBase]:
    """Return the entry widening, or making nullable, the nested field at ``path``.

    Raises:
        NotFoundError: no field at the path.
        ValidationError: UNSUPPORTED_CHANGE for a narrowing, another type, NOT NULL on a field
            rows already have, or any change of a map's key.
    """
    parent, old = _existing(table, path)
    where = path_words(path)
    params = changed_params(old, new_type, precision, scale, length)
    becomes_nullable = old.nullable if nullable is None else nullable
    is_key = parent.type is ColumnType.MAP and old.name == KEY
    if is_key and (params != old.params or becomes_nullable):
        raise ValidationError(
            f"cannot change {where}: a map's key keeps its type and is never null",
            code=ErrorCode.UNSUPPORTED_CHANGE,
        )
    if params != old.params:
        try:
            check_widening(old.params, params)
        except ValidationError as e:
            raise ValidationError(f"field {where}: {e.message}", code=e.code) from e
    if not becomes_nullable and old.nullable and not replaces_rows:
        raise ValidationError(
            f"cannot set NOT NULL on existing field {where}", code=ErrorCode.UNSUPPORTED_CHANGE
        )
    new = old.model_copy(
        update={
            "type": params.type,
            "precision": params.precision,
            "scale": params.scale,
            "length": params.length,
            "nullable": becomes_nullable,
        }
    )
    return [] if new == old else [_header(table, new)]


def _header(
    table: TableDescriptor, field: ColumnDescriptor, *, name: str | None = None
) -> EntryBase:
    return AlterNestedFieldEntry(
        table_id=table.id,
        field_id=field.id,
        name=field.name if name is None else name,
        column_type=field.type,
        nullable=field.nullable,
        precision=field.precision,
        scale=field.scale,
        length=field.length,
    )

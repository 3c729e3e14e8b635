"""A new Iceberg schema for a table, as the catalog commands that make the table match it.

Fields are matched to columns by id, never by name: a field whose id is no current column's
is added, a column whose id has no field is dropped, and a field with a column's id renames
it, widens its type (``int`` to ``long``, ``float`` to ``double``, a decimal to more
precision) or makes it optional. The catalog appends new columns and gives them the next
column ids, so added fields must come last, with ids from ``last-column-id + 1`` on, as
Iceberg clients assign them. Columns cannot be reordered and the identifier fields (the
primary key) cannot change.

A replace of the table (``replaces``) removes every row of it, so it may also add required
fields, make optional ones required and bring back a dropped field by its id (an earlier
schema made current again): those commands say they replace the table's rows
(``replaces_rows``), and the table's rows count from their schema version on. Any other
commit adds a required field only with a default, never makes one required and never reuses
an id.
"""

from __future__ import annotations

from api.iceberg.errors import bad_request
from api.iceberg.models import IcebergSchema, StructField
from api.iceberg.types import CatalogType, NoCounterpartError, catalog_type, iceberg_type
from catalog.commands import CommandBase
from catalog.commands.columns import (
    AddColumnsCommand,
    AlterColumnCommand,
    Column,
    DropColumnsCommand,
    RenameColumnCommand,
)
from catalog.descriptors import ColumnDescriptor, TableDescriptor


def field_type(table: str, field: StructField) -> CatalogType:
    """Return the catalog type of an Iceberg field.

    Raises:
        IcebergError: BadRequestException naming the table, the field and its type.
    """
    try:
        return catalog_type(field.type)
    except NoCounterpartError as e:
        raise bad_request(f"table {table}, field {field.name}: {e}") from e


def column_of(table: str, field: StructField) -> Column:
    """Return the column definition an Iceberg field stands for (required is NOT NULL).

    Raises:
        IcebergError: BadRequestException when the field's type has no catalog counterpart.
        ValidationError: the field's name is not a valid column name.
    """
    mapped = field_type(table, field)
    return Column(
        name=field.name,
        type=mapped.type,
        nullable=not field.required,
        precision=mapped.precision,
        scale=mapped.scale,
    )


def _check_shape(table: TableDescriptor, schema: IcebergSchema, replace: bool) -> list[StructField]:
    """Check what the catalog cannot do; return the added fields, in the schema's order.

    Raises:
        IcebergError: BadRequestException for a changed key, a reorder or a reused id.
    """
    current = [c.id for c in table.columns]
    requested = [f.id for f in schema.fields]
    if len(set(requested)) != len(requested):
        raise bad_request(f"the new schema of table {table.name} repeats a field id")
    if sorted(schema.identifier_field_ids) != sorted(table.primary_key):
        key = ", ".join(table.column_names(table.primary_key))
        raise bad_request(
            f"the identifier fields of table {table.name} are its primary key ({key}) and "
            "cannot change"
        )
    known = set(current)
    added = [f for f in schema.fields if f.id not in known]
    reused = [f for f in added if f.id < table.next_column_id]
    if reused and not replace:
        raise bad_request(
            f"field {reused[0].name} of table {table.name} has id {reused[0].id}, given out "
            "before to a column since dropped; this catalog never reuses a column id (an "
            "earlier schema cannot be made current again once one of its columns is dropped)"
        )
    kept = [i for i in requested if i in known]
    if kept + [f.id for f in added] != requested or kept != [i for i in current if i in kept]:
        raise bad_request(
            f"this catalog cannot reorder the columns of table {table.name}: keep the "
            "existing fields in their order and add new ones at the end"
        )
    fresh = [f.id for f in added if f.id >= table.next_column_id]
    expected = list(range(table.next_column_id, table.next_column_id + len(fresh)))
    if fresh != expected:
        raise bad_request(
            f"new fields of table {table.name} take the ids after last-column-id "
            f"{table.next_column_id - 1} in order ({', '.join(map(str, expected))}); this "
            f"schema gives {', '.join(map(str, fresh))}"
        )
    return added


def _alteration(
    schema_name: str,
    table: TableDescriptor,
    column: ColumnDescriptor,
    field: StructField,
    replace: bool,
) -> AlterColumnCommand | None:
    """Return the command widening ``column`` or changing its nullability, if ``field`` asks it.

    A replace that makes the column required replaces the table's rows (``replaces_rows``).
    """
    wanted = field_type(table.name, field)
    served = catalog_type(iceberg_type(column))
    changes: dict[str, object] = {}
    if wanted != served:
        changes.update(type=wanted.type, precision=wanted.precision, scale=wanted.scale)
    if column.nullable == field.required:
        changes["nullable"] = not field.required
        if replace and field.required:
            changes["replaces_rows"] = True
    if not changes:
        return None
    return AlterColumnCommand(
        **{"schema": schema_name, "table": table.name, "column": field.name, **changes}
    )


def schema_commands(
    schema_name: str, table: TableDescriptor, schema: IcebergSchema, *, replace: bool = False
) -> list[CommandBase]:
    """Return the commands that give ``table`` the columns of ``schema``.

    Drops come first, then renames, then type and nullability changes (under the new
    names), then the added columns in one command, so the catalog gives them the ids the
    schema has. In a ``replace`` of the table, the commands that add required fields, make
    fields required or bring back a dropped field's id replace the table's rows
    (``replaces_rows``).

    Raises:
        IcebergError: BadRequestException for a change the catalog cannot make.
        ValidationError: a field whose name is not a valid column name.
    """
    added = _check_shape(table, schema, replace)
    fields = {f.id: f for f in schema.fields}
    target = {"schema": schema_name, "table": table.name}
    commands: list[CommandBase] = []
    dropped = [c.name for c in table.columns if c.id not in fields]
    if dropped:
        commands.append(DropColumnsCommand(**target, columns=dropped))
    kept = [(c, fields[c.id]) for c in table.columns if c.id in fields]
    commands += [
        RenameColumnCommand(**target, column=c.name, new_name=f.name)
        for c, f in kept
        if c.name != f.name
    ]
    for column, field in kept:
        altered = _alteration(schema_name, table, column, field, replace)
        if altered is not None:
            commands.append(altered)
    if added:
        columns = [column_of(table.name, f) for f in added]
        reuses = any(f.id < table.next_column_id for f in added)
        ids = [f.id for f in added] if reuses else []
        replaces = reuses or (replace and any(f.required for f in added))
        commands.append(
            AddColumnsCommand(**target, columns=columns, replaces_rows=replaces, column_ids=ids)
        )
    return commands

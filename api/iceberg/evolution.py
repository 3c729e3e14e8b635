"""A new Iceberg schema for a table, as the catalog commands that make the table match it.

Fields are matched to columns by id, never by name, at every depth: a field whose id is no
current column's or nested field's is added, a column or nested field whose id has no field is
dropped, and a field with a column's (or nested field's) id renames it, widens its type
(``int`` to ``long``, ``float`` to ``double``, a decimal to more precision) or makes it
optional. The catalog appends new columns at the end of the table and new fields at the end of
their struct, and gives them the next ids as Iceberg clients assign them (``nested_evolution``),
so added fields come last, with ids from ``last-column-id + 1`` on. Columns and fields cannot be
reordered nor moved to another struct, the identifier fields (the primary key) cannot change,
a struct, list or map stays one, a list's element and a map's key and value keep their ids,
and a map's key keeps its type.

A replace of the table (``replaces``) removes every row of it, so it may also add required
fields, make optional ones required and bring back a dropped column by its id (an earlier
schema made current again): those commands say they replace the table's rows
(``replaces_rows``), and the table's rows count from their schema version on. Any other
commit adds a required field only with a default (a top-level column), never makes one
required and never reuses an id.
"""

from __future__ import annotations

from api.iceberg.errors import bad_request
from api.iceberg.models import IcebergSchema, StructField
from api.iceberg.nested_evolution import (
    FieldTree,
    added_commands,
    check_kept,
    dropped_paths,
    refuse_reused,
    served_type,
)
from api.iceberg.nested_types import field_type, refuse_nested_identifiers
from catalog.commands import CommandBase
from catalog.commands.columns import AlterColumnCommand, DropColumnsCommand, RenameColumnCommand
from catalog.descriptors import ColumnDescriptor, TableDescriptor
from catalog.descriptors.nested import KEY, Path


def _check_key(table: TableDescriptor, schema: IcebergSchema) -> None:
    """Check that the identifier fields are the table's primary key.

    Raises:
        IcebergError: BadRequestException for a nested identifier field or a changed key.
    """
    refuse_nested_identifiers(table.name, schema.fields, schema.identifier_field_ids)
    if sorted(schema.identifier_field_ids) != sorted(table.primary_key):
        key = ", ".join(table.column_names(table.primary_key))
        raise bad_request(
            f"the identifier fields of table {table.name} are its primary key ({key}) and "
            "cannot change"
        )


def _check_order(table: TableDescriptor, schema: IcebergSchema) -> None:
    """Check that the top-level fields keep the columns' order, new ones at the end.

    Raises:
        IcebergError: BadRequestException for a reorder.
    """
    current = [c.id for c in table.columns]
    requested = [f.id for f in schema.fields]
    known = set(current)
    added = [i for i in requested if i not in known]
    kept = [i for i in requested if i in known]
    stays = set(kept)
    if kept + added != requested or kept != [i for i in current if i in stays]:
        raise bad_request(
            f"this catalog cannot reorder the columns of table {table.name}: keep the "
            "existing fields in their order and add new ones at the end"
        )


def _alteration(
    schema_name: str,
    table: TableDescriptor,
    column: ColumnDescriptor,
    field: StructField,
    path: Path,
    replace: bool,
) -> AlterColumnCommand | None:
    """Return the command widening a column or nested field, or changing its nullability.

    ``path`` is the field's path under its new names (renames come first). A replace that
    makes it required replaces the table's rows (``replaces_rows``).
    """
    wanted = field_type(table.name, field, path)
    changes: dict[str, object] = {}
    if wanted != served_type(column):
        changes.update(type=wanted.type, precision=wanted.precision, scale=wanted.scale)
    if column.nullable == field.required:
        changes["nullable"] = not field.required
        if replace and field.required:
            changes["replaces_rows"] = True
    if not changes:
        return None
    return AlterColumnCommand(
        **{
            "schema": schema_name,
            "table": table.name,
            "column": path[0],
            "path": path[1:],
            **changes,
        }
    )


def schema_commands(
    schema_name: str, table: TableDescriptor, schema: IcebergSchema, *, replace: bool = False
) -> list[CommandBase]:
    """Return the commands that give ``table`` the columns and nested fields of ``schema``.

    Drops come first (columns, and nested fields of structs that stay), then renames
    (outer fields before their own), then type and nullability changes (under the new
    names), then the added columns and fields, in the order of their ids, so the catalog
    gives them the ids the schema has. In a ``replace`` of the table, the commands that add
    required fields, make fields required or bring back a dropped column's id replace the
    table's rows (``replaces_rows``); its drops run last (``commits``), so they name nested
    fields under the new names of the fields holding them.

    Raises:
        IcebergError: BadRequestException for a change the catalog cannot make, naming the
            field's path.
        ValidationError: a field whose name is not a valid column name, or one nested too
            deep.
    """
    _check_key(table, schema)
    tree = FieldTree.of(table, schema)
    refuse_reused(tree, replace)
    _check_order(table, schema)
    check_kept(tree)
    target = {"schema": schema_name, "table": table.name}
    commands: list[CommandBase] = []
    dropped_columns = [c.name for c in table.columns if c.id not in tree.new]
    dropped_fields = dropped_paths(tree, after_renames=replace)
    if dropped_columns or dropped_fields:
        commands.append(
            DropColumnsCommand(**target, columns=dropped_columns, fields=dropped_fields)
        )
    kept = [(i, new) for i, new in tree.new.items() if i in tree.old]  # outer fields first
    for i, new in kept:
        old = tree.old[i]
        if old.column.name != new.field.name:
            where = (*new.path[:-1], old.column.name)
            rename = {"column": where[0], "path": where[1:], "new_name": new.field.name}
            commands.append(RenameColumnCommand(**target, **rename))
    for i, new in kept:
        old = tree.old[i]
        if old.parent is not None and tree.old[old.parent].is_map and old.column.name == KEY:
            continue  # a map's key never changes (``check_kept``)
        altered = _alteration(schema_name, table, old.column, new.field, new.path, replace)
        if altered is not None:
            commands.append(altered)
    return commands + added_commands(tree, target, replace)

"""Update entries for tables and their columns."""

from __future__ import annotations

from typing import Literal

from catalog.column_types import ColumnType
from catalog.data.iceberg_table import IcebergTableState
from catalog.descriptors import ColumnDescriptor, TableDescriptor
from catalog.descriptors.nested import all_ids, replaced
from catalog.entries.base import TABLES, ChangeEntry, PutEntry, RemoveEntry
from catalog.events import CatalogEvent


class NewTableEntry(PutEntry, event=CatalogEvent.TABLE_CREATE, kind=TABLES):
    """Add a table (its primary-key index comes as a separate ``NewIndexEntry``)."""

    type: Literal["new_table"] = "new_table"
    table: TableDescriptor


class DropTableEntry(RemoveEntry, event=CatalogEvent.TABLE_DROP, kind=TABLES):
    """Remove a table whose indexes were already removed."""

    type: Literal["drop_table"] = "drop_table"
    table_id: int


class _TableAlterEntry(ChangeEntry, event=CatalogEvent.TABLE_ALTER, kind=TABLES):
    table_id: int


class NewColumnsEntry(_TableAlterEntry):
    """Append columns (with ids already assigned) as a new schema version."""

    type: Literal["new_columns"] = "new_columns"
    columns: tuple[ColumnDescriptor, ...]

    def changed(self, table: TableDescriptor) -> TableDescriptor:  # noqa: D102
        next_id = max(table.next_column_id, *(i + 1 for i in all_ids(self.columns)))
        return table.with_columns((*table.columns, *self.columns), next_id)


class AlterColumnEntry(_TableAlterEntry):
    """Replace one column (matched by id) as a new schema version."""

    type: Literal["alter_column"] = "alter_column"
    column: ColumnDescriptor

    def changed(self, table: TableDescriptor) -> TableDescriptor:  # noqa: D102
        columns = tuple(self.column if c.id == self.column.id else c for c in table.columns)
        return table.with_columns(columns, table.next_column_id)


class DropColumnsEntry(_TableAlterEntry):
    """Remove columns, or nested fields at any depth, by id as a new schema version."""

    type: Literal["drop_columns"] = "drop_columns"
    column_ids: tuple[int, ...]

    def changed(self, table: TableDescriptor) -> TableDescriptor:  # noqa: D102
        gone = set(self.column_ids)
        columns = tuple(c for c in table.columns if c.id not in gone)
        nested = gone - {c.id for c in table.columns}
        if nested:
            columns = replaced(columns, dict.fromkeys(nested, _removed))
        return table.with_columns(columns, table.next_column_id)


def _removed(_: ColumnDescriptor) -> None:
    return None


class NewNestedFieldsEntry(_TableAlterEntry):
    """Append fields (ids assigned) to the end of one STRUCT, at any depth.

    A new schema version; the entry carries the new fields only, whatever the struct's size.
    """

    type: Literal["new_nested_fields"] = "new_nested_fields"
    parent_id: int
    fields: tuple[ColumnDescriptor, ...]

    def changed(self, table: TableDescriptor) -> TableDescriptor:  # noqa: D102
        added = self.fields
        columns = replaced(
            table.columns,
            {self.parent_id: lambda s: s.model_copy(update={"fields": (*s.fields, *added)})},
        )
        next_id = max(table.next_column_id, *(i + 1 for i in all_ids(added)))
        return table.with_columns(columns, next_id)


class AlterNestedFieldEntry(_TableAlterEntry):
    """Rename, widen or make nullable one nested field (matched by id), keeping its fields.

    A new schema version; the entry carries the field's header only.
    """

    type: Literal["alter_nested_field"] = "alter_nested_field"
    field_id: int
    name: str
    column_type: ColumnType
    nullable: bool
    precision: int | None
    scale: int | None
    length: int | None

    def changed(self, table: TableDescriptor) -> TableDescriptor:  # noqa: D102
        update = {
            "name": self.name,
            "type": self.column_type,
            "nullable": self.nullable,
            "precision": self.precision,
            "scale": self.scale,
            "length": self.length,
        }
        columns = replaced(table.columns, {self.field_id: lambda f: f.model_copy(update=update)})
        return table.with_columns(columns, table.next_column_id)


class RenameTableEntry(_TableAlterEntry):
    """Rename a table; its schema version stays."""

    type: Literal["rename_table"] = "rename_table"
    new_name: str

    def changed(self, table: TableDescriptor) -> TableDescriptor:  # noqa: D102
        return table.model_copy(update={"name": self.new_name})


class AlterTablePropertiesEntry(_TableAlterEntry):
    """Change a table's properties (None: unchanged); its schema version stays."""

    type: Literal["alter_table_properties"] = "alter_table_properties"
    stale_rows_fraction: float | None = None
    min_stale_rows_count: int | None = None

    def changed(self, table: TableDescriptor) -> TableDescriptor:  # noqa: D102
        changes: dict[str, float | int] = {}
        if self.stale_rows_fraction is not None:
            changes["stale_rows_fraction"] = self.stale_rows_fraction
        if self.min_stale_rows_count is not None:
            changes["min_stale_rows_count"] = self.min_stale_rows_count
        return table.model_copy(update=changes)


class SetTableIcebergEntry(_TableAlterEntry):
    """Replace a table's Iceberg state (specs, orders, properties); its schema version stays."""

    type: Literal["set_table_iceberg"] = "set_table_iceberg"
    iceberg: IcebergTableState

    def changed(self, table: TableDescriptor) -> TableDescriptor:  # noqa: D102
        return table.model_copy(update={"iceberg": self.iceberg})


class SetTableLocationEntry(_TableAlterEntry):
    """Move a table's location (Iceberg's ``set-location``); its schema version stays."""

    type: Literal["set_table_location"] = "set_table_location"
    location: str

    def changed(self, table: TableDescriptor) -> TableDescriptor:  # noqa: D102
        return table.model_copy(update={"location": self.location})

"""Update entries for tables and their columns."""

from __future__ import annotations

from typing import Literal

from catalog.data.iceberg_table import IcebergTableState
from catalog.descriptors import ColumnDescriptor, TableDescriptor
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
        next_id = max(table.next_column_id, *(c.id + 1 for c in self.columns))
        return table.with_columns((*table.columns, *self.columns), next_id)


class AlterColumnEntry(_TableAlterEntry):
    """Replace one column (matched by id) as a new schema version."""

    type: Literal["alter_column"] = "alter_column"
    column: ColumnDescriptor

    def changed(self, table: TableDescriptor) -> TableDescriptor:  # noqa: D102
        columns = tuple(self.column if c.id == self.column.id else c for c in table.columns)
        return table.with_columns(columns, table.next_column_id)


class DropColumnsEntry(_TableAlterEntry):
    """Remove columns by id as a new schema version."""

    type: Literal["drop_columns"] = "drop_columns"
    column_ids: tuple[int, ...]

    def changed(self, table: TableDescriptor) -> TableDescriptor:  # noqa: D102
        gone = set(self.column_ids)
        columns = tuple(c for c in table.columns if c.id not in gone)
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

"""Column definitions and the commands that change a table's columns."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from catalog.column_types import (
    ColumnType,
    DefaultValue,
    check_default_function,
    check_widening,
    functional_default_refused,
    normalize_default,
)
from catalog.commands.base import Name, TableCommand, UpdateContext, unique
from catalog.commands.column_definitions import (
    Column,
    changed_params,
    check_column_count,
    column_descriptors,
    rows_replaced,
)
from catalog.commands.nested_columns import (
    add_nested,
    altered_field,
    dropped_fields,
    renamed_field,
)
from catalog.data.iceberg_table import check_columns_dropped
from catalog.descriptors import ColumnDescriptor, TableDescriptor
from catalog.descriptors.nested import all_ids, field_count, path_words
from catalog.descriptors.schemas import PUBLIC_SCHEMA
from catalog.entries import (
    AlterColumnEntry,
    DropColumnsEntry,
    EntryBase,
    NewColumnsEntry,
)
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError, ValidationError


def _column(table: TableDescriptor, name: str) -> ColumnDescriptor:
    column = table.column(name)
    if column is None:
        raise NotFoundError(
            f"column {name} not found in table {table.name}", code=ErrorCode.COLUMN_NOT_FOUND
        )
    return column


class AddColumnsCommand(TableCommand):
    """``ALTER TABLE ... ADD COLUMN``: append columns; a NOT NULL one needs a constant default.

    With ``if_not_exists``, columns that already exist are skipped; with ``if_table_exists``,
    a missing table is no error (both as in Ignite). With ``replaces_rows`` (a replace of the
    table's rows), a NOT NULL column needs no default, and a column may take back the id of
    one the table dropped (``column_ids``, as an Iceberg schema made current again asks):
    no row of the table predates it.
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("replaces_rows", "column_ids", "parent")
    """Fields appended to the stored form after its first format; older payloads lack them."""

    op: Literal["add_columns"] = "add_columns"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    table: Name
    columns: tuple[Column, ...] = Field(min_length=1)
    if_not_exists: bool = False
    if_table_exists: bool = False
    replaces_rows: bool = Field(default=False, exclude_if=lambda v: not v)
    """The columns come with a replace of the table's rows (an Iceberg ``REPLACE TABLE``,
    whose data commit removes every earlier file): the table's rows count from the schema
    version this command makes (``IcebergTableState.rows_from``). Left out of the stored
    command when False, so a command without it is stored as before."""
    column_ids: tuple[Annotated[int, Field(ge=0, le=2**31 - 1)], ...] = Field(
        default=(), exclude_if=lambda v: not v
    )
    """The columns' ids, one per column, in order: each a new one or one of a column the
    table dropped; only with ``replaces_rows``. Empty: the next ids (and left out of the
    stored command)."""
    parent: tuple[Name, ...] = Field(default=(), exclude_if=lambda v: not v)
    """The path of the STRUCT the columns are added to, as fields at its end
    (``catalog.commands.nested_columns``); empty: they are the table's own columns."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        unique(tuple(c.name for c in self.columns), "column name")
        for c in self.columns:
            if c.default_function is not None:
                raise functional_default_refused(c.name)
            if self.parent and c.default is not None:
                raise ValidationError(f"field {c.name}: a nested field takes no default")
            if not c.nullable and c.default is None and not self.replaces_rows and not self.parent:
                raise ValidationError(f"NOT NULL column {c.name} needs a default value")
        if self.parent and self.column_ids:
            raise ValidationError("column_ids are given only for the table's own columns")
        if not self.replaces_rows and any(c.given_ids() for c in self.columns):
            raise ValidationError(
                "a nested field's id is given only with replaces_rows: a dropped field's id "
                "comes back only when no row of the table predates it"
            )
        if self.column_ids:
            if not self.replaces_rows or self.if_not_exists:
                raise ValidationError(
                    "column_ids are given only with replaces_rows and without if_not_exists: "
                    "a dropped column's id comes back only when no row of the table predates it"
                )
            if len(self.column_ids) != len(self.columns):
                raise ValidationError(
                    f"column_ids gives {len(self.column_ids)} ids for {len(self.columns)} columns"
                )
            unique(tuple(str(i) for i in self.column_ids), "column id")
        return self

    def entries_for(self, ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:  # noqa: D102
        if self.parent:
            return add_nested(
                table,
                self.parent,
                self.columns,
                if_not_exists=self.if_not_exists,
                replaces_rows=self.replaces_rows,
            )
        added = [c for c in self.columns if not self.if_not_exists or table.column(c.name) is None]
        if not added:
            return []
        for c in added:
            if table.column(c.name) is not None:
                raise AlreadyExistsError(
                    f"column {c.name} already exists in table {table.name}",
                    code=ErrorCode.COLUMN_EXISTS,
                )
        added_fields = sum(c.field_count() for c in added)
        check_column_count(table.name, field_count(table.columns) + added_fields)
        first = table.next_column_id
        ids = self.column_ids or tuple(range(first, first + len(added)))
        taken = [i for i in ids if i in {c.id for c in table.columns}]
        if taken:
            raise AlreadyExistsError(
                f"column id {taken[0]} is a current column's in table {table.name}",
                code=ErrorCode.COLUMN_EXISTS,
            )
        columns, _ = column_descriptors(added, ids, max(first + len(added), max(ids) + 1))
        if len(all_ids(columns)) != added_fields:
            raise ValidationError(f"table {table.name}: two new columns or fields share an id")
        taken_nested = all_ids(columns) & all_ids(table.columns)
        if taken_nested:
            raise AlreadyExistsError(
                f"field id {min(taken_nested)} is a current field's in table {table.name}",
                code=ErrorCode.COLUMN_EXISTS,
            )
        entries: list[EntryBase] = [NewColumnsEntry(table_id=table.id, columns=columns)]
        if self.replaces_rows:
            entries.append(rows_replaced(table))
        return entries


class DropColumnsCommand(TableCommand):
    """``ALTER TABLE ... DROP COLUMN``: not a key column, not in an alive index, not all.

    With ``if_exists``, columns that do not exist are skipped; with ``if_table_exists``, a
    missing table is no error (both as in Ignite).
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("fields",)
    """Fields appended to the stored form after its first format; older payloads lack them."""

    op: Literal["drop_columns"] = "drop_columns"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    table: Name
    columns: tuple[Name, ...] = ()
    if_exists: bool = False
    if_table_exists: bool = False
    fields: tuple[Annotated[tuple[Name, ...], Field(min_length=2)], ...] = Field(
        default=(), exclude_if=lambda v: not v
    )
    """Paths of nested fields to drop (``("PAYLOAD", "SOURCE")``); left out of the stored
    command when empty."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if not self.columns and not self.fields:
            raise ValidationError("columns: name at least one column, or a nested field in fields")
        unique(self.columns, "column name")
        if len(set(self.fields)) != len(self.fields):
            twice = next(p for p in self.fields if self.fields.count(p) > 1)
            raise ValidationError(f"field path {path_words(twice)} is given twice")
        return self

    def entries_for(self, ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:  # noqa: D102
        names = [n for n in self.columns if not self.if_exists or table.column(n) is not None]
        dropped = [_column(table, name) for name in names]
        nested = dropped_fields(table, self.fields, names, if_exists=self.if_exists)
        if not dropped and not nested:
            return []
        indexed: dict[int, list[str]] = {}
        for index in ctx.catalog.table_indexes(table.id):
            if index.is_alive:
                for column_id in index.column_ids:
                    indexed.setdefault(column_id, []).append(index.name)
        for c in dropped:
            if c.id in table.primary_key:
                raise ValidationError(f"cannot drop primary-key column {c.name}")
            if c.id in indexed:
                users = ", ".join(indexed[c.id])
                raise ValidationError(
                    f"cannot drop column {c.name}: an index uses it ({users}); drop the index first"
                )
        if len(dropped) == len(table.columns):
            raise ValidationError(f"cannot drop every column of table {table.name}")
        check_columns_dropped(table.iceberg, {c.id: c.name for c in dropped}, table.name)
        ids = (*(c.id for c in dropped), *nested)
        return [DropColumnsEntry(table_id=table.id, column_ids=ids)]


class AlterColumnCommand(TableCommand):
    """``ALTER TABLE ... ALTER COLUMN``: widen the type, DROP NOT NULL, or set the default.

    Fields left out are unchanged. ``default`` given as null drops the default (a constant
    or a function); ``default_function`` (primary-key columns only) replaces a constant. With
    ``if_table_exists``, a missing table is no error. With ``replaces_rows`` (a replace of
    the table's rows), the column may also become NOT NULL: no row of the table predates it.
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("replaces_rows", "path")
    """Fields appended to the stored form after its first format; older payloads lack them."""

    op: Literal["alter_column"] = "alter_column"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    table: Name
    column: Name
    if_table_exists: bool = False
    type: ColumnType | None = None
    precision: int | None = None
    scale: int | None = None
    length: int | None = None
    nullable: bool | None = None
    default: DefaultValue | None = None
    default_function: str | None = None
    replaces_rows: bool = Field(default=False, exclude_if=lambda v: not v)
    """The change comes with a replace of the table's rows, as ``AddColumnsCommand``'s."""
    path: tuple[Name, ...] = Field(default=(), exclude_if=lambda v: not v)
    """The nested field of ``column`` to change, by the rest of its path (``("SOURCE",)`` for
    ``PAYLOAD.SOURCE``); empty: the column itself. A nested field takes no default."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # An absent ``default`` keeps the column's default and a null one drops it, so the
        # dumped (and stored) shape must keep that difference for ``parse`` to read it back.
        data: dict[str, Any] = handler(self)
        if "default" not in self.model_fields_set:
            data.pop("default", None)
        return data

    def entries_for(self, ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:  # noqa: D102
        if self.path:
            if "default" in self.model_fields_set or self.default_function is not None:
                where = path_words((self.column, *self.path))
                raise ValidationError(f"field {where}: a nested field takes no default")
            changed = altered_field(
                table,
                (self.column, *self.path),
                new_type=self.type,
                precision=self.precision,
                scale=self.scale,
                length=self.length,
                nullable=self.nullable,
                replaces_rows=self.replaces_rows,
            )
            return [*changed, rows_replaced(table)] if changed and self.replaces_rows else changed
        old = _column(table, self.column)
        params = changed_params(old, self.type, self.precision, self.scale, self.length)
        is_key = old.id in table.primary_key
        if params != old.params:
            if is_key:
                raise ValidationError(
                    f"cannot change the type of primary-key column {old.name}",
                    code=ErrorCode.UNSUPPORTED_CHANGE,
                )
            try:
                check_widening(old.params, params)
            except ValidationError as e:
                raise ValidationError(f"column {old.name}: {e.message}", code=e.code) from e
        nullable = old.nullable if self.nullable is None else self.nullable
        if nullable and not old.nullable and is_key:
            raise ValidationError(
                f"cannot drop NOT NULL of primary-key column {old.name}",
                code=ErrorCode.UNSUPPORTED_CHANGE,
            )
        if not nullable and old.nullable and not self.replaces_rows:
            raise ValidationError(
                f"cannot set NOT NULL on existing column {old.name}",
                code=ErrorCode.UNSUPPORTED_CHANGE,
            )
        default = self.default if "default" in self.model_fields_set else old.default
        if default is not None:
            default = normalize_default(params, default)
        function = None if "default" in self.model_fields_set else old.default_function
        if self.default_function is not None:
            if not is_key:
                raise functional_default_refused(old.name)
            if "default" in self.model_fields_set and self.default is not None:
                raise ValidationError(
                    f"column {old.name}: give a default or a default function, not both"
                )
            function = self.default_function
            default = None
        if function is not None:
            function = check_default_function(old.name, params.type, function)
        new = old.model_copy(
            update={
                "type": params.type,
                "precision": params.precision,
                "scale": params.scale,
                "length": params.length,
                "nullable": nullable,
                "default": default,
                "default_function": function,
            }
        )
        if new == old:
            return []
        entries: list[EntryBase] = [AlterColumnEntry(table_id=table.id, column=new)]
        if self.replaces_rows:
            entries.append(rows_replaced(table))
        return entries


class RenameColumnCommand(TableCommand):
    """``ALTER TABLE ... RENAME COLUMN ... TO``: a new name, the same column id.

    Data written under the old name keeps reading under the new one (files carry column ids).
    The table gets a new schema version. With ``if_table_exists``, a missing table is no error.
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("path",)
    """Fields appended to the stored form after its first format; older payloads lack them."""

    op: Literal["rename_column"] = "rename_column"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    table: Name
    column: Name
    new_name: Name
    if_table_exists: bool = False
    path: tuple[Name, ...] = Field(default=(), exclude_if=lambda v: not v)
    """The nested field of ``column`` to rename, by the rest of its path; empty: the column."""

    def entries_for(self, ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:  # noqa: D102
        if self.path:
            return renamed_field(table, (self.column, *self.path), self.new_name)
        old = _column(table, self.column)
        if self.new_name == old.name:
            return []
        if table.column(self.new_name) is not None:
            raise AlreadyExistsError(
                f"column {self.new_name} already exists in table {table.name}",
                code=ErrorCode.COLUMN_EXISTS,
            )
        renamed = old.model_copy(update={"name": self.new_name})
        return [AlterColumnEntry(table_id=table.id, column=renamed)]

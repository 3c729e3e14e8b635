"""Column definitions and the commands that change a table's columns."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from catalog.column_types import (
    NESTED_TYPES,
    ColumnType,
    DefaultValue,
    check_default_function,
    check_widening,
    functional_default_refused,
    normalize_default,
    resolve_params,
)
from catalog.commands.base import Name, TableCommand, UpdateContext, unique
from catalog.data.iceberg_table import IcebergTableState, check_columns_dropped
from catalog.descriptors import ColumnDescriptor, TableDescriptor
from catalog.descriptors.nested import Path, check_shape
from catalog.descriptors.schemas import PUBLIC_SCHEMA
from catalog.descriptors.tables import shared_column
from catalog.entries import (
    AlterColumnEntry,
    DropColumnsEntry,
    EntryBase,
    NewColumnsEntry,
    SetTableIcebergEntry,
)
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError, ValidationError
from catalog.model import Model

MAX_COLUMNS = 4096
"""The most columns a table holds. Every answer and event about a table carries its columns,
and every node keeps them in memory, so one table must not grow without bound; 4,096 is the
limit of MySQL and about twice SQL Server's and PostgreSQL's, beyond what wide analytic tables
use."""


def check_column_count(table: str, count: int) -> None:
    """Refuse a table of more than ``MAX_COLUMNS`` columns.

    Raises:
        ValidationError: TOO_MANY_COLUMNS.
    """
    if count > MAX_COLUMNS:
        raise ValidationError(
            f"table {table} would have {count} columns; a table holds at most {MAX_COLUMNS}",
            code=ErrorCode.TOO_MANY_COLUMNS,
        )


class Column(Model):
    """A column definition as users write it; parameters left out get the type's defaults.

    A ``STRUCT``, ``ARRAY`` or ``MAP`` column gives its ``fields`` (``catalog.descriptors.nested``:
    an array's ``element``, a map's ``key`` and ``value``), each a ``Column`` that takes no
    default. A nested field's ``id`` is given only where an Iceberg schema's ids are kept (a
    registered table, a schema made current again); otherwise each field takes the next id.
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("fields", "id")
    """Fields appended to the stored form after its first format; older payloads lack them."""

    name: Name
    type: ColumnType
    nullable: bool = True
    precision: int | None = None
    scale: int | None = None
    length: int | None = None
    default: DefaultValue | None = None
    default_function: str | None = None
    fields: tuple[Column, ...] = Field(default=(), exclude_if=lambda v: not v)
    id: int | None = Field(default=None, ge=0, le=2**31 - 1, exclude_if=lambda v: v is None)

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.default is not None and self.default_function is not None:
            raise ValidationError(
                f"column {self.name} has a default and a default function; give one"
            )
        key = self.fields[0].nullable if self.type is ColumnType.MAP and self.fields else False
        check_shape((self.name,), self.type, [f.name for f in self.fields], key)
        for f in self.fields:
            if f.default is not None or f.default_function is not None:
                raise ValidationError(
                    f"field {self.name}.{f.name}: a nested field takes no default"
                )
        self._own_descriptor(0, ())
        return self

    def field_count(self) -> int:
        """Return how many columns this is: itself and every nested field."""
        return 1 + sum(f.field_count() for f in self.fields)

    def given_ids(self) -> list[int]:
        """Return the ids given to nested fields, at any depth."""
        return [i for f in self.fields for i in ([] if f.id is None else [f.id]) + f.given_ids()]

    def to_descriptor(
        self, column_id: int, ids: Iterator[int] | None = None, prefix: Path = ()
    ) -> ColumnDescriptor:
        """Return the stored column with id ``column_id``, parameters and default resolved.

        Nested fields without an ``id`` take theirs from ``ids`` (a struct's own fields
        first, then theirs, as Iceberg numbers them); ``prefix`` is the path of the struct,
        array or map this column is a field of, for messages.

        Raises:
            ValidationError: bad parameters, a default that does not fit the type, or a field
                nested deeper than ``MAX_DEPTH``.
        """
        path = (*prefix, self.name)
        fields: tuple[ColumnDescriptor, ...] = ()
        if self.fields:
            key = self.fields[0].nullable if self.type is ColumnType.MAP else False
            check_shape(path, self.type, [f.name for f in self.fields], key)
            fresh = ids if ids is not None else itertools.count(column_id + 1)
            numbers = [next(fresh) if f.id is None else f.id for f in self.fields]
            fields = tuple(
                f.to_descriptor(i, fresh, path) for i, f in zip(numbers, self.fields, strict=True)
            )
        else:
            check_shape(path, self.type, (), False)
        return self._own_descriptor(column_id, fields)

    def _own_descriptor(
        self, column_id: int, fields: tuple[ColumnDescriptor, ...]
    ) -> ColumnDescriptor:
        params = resolve_params(self.type, self.precision, self.scale, self.length)
        default = None if self.default is None else normalize_default(params, self.default)
        function = self.default_function
        if function is not None:
            function = check_default_function(self.name, self.type, function)
        return shared_column(
            id=column_id,
            name=self.name,
            type=self.type,
            nullable=self.nullable,
            precision=params.precision,
            scale=params.scale,
            length=params.length,
            default=default,
            default_function=function,
            fields=fields,
        )


def column_descriptors(
    columns: Sequence[Column], numbers: Sequence[int], next_id: int, prefix: Path = ()
) -> tuple[tuple[ColumnDescriptor, ...], int]:
    """Return the stored columns with ids ``numbers``, and the next id no field has.

    Nested fields without an id of their own are numbered from ``next_id`` (or past the
    largest id given, if larger), after every column of this level has its id.
    """
    given = [i for c in columns for i in c.given_ids()]
    fresh = itertools.count(max(next_id, *(i + 1 for i in given)) if given else next_id)
    stored = tuple(c.to_descriptor(i, fresh, prefix) for i, c in zip(numbers, columns, strict=True))
    return stored, next(fresh)


def check_not_nested(column: ColumnDescriptor | Column, what: str) -> None:
    """Refuse a STRUCT, ARRAY or MAP column where only a plain value can serve.

    Raises:
        ValidationError: UNSUPPORTED_CHANGE naming ``what`` (a key, an index, ...).
    """
    if column.type in NESTED_TYPES:
        raise ValidationError(
            f"column {column.name} is a {column.type}; {what} takes only columns of plain "
            "values (not STRUCT, ARRAY or MAP)",
            code=ErrorCode.UNSUPPORTED_CHANGE,
        )


def _rows_replaced(table: TableDescriptor) -> SetTableIcebergEntry:
    """Return the entry making the table's rows count from its next schema version on.

    ``table`` is the table before the command's own schema version: the rows of every file
    written with an earlier one are gone.
    """
    state = table.iceberg or IcebergTableState()
    return SetTableIcebergEntry(
        table_id=table.id, iceberg=state.model_copy(update={"rows_from": table.schema_version + 1})
    )


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

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("replaces_rows", "column_ids")
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

    @model_validator(mode="after")
    def _check(self) -> Self:
        unique(tuple(c.name for c in self.columns), "column name")
        for c in self.columns:
            if c.default_function is not None:
                raise functional_default_refused(c.name)
            if not c.nullable and c.default is None and not self.replaces_rows:
                raise ValidationError(f"NOT NULL column {c.name} needs a default value")
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
        added = [c for c in self.columns if not self.if_not_exists or table.column(c.name) is None]
        if not added:
            return []
        for c in added:
            if table.column(c.name) is not None:
                raise AlreadyExistsError(
                    f"column {c.name} already exists in table {table.name}",
                    code=ErrorCode.COLUMN_EXISTS,
                )
        check_column_count(table.name, len(table.columns) + len(added))
        first = table.next_column_id
        ids = self.column_ids or tuple(range(first, first + len(added)))
        taken = [i for i in ids if i in {c.id for c in table.columns}]
        if taken:
            raise AlreadyExistsError(
                f"column id {taken[0]} is a current column's in table {table.name}",
                code=ErrorCode.COLUMN_EXISTS,
            )
        columns = tuple(c.to_descriptor(i) for i, c in zip(ids, added, strict=True))
        entries: list[EntryBase] = [NewColumnsEntry(table_id=table.id, columns=columns)]
        if self.replaces_rows:
            entries.append(_rows_replaced(table))
        return entries


class DropColumnsCommand(TableCommand):
    """``ALTER TABLE ... DROP COLUMN``: not a key column, not in an alive index, not all.

    With ``if_exists``, columns that do not exist are skipped; with ``if_table_exists``, a
    missing table is no error (both as in Ignite).
    """

    op: Literal["drop_columns"] = "drop_columns"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    table: Name
    columns: tuple[Name, ...] = Field(min_length=1)
    if_exists: bool = False
    if_table_exists: bool = False

    @model_validator(mode="after")
    def _check(self) -> Self:
        unique(self.columns, "column name")
        return self

    def entries_for(self, ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:  # noqa: D102
        names = [n for n in self.columns if not self.if_exists or table.column(n) is not None]
        if not names:
            return []
        dropped = [_column(table, name) for name in names]
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
        return [DropColumnsEntry(table_id=table.id, column_ids=tuple(c.id for c in dropped))]


class AlterColumnCommand(TableCommand):
    """``ALTER TABLE ... ALTER COLUMN``: widen the type, DROP NOT NULL, or set the default.

    Fields left out are unchanged. ``default`` given as null drops the default (a constant
    or a function); ``default_function`` (primary-key columns only) replaces a constant. With
    ``if_table_exists``, a missing table is no error. With ``replaces_rows`` (a replace of
    the table's rows), the column may also become NOT NULL: no row of the table predates it.
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("replaces_rows",)
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

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # An absent ``default`` keeps the column's default and a null one drops it, so the
        # dumped (and stored) shape must keep that difference for ``parse`` to read it back.
        data: dict[str, Any] = handler(self)
        if "default" not in self.model_fields_set:
            data.pop("default", None)
        return data

    def entries_for(self, ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:  # noqa: D102
        old = _column(table, self.column)
        new_type = self.type or old.type
        same_type = new_type is old.type
        params = resolve_params(
            new_type,
            self.precision
            if self.precision is not None
            else (old.precision if same_type else None),
            self.scale if self.scale is not None else (old.scale if same_type else None),
            self.length if self.length is not None else (old.length if same_type else None),
        )
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
            entries.append(_rows_replaced(table))
        return entries


class RenameColumnCommand(TableCommand):
    """``ALTER TABLE ... RENAME COLUMN ... TO``: a new name, the same column id.

    Data written under the old name keeps reading under the new one (files carry column ids).
    The table gets a new schema version. With ``if_table_exists``, a missing table is no error.
    """

    op: Literal["rename_column"] = "rename_column"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    table: Name
    column: Name
    new_name: Name
    if_table_exists: bool = False

    def entries_for(self, ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:  # noqa: D102
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

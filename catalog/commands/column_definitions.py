"""Column definitions as users write them, and how they become stored columns."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Self

from pydantic import Field, model_validator

from catalog.column_types import (
    NESTED_TYPES,
    ColumnType,
    DefaultValue,
    TypeParams,
    check_default_function,
    normalize_default,
    resolve_params,
)
from catalog.commands.base import Name
from catalog.data.iceberg_table import IcebergTableState
from catalog.descriptors import ColumnDescriptor, TableDescriptor
from catalog.descriptors.nested import MAX_DEPTH, Path, a_type, check_shape
from catalog.descriptors.tables import shared_column
from catalog.entries import SetTableIcebergEntry
from catalog.errors import ErrorCode, ValidationError
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

    @model_validator(mode="before")
    @classmethod
    def _shallow_enough(cls, data: Any) -> Any:
        # Measured on the raw input, before any field is validated: a definition nested
        # hundreds deep must be refused in words, not by running out of stack.
        level, depth = [data], 0
        while level:
            depth += 1
            if depth > MAX_DEPTH:
                raise ValidationError(
                    f"column {_name_of(data)}: fields are nested more than {MAX_DEPTH} levels deep",
                    code=ErrorCode.NESTED_TOO_DEEP,
                )
            level = [
                f
                for d in level
                if isinstance(d, dict) and isinstance(d.get("fields"), list | tuple)
                for f in d["fields"]
            ]
        return data

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
        self._resolved()
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

    def _resolved(self) -> tuple[TypeParams, DefaultValue | None, str | None]:
        """Return the type with its parameters, the default and the default function, checked."""
        params = resolve_params(self.type, self.precision, self.scale, self.length)
        default = None if self.default is None else normalize_default(params, self.default)
        function = self.default_function
        if function is not None:
            function = check_default_function(self.name, self.type, function)
        return params, default, function

    def _own_descriptor(
        self, column_id: int, fields: tuple[ColumnDescriptor, ...]
    ) -> ColumnDescriptor:
        params, default, function = self._resolved()
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


def _name_of(data: Any) -> str:
    name = data.get("name") if isinstance(data, dict) else getattr(data, "name", None)
    return str(name)[:128] if name is not None else "(unnamed)"


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
            f"column {column.name} is {a_type(column.type)}; {what} takes only columns of plain "
            "values (not STRUCT, ARRAY or MAP)",
            code=ErrorCode.UNSUPPORTED_CHANGE,
        )


def changed_params(
    old: ColumnDescriptor,
    new_type: ColumnType | None,
    precision: int | None,
    scale: int | None,
    length: int | None,
) -> TypeParams:
    """Return the type an ALTER asks for.

    Parameters left out keep the column's if its type stays, or take the new type's defaults.

    Raises:
        ValidationError: bad parameters for the type.
    """
    ctype = new_type or old.type
    same = ctype is old.type
    return resolve_params(
        ctype,
        precision if precision is not None else (old.precision if same else None),
        scale if scale is not None else (old.scale if same else None),
        length if length is not None else (old.length if same else None),
    )


def rows_replaced(table: TableDescriptor) -> SetTableIcebergEntry:
    """Return the entry making the table's rows count from its next schema version on.

    ``table`` is the table before the command's own schema version: the rows of every file
    written with an earlier one are gone.
    """
    state = table.iceberg or IcebergTableState()
    return SetTableIcebergEntry(
        table_id=table.id, iceberg=state.model_copy(update={"rows_from": table.schema_version + 1})
    )

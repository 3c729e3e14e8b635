"""Values of nested columns taken apart and built again, field by field: ``Reshape``.

A STRUCT, ARRAY or MAP value is rebuilt from the values of its fields: a struct's fields are
found in the given values by a rule of the caller's (a file's by field id, a DataFrame's by
name), an array's element and a map's key and value by their place. Each field is rebuilt in
turn (its plain values by the caller's ``leaf``), and the value is put together again in the
Arrow type the caller asks for, with its nulls where they were. A struct's field read where the
struct is null reads as null (``StructArray.flatten``), and an array's or a map's items are
those of its non-null values only, so a check of a field sees exactly the values it holds.
"""

from __future__ import annotations

import decimal
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable

import numpy as np
import pyarrow as pa

from catalog.column_types import NESTED_TYPES, ColumnType
from catalog.descriptors import ColumnDescriptor
from catalog.descriptors.nested import Path
from spark.types import FIELD_ID, arrow_field, arrow_type


def field_ids(fields: Iterable[pa.Field]) -> dict[int, int]:
    """Return, per Parquet field id among ``fields``, the field's position."""
    found: dict[int, int] = {}
    for i, field in enumerate(fields):
        metadata = field.metadata or {}
        if FIELD_ID in metadata:
            found[int(metadata[FIELD_ID])] = i
    return found


def struct_fields_of(kind: pa.DataType) -> list[pa.Field]:
    """Return the fields of an Arrow struct type, in order."""
    return [kind.field(i) for i in range(kind.num_fields)]


def _items(values: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Return an array's or a map's offsets (from 0) and the items of its non-null values.

    The items are taken by position (``list_flatten`` builds no extension type, such as
    Iceberg's ``uuid``): without a copy when no null value spans items of its own.
    """
    kind = values.type
    if pa.types.is_map(kind):
        values = values.view(pa.list_(kind.field(0)))  # a map is a list of key-value structs
    bounds = values.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    spans = np.diff(bounds)
    lengths = np.where(values.is_valid().to_numpy(zero_copy_only=False), spans, 0)
    offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths)])
    child = values.values
    if np.array_equal(lengths, spans):
        items = child.slice(int(bounds[0]), int(bounds[-1] - bounds[0]))
    else:
        moved = np.repeat(bounds[:-1] - offsets[:-1], lengths)
        items = child.take(pa.array(moved + np.arange(int(offsets[-1]), dtype=np.int64)))
    return pa.array(offsets, pa.int32()), items


def _mask(values: pa.Array) -> pa.Array | None:
    return values.is_null() if values.null_count else None


def _zero(column: ColumnDescriptor, kind: pa.DataType) -> pa.Scalar:
    """Return a value of plain Arrow type ``kind`` that stands in where none is read."""
    if isinstance(kind, pa.BaseExtensionType):  # Iceberg's uuid: 16 bytes
        return pa.ExtensionScalar.from_storage(kind, bytes(kind.storage_type.byte_width))
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return pa.scalar(str(uuid.UUID(int=0)) if column.type is ColumnType.UUID else "", kind)
    if pa.types.is_fixed_size_binary(kind):
        return pa.scalar(bytes(kind.byte_width), kind)
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return pa.scalar(b"", kind)
    if pa.types.is_decimal(kind):
        return pa.scalar(decimal.Decimal(0), kind)
    if pa.types.is_date32(kind):
        return pa.scalar(0, pa.int32()).cast(kind)
    return pa.scalar(0, pa.int64()).cast(kind)


def _filled(column: ColumnDescriptor, values: pa.Array) -> pa.Array:
    """Return plain values with a stand-in (``_zero``) for each null."""
    if not values.null_count:
        return values
    zero = _zero(column, values.type)
    if isinstance(values, pa.ExtensionArray):
        storage = values.storage.fill_null(zero.value)
        return pa.ExtensionArray.from_storage(values.type, storage)
    return values.fill_null(zero)


class Reshape(ABC):
    """Rebuilds a column's values, given in some Arrow type, as the type ``target`` gives.

    Where a NOT NULL field has no value because its struct is null (a null struct still
    has a slot for each field), the rebuilt field holds a stand-in value: Arrow writes no
    null into a non-nullable field, and Parquet keeps no value under a null struct, so the
    stand-in is never written nor read. An array or a map in such a slot is empty.
    """

    def target(self, column: ColumnDescriptor) -> pa.DataType:
        """Return the Arrow type values of ``column`` are rebuilt as (its type in batches)."""
        return arrow_type(column)

    def field(self, column: ColumnDescriptor) -> pa.Field:
        """Return the Arrow field of a nested field in a rebuilt struct (with its id)."""
        return arrow_field(column)

    @abstractmethod
    def struct_fields(self, column: ColumnDescriptor, given: pa.DataType) -> dict[int, int]:
        """Return, per field id of the STRUCT ``column``, its position in ``given``, if any."""

    @abstractmethod
    def leaf(self, column: ColumnDescriptor, values: pa.Array, path: Path) -> pa.Array:
        """Return plain values of ``column`` (at ``path``) as ``target`` has them."""

    @abstractmethod
    def check(self, column: ColumnDescriptor, nulls: int, path: Path) -> None:
        """Check a nested field that has no value ``nulls`` times where its struct has one."""

    def chunked(
        self, column: ColumnDescriptor, values: pa.Array | pa.ChunkedArray, path: Path
    ) -> pa.Array | pa.ChunkedArray:
        """Return ``values`` (of a column at ``path``) rebuilt, chunk by chunk."""
        if isinstance(values, pa.ChunkedArray):
            parts = [self.column(column, chunk, path) for chunk in values.chunks]
            return pa.chunked_array(parts, type=self.target(column))
        return self.column(column, values, path)

    def column(
        self, column: ColumnDescriptor, values: pa.Array, path: Path, *, required: bool = False
    ) -> pa.Array:
        """Return ``values`` of ``column`` (at ``path``) rebuilt as ``target(column)``.

        ``required``: the column is a NOT NULL field; its nulls (where its struct is null)
        become stand-ins.
        """
        if column.type not in NESTED_TYPES:
            rebuilt = self.leaf(column, values, path)
            return _filled(column, rebuilt) if required else rebuilt
        mask = None if required else _mask(values)
        if column.type is ColumnType.STRUCT:
            return self._struct(column, values, path, mask)
        offsets, items = _items(values)
        if column.type is ColumnType.ARRAY:
            element = self._part(column.fields[0], items, path)
            return pa.ListArray.from_arrays(offsets, element, type=self.target(column), mask=mask)
        entries = items.flatten()
        key, value = column.fields
        keys, kept = self._part(key, entries[0], path), self._part(value, entries[1], path)
        return pa.MapArray.from_arrays(offsets, keys, kept, type=self.target(column), mask=mask)

    def _part(self, field: ColumnDescriptor, items: pa.Array, path: Path) -> pa.Array:
        where = (*path, field.name)
        self.check(field, items.null_count, where)
        return self.column(field, items, where, required=not field.nullable)

    def _struct(
        self, column: ColumnDescriptor, values: pa.Array, path: Path, mask: pa.Array | None
    ) -> pa.StructArray:
        given = self.struct_fields(column, values.type)
        children = values.flatten()  # each with the struct's nulls
        arrays: list[pa.Array] = []
        for field in column.fields:
            where = (*path, field.name)
            at = given.get(field.id)
            child = pa.nulls(len(values), self.target(field)) if at is None else children[at]
            self.check(field, child.null_count - values.null_count, where)
            arrays.append(self.column(field, child, where, required=not field.nullable))
        fields = [self.field(f) for f in column.fields]
        return pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)

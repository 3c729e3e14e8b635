"""Arrow data to and from a table's columns, by column id.

Reading projects a file written under any schema version onto the columns of the version read:
renamed columns keep their data (same id), added columns read as their default or null, dropped
columns vanish, widened types are cast, and TIME and UUID read as Spark is handed them
(microseconds since midnight, canonical text) from either encoding a file may hold: Iceberg's
(``time64``, 16-byte ``uuid``: the source's files now and PyIceberg's) or the one the source
wrote before (``int64``, text). Nested columns are read the same way at every depth, by the
ids of their fields (``spark.reshape``): a struct's field added since a file was written reads
as null, a dropped one is gone, a renamed one reads under its new name, a widened one is cast.
Writing conforms a DataFrame's batches to the table's columns and checks what Spark cannot:
NOT NULL, lengths, primary-key columns, times within the day, UUID text (written in canonical
form), at every depth of a nested column (a field is named by its path, such as
``PAYLOAD.ITEMS.element.PRICE``; a struct's fields are matched by name, as columns are). A
column the DataFrame lacks is written as its default: a constant, or a new value per row for a
default function (``RAND_UUID``: a random UUID), else null. ``for_file`` turns conformed rows
into what a Parquet file holds (``spark.types``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from catalog.column_types import NESTED_TYPES, RAND_UUID, ColumnType
from catalog.descriptors import ColumnDescriptor
from catalog.descriptors.nested import Path, path_words
from spark.reshape import Reshape, field_ids, struct_fields_of
from spark.types import (
    arrow_field,
    arrow_type,
    default_scalar,
    file_field,
    file_type,
    given_fields,
    holds_file_types,
    named,
)

MICROS_PER_DAY = 86_400_000_000
"""A TIME holds microseconds since midnight: from 0 to one less than this."""

_CANONICAL_UUID = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


class DataMismatchError(ValueError):
    """The data does not fit the table: nothing of it is made visible."""


def column_ids(schema: pa.Schema) -> dict[int, int]:
    """Return, per Parquet field id in ``schema``, the field's position."""
    return field_ids(schema)


def _filled(column: ColumnDescriptor, rows: int) -> pa.Array:
    value = default_scalar(column)
    if value is None:
        nulls = pa.nulls(rows, type=arrow_type(column))
        if column.type in NESTED_TYPES:  # its NOT NULL fields hold stand-ins (``Reshape``)
            return _READ.column(column, nulls, (column.name,))
        return nulls
    return pa.repeat(pa.scalar(value, type=arrow_type(column)), rows)


def _generated(column: ColumnDescriptor, rows: int) -> pa.Array:
    """Return what a write gives a column the data lacks: a value per row of its default."""
    if column.default_function == RAND_UUID:
        return pa.array([str(uuid.uuid4()) for _ in range(rows)], type=pa.string())
    return _filled(column, rows)


def _is_uuid_bytes(kind: pa.DataType) -> bool:
    storage = kind.storage_type if isinstance(kind, pa.BaseExtensionType) else kind
    return bool(pa.types.is_fixed_size_binary(storage) and storage.byte_width == 16)


def _uuid_text(values: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Return 16-byte UUIDs as their canonical text, as Spark is handed UUIDs."""
    flat = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if isinstance(flat, pa.ExtensionArray):
        flat = flat.storage
    rows = len(flat)
    if flat.null_count == rows:
        return pa.nulls(rows, pa.string())
    # Without a Python object per value: the bytes as one hex text, cut into 32 digits a row.
    digits = pa.py_buffer(flat.buffers()[1].slice(flat.offset * 16, rows * 16).hex())
    ends = pc.cumulative_sum(pa.repeat(pa.scalar(32, pa.int32()), rows))
    offsets = pa.concat_arrays([pa.array([0], pa.int32()), ends]).buffers()[1]
    text = pc.ascii_lower(pa.Array.from_buffers(pa.string(), rows, [None, offsets, digits]))
    groups = ((0, 8), (8, 12), (12, 16), (16, 20), (20, 32))
    parts = [pc.utf8_slice_codeunits(text, start, stop) for start, stop in groups]
    canonical = pc.binary_join_element_wise(*parts, "-")
    if not flat.null_count:
        return canonical
    return pc.if_else(flat.is_valid(), canonical, pa.scalar(None, pa.string()))


def _uuid_bytes(values: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Return canonical UUID text (as ``conform`` leaves it) as Iceberg's 16-byte ``uuid``."""
    flat = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    storage = pa.array(
        [None if t is None else bytes.fromhex(t.replace("-", "")) for t in flat.to_pylist()],
        type=pa.binary(16),
    )
    return pa.ExtensionArray.from_storage(pa.uuid(), storage)


def _as_read(
    column: ColumnDescriptor, values: pa.ChunkedArray | pa.Array
) -> pa.ChunkedArray | pa.Array:
    """Return a file's values of ``column`` as Spark is handed them, from either encoding."""
    if column.type in NESTED_TYPES:
        return _READ.chunked(column, values, (column.name,))
    if column.type is ColumnType.UUID and _is_uuid_bytes(values.type):
        return _uuid_text(values)
    if column.type is ColumnType.TIME and pa.types.is_time(values.type):
        return values.cast(pa.time64("us")).cast(pa.int64())
    target = arrow_type(column)
    return values if values.type == target else values.cast(target)


class _Read(Reshape):
    """A file's nested values as the version read has them: struct fields matched by id."""

    def struct_fields(self, column: ColumnDescriptor, given: pa.DataType) -> dict[int, int]:
        return field_ids(struct_fields_of(given))

    def leaf(self, column: ColumnDescriptor, values: pa.Array, path: Path) -> pa.Array:
        read = _as_read(column, values)
        assert isinstance(read, pa.Array)
        return read

    def check(self, column: ColumnDescriptor, nulls: int, path: Path) -> None:
        """Take what the file holds: a read refuses no value."""


_READ = _Read()


def project(data: pa.Table, columns: Sequence[ColumnDescriptor]) -> pa.Table:
    """Return ``data`` (a file's table, with field ids) as ``columns``, matched by id."""
    positions = column_ids(data.schema)
    arrays: list[pa.Array | pa.ChunkedArray] = []
    for column in columns:
        position = positions.get(column.id)
        if position is None:
            arrays.append(_filled(column, data.num_rows))
            continue
        arrays.append(_as_read(column, data.column(position)))
    schema = pa.schema([pa.field(c.name, arrow_type(c), nullable=c.nullable) for c in columns])
    return pa.Table.from_arrays(arrays, schema=schema)


def conform(
    batch: pa.RecordBatch,
    columns: Sequence[ColumnDescriptor],
    sources: Mapping[int, str],
    key: Sequence[int],
) -> pa.Table:
    """Return ``batch`` as the table's ``columns`` (with field ids), checked.

    Args:
        batch: rows from the DataFrame.
        columns: the table's columns at the write timestamp.
        sources: per column id, the DataFrame column that feeds it (absent: default or null).
        key: the primary-key column ids (never null).

    Raises:
        DataMismatchError: a null in a NOT NULL or key column or in a NOT NULL nested field
            (where its struct has a value), a value longer than its column or field allows, a
            TIME outside the day, or a UUID's text that is not a UUID.
    """
    arrays: list[pa.Array] = []
    for column in columns:
        source = sources.get(column.id)
        if source is None:
            values = _generated(column, batch.num_rows)
        else:
            values = _WRITE.column(column, batch.column(source), (column.name,))
        if values.null_count and (not column.nullable or column.id in key):
            raise DataMismatchError(
                f"column {column.name} is NOT NULL, but {values.null_count} row(s) have no value"
            )
        arrays.append(values)
    return pa.Table.from_arrays(arrays, schema=pa.schema([arrow_field(c) for c in columns]))


class _Write(Reshape):
    """A DataFrame's values as the table's: struct fields matched by name, each checked."""

    def struct_fields(self, column: ColumnDescriptor, given: pa.DataType) -> dict[int, int]:
        return given_fields(column, given)

    def leaf(self, column: ColumnDescriptor, values: pa.Array, path: Path) -> pa.Array:
        target = arrow_type(column)
        if values.type != target:
            values = values.cast(target)
        where = named(path)
        _check_length(column, values, where)
        if column.type is ColumnType.TIME:
            _check_time(values, where)
        elif column.type is ColumnType.UUID:
            values = _canonical_uuids(values, where)
        return values

    def check(self, column: ColumnDescriptor, nulls: int, path: Path) -> None:
        if nulls and not column.nullable:
            raise DataMismatchError(
                f"field {path_words(path)} is NOT NULL, but {nulls} value(s) have none"
            )


_WRITE = _Write()


def for_file(data: pa.Table, columns: Sequence[ColumnDescriptor]) -> pa.Table:
    """Return conformed rows (``conform``, or ``project``ed) as a Parquet file holds them.

    TIME becomes Iceberg's ``time64[us]`` and UUID its 16-byte ``uuid``; the other types are
    written as they are. ``data`` has exactly ``columns``, in order.
    """
    arrays: list[pa.ChunkedArray | pa.Array] = []
    for column, values in zip(columns, data.columns, strict=True):
        if holds_file_types(column):
            arrays.append(_FILE.chunked(column, values, (column.name,)))
        else:
            arrays.append(values)
    return pa.Table.from_arrays(arrays, schema=pa.schema([file_field(c) for c in columns]))


class _File(Reshape):
    """Conformed values as files hold them: TIME and UUID as Iceberg has them, at any depth."""

    def target(self, column: ColumnDescriptor) -> pa.DataType:
        return file_type(column)

    def field(self, column: ColumnDescriptor) -> pa.Field:
        return file_field(column)

    def struct_fields(self, column: ColumnDescriptor, given: pa.DataType) -> dict[int, int]:
        return {field.id: i for i, field in enumerate(column.fields)}

    def leaf(self, column: ColumnDescriptor, values: pa.Array, path: Path) -> pa.Array:
        if column.type is ColumnType.TIME:
            return values.cast(pa.time64("us"))
        if column.type is ColumnType.UUID:
            return _uuid_bytes(_canonical_uuids(values, named(path)))
        return values

    def check(self, column: ColumnDescriptor, nulls: int, path: Path) -> None:
        """Take conformed values as they are: ``conform`` checked them."""


_FILE = _File()


def _check_time(values: pa.Array, where: str) -> None:
    outside = pc.or_(pc.less(values, 0), pc.greater_equal(values, MICROS_PER_DAY))
    found = values.filter(outside)
    if len(found):
        raise DataMismatchError(
            f"{where} is a TIME: microseconds since midnight, from 0 to "
            f"{MICROS_PER_DAY - 1}; {len(found)} value(s) are outside the day, such as "
            f"{found[0].as_py()}"
        )


def _canonical_uuids(values: pa.Array | pa.ChunkedArray, where: str) -> pa.Array:
    """Return UUID text in canonical form (lower case, hyphens), refusing text that is not one.

    Raises:
        DataMismatchError: a value is not a UUID.
    """
    flat = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if pc.all(pc.match_substring_regex(flat, _CANONICAL_UUID)).as_py() is not False:
        return flat  # already canonical (or all null)
    canonical: list[str | None] = []
    for text in flat.to_pylist():
        try:
            canonical.append(None if text is None else str(uuid.UUID(text)))
        except ValueError as e:
            shown = text if len(text) <= 40 else text[:40] + "..."
            raise DataMismatchError(
                f"{where} is a UUID, and '{shown}' is not one (a UUID is 32 "
                "hexadecimal digits, as in 0f8fad5b-d9cb-469f-a165-70867728950e)"
            ) from e
    return pa.array(canonical, type=pa.string())


def _check_length(column: ColumnDescriptor, values: pa.Array, where: str) -> None:
    if column.type not in (ColumnType.STRING, ColumnType.BYTES) or column.length is None:
        return
    measure = pc.utf8_length if column.type is ColumnType.STRING else pc.binary_length
    longest = pc.max(measure(values)).as_py()
    if longest is not None and longest > column.length:
        raise DataMismatchError(
            f"{where} holds at most {column.length} "
            f"{'characters' if column.type is ColumnType.STRING else 'bytes'}, "
            f"a value has {longest}"
        )

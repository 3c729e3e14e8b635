"""Arrow data to and from a table's columns, by column id.

Reading projects a file written under any schema version onto the columns of the version read:
renamed columns keep their data (same id), added columns read as their default or null, dropped
columns vanish, widened types are cast, and a UUID written as Iceberg writes it (16 bytes, the
files of PyIceberg) reads as the canonical text the source writes. Writing conforms a
DataFrame's batches to the table's columns and checks what Spark cannot: NOT NULL, lengths,
primary-key columns. A column the DataFrame lacks is written as its default: a constant, or a
new value per row for a default function (``RAND_UUID``: a random UUID), else null.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from catalog.column_types import RAND_UUID, ColumnType
from catalog.descriptors import ColumnDescriptor
from spark.types import FIELD_ID, arrow_field, arrow_type, default_scalar


class DataMismatchError(ValueError):
    """The data does not fit the table: nothing of it is made visible."""


def column_ids(schema: pa.Schema) -> dict[int, int]:
    """Return, per Parquet field id in ``schema``, the field's position."""
    found: dict[int, int] = {}
    for i, field in enumerate(schema):
        metadata = field.metadata or {}
        if FIELD_ID in metadata:
            found[int(metadata[FIELD_ID])] = i
    return found


def _filled(column: ColumnDescriptor, rows: int) -> pa.Array:
    value = default_scalar(column)
    if value is None:
        return pa.nulls(rows, type=arrow_type(column))
    return pa.repeat(pa.scalar(value, type=arrow_type(column)), rows)


def _generated(column: ColumnDescriptor, rows: int) -> pa.Array:
    """Return what a write gives a column the data lacks: a value per row of its default."""
    if column.default_function == RAND_UUID:
        return pa.array([str(uuid.uuid4()) for _ in range(rows)], type=pa.string())
    return _filled(column, rows)


def _is_uuid_bytes(kind: pa.DataType) -> bool:
    storage = kind.storage_type if isinstance(kind, pa.BaseExtensionType) else kind
    return bool(pa.types.is_fixed_size_binary(storage) and storage.byte_width == 16)


def _uuid_text(values: pa.ChunkedArray) -> pa.Array:
    """Return 16-byte UUIDs as their canonical text, as the source keeps UUIDs."""
    flat = values.combine_chunks()
    if isinstance(flat, pa.ExtensionArray):
        flat = flat.storage
    return pa.array(
        [None if b is None else str(uuid.UUID(bytes=b)) for b in flat.to_pylist()],
        type=pa.string(),
    )


def project(data: pa.Table, columns: Sequence[ColumnDescriptor]) -> pa.Table:
    """Return ``data`` (a file's table, with field ids) as ``columns``, matched by id."""
    positions = column_ids(data.schema)
    arrays: list[pa.Array | pa.ChunkedArray] = []
    for column in columns:
        position = positions.get(column.id)
        if position is None:
            arrays.append(_filled(column, data.num_rows))
            continue
        values = data.column(position)
        target = arrow_type(column)
        if column.type is ColumnType.UUID and _is_uuid_bytes(values.type):
            arrays.append(_uuid_text(values))
        else:
            arrays.append(values if values.type == target else values.cast(target))
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
        DataMismatchError: a null in a NOT NULL or key column, or a value longer than its
            column allows.
    """
    arrays: list[pa.Array] = []
    for column in columns:
        source = sources.get(column.id)
        if source is None:
            values = _generated(column, batch.num_rows)
        else:
            values = batch.column(source)
            target = arrow_type(column)
            if values.type != target:
                values = values.cast(target)
        if values.null_count and (not column.nullable or column.id in key):
            raise DataMismatchError(
                f"column {column.name} is NOT NULL, but {values.null_count} row(s) have no value"
            )
        _check_length(column, values)
        arrays.append(values)
    return pa.Table.from_arrays(arrays, schema=pa.schema([arrow_field(c) for c in columns]))


def _check_length(column: ColumnDescriptor, values: pa.Array) -> None:
    if column.type not in (ColumnType.STRING, ColumnType.BYTES) or column.length is None:
        return
    measure = pc.utf8_length if column.type is ColumnType.STRING else pc.binary_length
    longest = pc.max(measure(values)).as_py()
    if longest is not None and longest > column.length:
        raise DataMismatchError(
            f"column {column.name} holds at most {column.length} "
            f"{'characters' if column.type is ColumnType.STRING else 'bytes'}, "
            f"a value has {longest}"
        )

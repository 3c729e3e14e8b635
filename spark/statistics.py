"""Column statistics of data files: recorded when a file is written, read back as bounds.

A written file records, per column id, its null count and the lowest and highest value
(``catalog.data.files.ColumnStats``). A read turns them into ``pruning.Bounds`` of the columns
of the version it reads: by column id, so a renamed column keeps its statistics and a widened
one compares its old values as the wider type; a column the file lacks (added after the file
was written) holds its default in every row, or null, exactly as the read projects it.

Values are compared in one form per type (``comparable``): integers for the integer types,
TIME (microseconds since midnight), DATE (days) and the timestamps (microseconds since the
epoch), ``Decimal`` for DECIMAL, ``str`` for STRING and UUID (canonical text, whose order is
that of the 16 bytes Iceberg compares), ``float`` and ``bool``. BYTES keeps only its null
count. A file's TIME and UUID are recorded in that form from either encoding it holds them in.
STRUCT, ARRAY and MAP columns record nothing, and nothing is known of them (``bounds_of_file``
is None): no read condition is taken on them (``spark.pushdown``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import uuid
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from catalog.column_types import NESTED_TYPES, ColumnType
from catalog.data.files import ColumnStats, DataFile, StatValue
from catalog.descriptors import ColumnDescriptor
from spark.evolution import column_ids
from spark.pruning import Bounds
from spark.types import arrow_type, default_scalar

MAX_STRING_BOUND = 64
"""The longest string bound kept: a longer lowest value is cut (still a lower bound), a longer
highest value is not kept (a cut one would not be an upper bound)."""

_AS_INTEGER = {
    ColumnType.TIME: pa.int64(),
    ColumnType.DATE: pa.int32(),
    ColumnType.TIMESTAMP: pa.int64(),
    ColumnType.TIMESTAMP_TZ: pa.int64(),
}


def _uuid_or_none(value: bytes | None) -> str | None:
    return None if value is None else str(uuid.UUID(bytes=value))


def _bounds_of(column_type: ColumnType, values: pa.ChunkedArray) -> tuple[Any, Any]:
    if column_type is ColumnType.BYTES:
        return None, None
    if (
        column_type in (ColumnType.FLOAT32, ColumnType.FLOAT64)
        and pc.any(pc.is_nan(values)).as_py()
    ):
        return None, None  # NaN sorts above every number in Spark: no bound is safe
    if column_type is ColumnType.UUID and not pa.types.is_string(values.type):
        flat = values.combine_chunks()
        storage = flat.storage if isinstance(flat, pa.ExtensionArray) else flat
        found = pc.min_max(storage)  # bytes in unsigned order, as Iceberg orders UUIDs
        low, high = found["min"].as_py(), found["max"].as_py()
        return _uuid_or_none(low), _uuid_or_none(high)
    as_integer = _AS_INTEGER.get(column_type)
    if as_integer is not None:
        values = values.cast(as_integer)
    found = pc.min_max(values)
    return found["min"].as_py(), found["max"].as_py()


def _stored(column_type: ColumnType, value: Any, *, upper: bool) -> StatValue | None:
    if value is None:
        return None
    if column_type is ColumnType.DECIMAL:
        return format(value, "f")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str) and len(value) > MAX_STRING_BOUND:
        return None if upper else value[:MAX_STRING_BOUND]
    assert isinstance(value, bool | int | float | str)
    return value


def file_stats(data: pa.Table, columns: Sequence[ColumnDescriptor]) -> tuple[ColumnStats, ...]:
    """Return the statistics of every column of ``data`` (a file's rows, with field ids).

    ``data`` holds TIME and UUID in either encoding (``spark.evolution.for_file``'s or the
    text and microseconds of batches).
    """
    positions = column_ids(data.schema)
    stats: list[ColumnStats] = []
    for column in columns:
        position = positions.get(column.id)
        if position is None or column.type in NESTED_TYPES:
            continue
        values = data.column(position)
        lower, upper = _bounds_of(column.type, values)
        stats.append(
            ColumnStats(
                column_id=column.id,
                nulls=values.null_count,
                lower=_stored(column.type, lower, upper=False),
                upper=_stored(column.type, upper, upper=True),
            )
        )
    return tuple(stats)


class NotComparableError(ValueError):
    """A value that is not exactly a value of the column's type."""


_PYTHON_TYPES: dict[ColumnType, type | tuple[type, ...]] = {
    ColumnType.BOOLEAN: bool,
    ColumnType.INT8: int,
    ColumnType.INT16: int,
    ColumnType.INT32: int,
    ColumnType.INT64: int,
    ColumnType.TIME: int,
    ColumnType.FLOAT32: (float, int),
    ColumnType.FLOAT64: (float, int),
    ColumnType.DECIMAL: (decimal.Decimal, int),
    ColumnType.STRING: str,
    ColumnType.UUID: str,
    ColumnType.BYTES: bytes,
}


def typed_scalar(column: ColumnDescriptor, value: Any) -> pa.Scalar:
    """Return ``value`` (a Python value from a filter) as a scalar of the column's type.

    Raises:
        NotComparableError: the value is of another type, out of the type's range, or would
                be rounded (a decimal with more fractional digits); a naive time for a zoned
            one or the reverse; NaN.
    """
    kind = column.type
    if kind is ColumnType.DATE:
        fits = isinstance(value, dt.date) and not isinstance(value, dt.datetime)
    elif kind in (ColumnType.TIMESTAMP, ColumnType.TIMESTAMP_TZ):
        zoned = isinstance(value, dt.datetime) and value.tzinfo is not None
        fits = isinstance(value, dt.datetime) and zoned == (kind is ColumnType.TIMESTAMP_TZ)
    else:
        fits = isinstance(value, _PYTHON_TYPES[kind]) and (
            kind is ColumnType.BOOLEAN or not isinstance(value, bool)
        )
    if not fits:
        raise NotComparableError(f"{value!r} is not a {kind} value")
    try:
        scalar = pa.scalar(value, type=arrow_type(column))
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
        raise NotComparableError(f"{value!r} does not fit {kind}: {e}") from e
    if scalar.as_py() != value:  # rounded, truncated, or NaN (never equal to itself)
        raise NotComparableError(f"{value!r} is not exactly a {kind} value")
    return scalar


def comparable(column: ColumnDescriptor, scalar: pa.Scalar) -> Any:
    """Return a scalar of the column's type in the form statistics are compared in."""
    as_integer = _AS_INTEGER.get(column.type)
    if as_integer is not None:
        return scalar.cast(as_integer).as_py()
    return scalar.as_py()


def comparable_values(column: ColumnDescriptor, values: pa.ChunkedArray) -> list[Any]:
    """Return the distinct values of a column's array in comparable form, sorted.

    Nulls and NaN, which no bound holds, are left out.
    """
    values = pc.unique(values.drop_null())
    if column.type in (ColumnType.FLOAT32, ColumnType.FLOAT64):
        values = values.filter(pc.invert(pc.is_nan(values)))
    as_integer = _AS_INTEGER.get(column.type)
    if as_integer is not None:
        values = values.cast(as_integer)
    return sorted(values.to_pylist())


def _bound(column: ColumnDescriptor, value: StatValue | None) -> Any:
    if value is None:
        return None
    if column.type is ColumnType.DECIMAL:
        return decimal.Decimal(str(value))
    return value


def bounds_of_file(file: DataFile, column: ColumnDescriptor) -> Bounds | None:
    """Return what ``file``'s statistics say about ``column``; None when nothing is known.

    A file with statistics that has none for the column does not hold it (the column was
    added after the file was written): its rows read as the column's default, or null. Nothing
    is known of a nested column.
    """
    if file.stats is None or column.type in NESTED_TYPES:
        return None
    for stats in file.stats:
        if stats.column_id == column.id:
            return Bounds(
                file.rows, stats.nulls, _bound(column, stats.lower), _bound(column, stats.upper)
            )
    default = default_scalar(column)
    if default is None:
        return Bounds(file.rows, file.rows, None, None)
    value = comparable(column, pa.scalar(default, type=arrow_type(column)))
    return Bounds(file.rows, 0, value, value)

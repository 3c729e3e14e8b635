"""Column statistics of an Iceberg data file, as a data commit records them.

An Iceberg manifest keeps, per field id, a data file's null count and its lower and upper
bounds in Iceberg's single-value binary serialization (little-endian integers and floats,
days for ``date``, microseconds for ``time`` and the timestamps, the unscaled big-endian
two's-complement integer for ``decimal``, UTF-8 for ``string``, 16 big-endian bytes for
``uuid``). ``column_stats`` turns them into ``catalog.data.files.ColumnStats`` in the form the
Spark source compares them in (``spark.statistics``): field ids are the catalog's column ids.

Doubt keeps no bound: a float column whose NaN count is not known to be zero, a ``binary``
column, a string bound longer than the catalog keeps (a longer lower bound is cut, a longer
upper bound dropped). A file that lacks the null count of one of its plain columns records
no statistics at all, so it is never skipped for want of one (a reader takes a column a file
has no statistics for as one the file lacks, all null).

A STRUCT, ARRAY or MAP column keeps no bound. Iceberg's writers count nulls of primitive
fields only, so a nested column's null count is kept when the manifest gives it or the column
is NOT NULL (none); else the nested column has no entry, and the file keeps its plain columns'
statistics: readers never prune on a nested column (``spark.statistics.bounds_of_file``
knows nothing of one). The metrics of nested fields (their own ids) are not read: the catalog
keeps statistics of top-level columns.

A writer chose every byte of a bound, so decoding one costs at most linear time in a bound
Iceberg allows: a DECIMAL bound is at most 16 bytes (38 digits) and must fit its column's
precision; a string bound is decoded only as far as the catalog keeps it; any other failure
to decode is a ``BoundError`` naming the field.
"""

from __future__ import annotations

import decimal
import math
import struct
import uuid
from collections.abc import Mapping, Sequence

from catalog.column_types import NESTED_TYPES, ColumnType
from catalog.data.files import ColumnStats, StatValue
from catalog.descriptors import ColumnDescriptor

MAX_STRING_BOUND = 64
"""The longest string bound kept, as the Spark source keeps them (``spark.statistics``)."""
MAX_DECIMAL_BOUND_BYTES = 16
"""The widest DECIMAL bound: Iceberg's decimals have at most 38 digits, 16 bytes unscaled."""
_UTF8_MAX = 4
"""The most bytes one character takes in UTF-8."""

_FIXED: dict[ColumnType, tuple[str, int]] = {
    ColumnType.INT8: ("<i", 4),
    ColumnType.INT16: ("<i", 4),
    ColumnType.INT32: ("<i", 4),
    ColumnType.INT64: ("<q", 8),
    ColumnType.FLOAT32: ("<f", 4),
    ColumnType.FLOAT64: ("<d", 8),
    ColumnType.DATE: ("<i", 4),
    ColumnType.TIME: ("<q", 8),
    ColumnType.TIMESTAMP: ("<q", 8),
    ColumnType.TIMESTAMP_TZ: ("<q", 8),
}
"""The struct format and width of each type Iceberg serializes as a fixed-width number."""

_EXACT = decimal.Context(prec=80)
"""Room for any decimal Iceberg holds (38 digits), so moving its point never rounds."""


class BoundError(ValueError):
    """A bound that is not a value of its column's Iceberg type."""


def decode_bound(column: ColumnDescriptor, data: bytes) -> StatValue | None:
    """Return one Iceberg bound of ``column`` as a data commit stores it; None for no bound.

    Raises:
        BoundError: ``data`` does not hold a value of the column's type.
    """
    kind = column.type
    if kind is ColumnType.BOOLEAN:
        if len(data) != 1 or data[0] > 1:
            raise BoundError(f"a boolean bound is one byte 0 or 1, got {len(data)} byte(s)")
        return data[0] == 1
    fixed = _FIXED.get(kind)
    if fixed is not None:
        layout, width = fixed
        if len(data) != width:
            raise BoundError(f"a {kind} bound has {width} bytes, got {len(data)}")
        value: int | float = struct.unpack(layout, data)[0]
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value
    if kind is ColumnType.DECIMAL:
        return _decimal(column, data)
    if kind is ColumnType.UUID:
        if len(data) != 16:
            raise BoundError(f"a UUID bound has 16 bytes, got {len(data)}")
        return str(uuid.UUID(bytes=data))
    if kind is ColumnType.STRING:
        return _string(data)
    return None  # BYTES: only the null count is kept


def _decimal(column: ColumnDescriptor, data: bytes) -> str:
    if not 1 <= len(data) <= MAX_DECIMAL_BOUND_BYTES:
        raise BoundError(
            f"a DECIMAL bound has 1 to {MAX_DECIMAL_BOUND_BYTES} bytes, got {len(data)}"
        )
    unscaled = int.from_bytes(data, "big", signed=True)
    precision = column.precision or 38
    if abs(unscaled) >= 10**precision:
        raise BoundError(f"a DECIMAL bound has more than the column's {precision} digits")
    return format(decimal.Decimal(unscaled).scaleb(-(column.scale or 0), _EXACT), "f")


def _string(data: bytes) -> str:
    """Decode a string bound; of a longer one, only more characters than are kept.

    A bound of more than ``MAX_STRING_BOUND + 1`` characters' worth of bytes is decoded up to
    a character boundary past that many characters: enough to be cut (a lower bound) or
    known too long (an upper one).
    """
    head = (MAX_STRING_BOUND + 1) * _UTF8_MAX
    if len(data) > head:
        while head > 0 and data[head] & 0xC0 == 0x80:  # inside a character: back to its start
            head -= 1
        data = data[:head]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BoundError("a STRING bound is not UTF-8") from e


def encode_bound(column: ColumnDescriptor, value: StatValue) -> bytes | None:
    """Return a stored bound of ``column`` in Iceberg's serialization; None when it has none.

    The inverse of ``decode_bound``, for the manifests the server writes of the Spark
    source's files. A value that is not one of the column's type has no bound.
    """
    kind = column.type
    try:
        if kind is ColumnType.BOOLEAN and isinstance(value, bool):
            return b"\x01" if value else b"\x00"
        fixed = _FIXED.get(kind)
        if fixed is not None and isinstance(value, int | float) and not isinstance(value, bool):
            return struct.pack(fixed[0], value)
        if kind is ColumnType.DECIMAL and isinstance(value, str):
            unscaled = decimal.Decimal(value).scaleb(column.scale or 0, _EXACT)
            if unscaled != unscaled.to_integral_value():
                return None
            number = int(unscaled)
            return number.to_bytes(max(1, (number.bit_length() + 8) // 8), "big", signed=True)
        if kind is ColumnType.UUID and isinstance(value, str):
            return uuid.UUID(value).bytes
        if kind is ColumnType.STRING and isinstance(value, str):
            return value.encode("utf-8")
    except (struct.error, decimal.InvalidOperation, ValueError):
        return None
    return None


def _bound(column: ColumnDescriptor, data: bytes | None, which: str) -> StatValue | None:
    """Decode one bound of ``column``; every failure is a BoundError naming the field."""
    if data is None:
        return None
    try:
        return decode_bound(column, data)
    except (BoundError, ArithmeticError, ValueError) as e:
        raise BoundError(
            f"the {which} bound of field {column.id} ({column.name}) cannot be read: {e}"
        ) from e


def _kept_string(value: StatValue | None, *, upper: bool) -> StatValue | None:
    if isinstance(value, str) and len(value) > MAX_STRING_BOUND:
        return None if upper else value[:MAX_STRING_BOUND]
    return value


def column_stats(
    columns: Sequence[ColumnDescriptor],
    null_counts: Mapping[int, int],
    nan_counts: Mapping[int, int],
    lower: Mapping[int, bytes],
    upper: Mapping[int, bytes],
) -> tuple[ColumnStats, ...] | None:
    """Return the statistics of a data file that holds ``columns``, from its Iceberg metrics.

    Args:
        columns: the columns the file was written with (the schema of its snapshot).
        null_counts: per field id, how many values are null.
        nan_counts: per field id, how many values are NaN.
        lower: per field id, the serialized lower bound.
        upper: per field id, the serialized upper bound.

    Returns:
        One entry per column (a nested one's with its null count only, and none when that
        count is not known); None when a plain column's null count is missing.

    Raises:
        BoundError: a bound that is not a value of its column's type.
    """
    stats: list[ColumnStats] = []
    for column in columns:
        nulls = null_counts.get(column.id)
        if nulls is None and column.type in NESTED_TYPES and not column.nullable:
            nulls = 0
        if nulls is None and column.type in NESTED_TYPES:
            continue  # readers know nothing of a nested column: the others keep theirs
        if nulls is None:
            return None
        if column.type in NESTED_TYPES:
            stats.append(ColumnStats(column_id=column.id, nulls=nulls))
            continue
        floating = column.type in (ColumnType.FLOAT32, ColumnType.FLOAT64)
        if floating and nan_counts.get(column.id) != 0:
            low = high = None  # NaN sorts above every number in Spark: no bound is safe
        else:
            low = _bound(column, lower.get(column.id), "lower")
            high = _bound(column, upper.get(column.id), "upper")
        stats.append(
            ColumnStats(
                column_id=column.id,
                nulls=nulls,
                lower=_kept_string(low, upper=False),
                upper=_kept_string(high, upper=True),
            )
        )
    return tuple(stats)

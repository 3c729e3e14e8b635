"""The Iceberg partitions of the rows the catalog's Spark source writes into a partitioned table.

A table an Iceberg engine partitioned (``PARTITIONED BY (days(ts), bucket(16, id))``) has a
default partition spec in its Iceberg state. An Iceberg reader finds a file's rows by the
partition its manifest records, one per file, so the Spark source writes each file with the
rows of one Iceberg partition (``split``) and records that partition with the file
(``DataFile.iceberg_partition``); the server writes the file's manifest with it. The transforms
are Iceberg's (the table spec's "Partition Transforms"): ``identity``, ``bucket[N]`` (Murmur3
of the value's single-value serialization), ``truncate[W]``, ``year``, ``month``, ``day``,
``hour`` and ``void``; each gives the value in Iceberg's representation of its result type.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mmh3
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.column_types import NESTED_TYPES, ColumnType
from catalog.data.files import IcebergPartition, StatValue
from catalog.data.iceberg_table import PartitionSpec
from catalog.descriptors import ColumnDescriptor, TableDescriptor
from catalog.descriptors.nested import find_id, path_words

_MICROS_PER_DAY = 86_400_000_000
_MICROS_PER_HOUR = 3_600_000_000
_EPOCH = dt.date(1970, 1, 1)
_TIMES = (ColumnType.TIMESTAMP, ColumnType.TIMESTAMP_TZ)
_INTEGERS = (ColumnType.INT8, ColumnType.INT16, ColumnType.INT32, ColumnType.INT64)


class PartitionTransformError(ValueError):
    """A partition field the Spark source cannot compute for its source column."""


def spec_to_write(table: TableDescriptor) -> PartitionSpec | None:
    """Return the spec the Spark source writes ``table``'s files for.

    None when that is spec 0 with no fields, the unpartitioned spec a manifest of files
    without a partition is written for; a spec of another id, even one without fields or
    of ``void`` fields only, is the spec files are written for.
    """
    state = table.iceberg
    if state is None:
        return None
    spec = state.spec(state.default_spec_id)
    if spec is None or (spec.spec_id == 0 and not spec.fields):
        return None  # files go under spec 0, the unpartitioned one
    return spec


def check_spec(spec: PartitionSpec, columns: Sequence[ColumnDescriptor]) -> None:
    """Refuse a spec whose partitions ``split`` cannot compute.

    Raises:
        PartitionTransformError: see ``split``.
    """
    by_id = {c.id: c for c in columns}
    for field in spec.fields:
        _transform(field.transform, _source(by_id, field.source_id, field.name))


def _source(by_id: dict[int, ColumnDescriptor], source_id: int, name: str) -> ColumnDescriptor:
    column = by_id.get(source_id)
    if column is None:
        try:
            path, _ = find_id(tuple(by_id.values()), source_id)
        except KeyError:
            path = ()
        if path:
            raise PartitionTransformError(
                f"partition field {name} is of field {path_words(path)}, inside a nested "
                "column: the Spark source writes partitions of top-level columns only; write "
                "the table with an Iceberg engine"
            )
        raise PartitionTransformError(
            f"partition field {name} is of column id {source_id}, which the table no longer "
            "has: the Spark source cannot write its partitions"
        )
    return column


@dataclass(frozen=True)
class Part:
    """The rows of one Iceberg partition: where it is, and their row numbers in the data."""

    partition: IcebergPartition
    rows: pa.Array


def split(data: pa.Table, columns: Sequence[ColumnDescriptor], spec: PartitionSpec) -> list[Part]:
    """Return the Iceberg partitions of ``data``'s rows (as ``conform`` gives them).

    Raises:
        PartitionTransformError: a transform the source column's type does not take, or a
            source column the table no longer has.
    """
    by_id = {c.id: c for c in columns}
    codes: list[np.ndarray[Any, Any]] = []
    values: list[list[StatValue | None]] = []
    for field in spec.fields:
        column = _source(by_id, field.source_id, field.name)
        transformed = _transform(field.transform, column)(data.column(column.name))
        if isinstance(transformed, pa.ChunkedArray):
            transformed = transformed.combine_chunks()
        encoded = transformed.dictionary_encode()
        dictionary = [_stat(v) for v in encoded.dictionary.to_pylist()]
        indices = encoded.indices.fill_null(len(dictionary)).to_numpy()
        codes.append(indices.astype(np.int64))
        values.append([*dictionary, None])
    if not codes:  # a spec without fields: every row in its one partition
        return [
            Part(IcebergPartition(spec_id=spec.spec_id, values=()), pa.array(range(data.num_rows)))
        ]
    keys, inverse = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    parts = []
    for k, key in enumerate(keys.tolist()):
        picked = tuple(field_values[at] for field_values, at in zip(values, key, strict=True))
        where = IcebergPartition(spec_id=spec.spec_id, values=picked)
        parts.append(Part(where, pa.array(np.flatnonzero(inverse == k))))
    return parts


def _stat(value: Any) -> StatValue | None:
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value  # type: ignore[no-any-return]


def _transform(transform: str, column: ColumnDescriptor) -> Callable[[pa.ChunkedArray], pa.Array]:
    """Return ``transform`` of ``column``'s values (batch types) into its result values."""
    name, _, arg = transform.partition("[")
    width = int(arg.rstrip("]")) if arg else 0
    kind = column.type
    if name == "void":
        return lambda a: pa.nulls(len(a), pa.int32())
    if kind in NESTED_TYPES:
        raise PartitionTransformError(
            f"partition field {transform} is of column {column.name}, a {kind}: a partition "
            "is of a plain value; write the table with an Iceberg engine"
        )
    if name == "identity" and kind not in (ColumnType.BYTES,):
        return lambda a: _per_value(a, lambda v: _identity(v, kind))
    if name in ("year", "month", "day") and (kind is ColumnType.DATE or kind in _TIMES):
        return lambda a: _time_unit(a, name, kind)
    if name == "hour" and kind in _TIMES:
        return lambda a: _time_unit(a, name, kind)
    if name == "truncate" and width > 0 and kind in (*_INTEGERS, ColumnType.STRING):
        if kind is ColumnType.STRING:
            return lambda a: pc.utf8_slice_codeunits(a, 0, width).combine_chunks()
        return lambda a: _integers(a, lambda v: v - np.mod(v, width))
    if name == "truncate" and width > 0 and kind is ColumnType.DECIMAL:
        return lambda a: _per_value(a, lambda v: _truncate_decimal(v, width))
    if name == "bucket" and width > 0 and kind not in _NO_BUCKET:
        return lambda a: _per_value(a, lambda v: _bucket(v, kind, width))
    raise PartitionTransformError(
        f"the Spark source cannot write the partitions of {transform} of column "
        f"{column.name} ({kind}): write the table with an Iceberg engine"
    )


_NO_BUCKET = (ColumnType.BOOLEAN, ColumnType.FLOAT32, ColumnType.FLOAT64)


def _per_value(array: pa.ChunkedArray, each: Callable[[Any], Any]) -> pa.Array:
    """Apply ``each`` once per distinct non-null value of ``array``; nulls stay null."""
    encoded = array.combine_chunks().dictionary_encode()
    mapped = pa.array([each(v) for v in encoded.dictionary.to_pylist()])
    return mapped.take(encoded.indices)


def _integers(array: pa.ChunkedArray, op: Callable[[Any], Any]) -> pa.Array:
    """Apply a numpy integer ``op`` to ``array`` (as int64); nulls stay null."""
    flat = array.combine_chunks().cast(pa.int64())
    valid = flat.is_valid().to_numpy(zero_copy_only=False)
    done = op(flat.fill_null(0).to_numpy())
    return pa.array(done, pa.int64(), mask=~valid)


def _time_unit(array: pa.ChunkedArray, unit: str, kind: ColumnType) -> pa.Array:
    """Years, months, days or hours since the epoch (floored), of a date or timestamp."""
    if unit in ("year", "month"):
        years = pc.subtract(pc.year(array), 1970)
        if unit == "year":
            return years.combine_chunks().cast(pa.int32())
        months = pc.add(pc.multiply(years, 12), pc.subtract(pc.month(array), 1))
        return months.combine_chunks().cast(pa.int32())
    if kind is ColumnType.DATE:
        return array.combine_chunks().cast(pa.int32())
    per = _MICROS_PER_DAY if unit == "day" else _MICROS_PER_HOUR
    return _integers(array.cast(pa.int64()), lambda v: np.floor_divide(v, per)).cast(pa.int32())


def _identity(value: Any, kind: ColumnType) -> Any:
    if isinstance(value, dt.datetime):
        return _micros(value)
    if isinstance(value, dt.date):
        return (value - _EPOCH).days
    if isinstance(value, decimal.Decimal):
        return str(value)
    if kind is ColumnType.UUID:
        return str(uuid.UUID(value))
    return value


def _micros(value: dt.datetime) -> int:
    epoch = dt.datetime(1970, 1, 1, tzinfo=value.tzinfo)
    delta = value - epoch
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _unscaled(value: decimal.Decimal) -> tuple[int, int]:
    """Return a decimal's unscaled integer and its exponent (``value = unscaled * 10**exp``)."""
    sign, digits, exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0")
    return (-unscaled if sign else unscaled), int(exponent)


def _truncate_decimal(value: decimal.Decimal, width: int) -> str:
    unscaled, exponent = _unscaled(value)
    truncated = unscaled - (unscaled % width)
    digits = tuple(int(d) for d in str(abs(truncated)))
    return str(decimal.Decimal((int(truncated < 0), digits, exponent)))  # exact: no rounding


def _bucket(value: Any, kind: ColumnType, buckets: int) -> int:
    """Iceberg's bucket: Murmur3 (x86, 32 bits, seed 0) of the value's hash serialization."""
    return (bucket_hash(value, kind) & 0x7FFFFFFF) % buckets


def bucket_hash(value: Any, kind: ColumnType) -> int:
    """Return Iceberg's 32-bit hash of ``value`` (a batch value of a ``kind`` column)."""
    data: bytes
    if kind in _INTEGERS or kind is ColumnType.TIME:
        data = int(value).to_bytes(8, "little", signed=True)
    elif kind is ColumnType.DATE:
        data = (value - _EPOCH).days.to_bytes(8, "little", signed=True)
    elif kind in _TIMES:
        data = _micros(value).to_bytes(8, "little", signed=True)
    elif kind is ColumnType.STRING:
        data = value.encode("utf-8")
    elif kind is ColumnType.UUID:
        data = uuid.UUID(value).bytes
    elif kind is ColumnType.DECIMAL:
        unscaled, _ = _unscaled(value)
        # The fewest bytes of its two's complement, as Java's BigInteger.toByteArray.
        length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
        data = unscaled.to_bytes(length, "big", signed=True)
    else:
        data = bytes(value)
    return int(mmh3.hash(data, 0, signed=True))

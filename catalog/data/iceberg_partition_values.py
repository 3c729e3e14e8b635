"""The Iceberg partition a file of the catalog's Spark source says it holds, checked on commit.

A Spark source write into a table an Iceberg engine partitioned records, with each file, the
partition all its rows are in (``DataFile.iceberg_partition``): the spec it was written for and
the value of each of that spec's fields, which the server writes into the file's manifest.
A value of the wrong kind would make every later load of the table fail, so a commit is
refused unless each value is what Iceberg's transform of the source column gives: nothing
for ``void``; an integer for ``bucket``, ``year``, ``month``, ``day`` and ``hour``; for
``identity`` and ``truncate``, a value of the column's own type as the catalog records
statistics (``StatValue``). Null is a value of every field.
"""

from __future__ import annotations

import decimal
import uuid
from collections.abc import Sequence

from catalog.column_types import ColumnType
from catalog.data.files import IcebergPartition, StatValue
from catalog.data.iceberg_table import ColumnLike, IcebergTableState, PartitionField, transform_kind
from catalog.errors import ValidationError

_INTEGERS = (
    ColumnType.INT8,
    ColumnType.INT16,
    ColumnType.INT32,
    ColumnType.INT64,
    ColumnType.DATE,
    ColumnType.TIME,
    ColumnType.TIMESTAMP,
    ColumnType.TIMESTAMP_TZ,
)


def check_partition(
    partition: IcebergPartition,
    state: IcebergTableState | None,
    columns: Sequence[ColumnLike],
    path: str,
) -> None:
    """Check the partition a Spark source file names against the table's specs and columns.

    Raises:
        ValidationError: the spec is not one of the table's, the values are not one per
            field, or a value is not what the field's transform gives.
    """
    state = state or IcebergTableState()
    spec = state.spec(partition.spec_id)
    if spec is None:
        raise ValidationError(
            f"data file {path} was written for partition spec {partition.spec_id}, which the "
            "table does not have; nothing was committed"
        )
    if len(partition.values) != len(spec.fields):
        raise ValidationError(
            f"data file {path} names {len(partition.values)} partition values; spec "
            f"{spec.spec_id} has {len(spec.fields)} fields"
        )
    by_id = {c.id: c for c in columns}
    for field, value in zip(spec.fields, partition.values, strict=True):
        if value is not None and not _suits(field, by_id.get(field.source_id), value):
            raise ValidationError(
                f"data file {path}: {value!r} is not a value of partition field {field.name} "
                f"({field.transform}); nothing was committed"
            )


def _suits(field: PartitionField, column: ColumnLike | None, value: StatValue) -> bool:
    """Return whether a non-null ``value`` is one ``field``'s transform gives."""
    kind = transform_kind(field.transform)
    if kind == "void" or column is None:
        return False
    if kind in ("bucket", "year", "month", "day", "hour"):
        return _is_int(value)
    source = column.type
    if source is ColumnType.BOOLEAN:
        return isinstance(value, bool)
    if source in _INTEGERS:
        return _is_int(value)
    if source in (ColumnType.FLOAT32, ColumnType.FLOAT64):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if source is ColumnType.STRING:
        return isinstance(value, str)
    if source is ColumnType.DECIMAL:
        return isinstance(value, str) and _parses(decimal.Decimal, value)
    if source is ColumnType.UUID:
        return isinstance(value, str) and _parses(uuid.UUID, value)
    return False  # BYTES: the Spark source writes no partitions of binary values


def _is_int(value: StatValue) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parses(kind: type[object], text: str) -> bool:
    try:
        parsed = kind(text)  # type: ignore[call-arg]
    except (ValueError, decimal.InvalidOperation):
        return False
    return not isinstance(parsed, decimal.Decimal) or parsed.is_finite()

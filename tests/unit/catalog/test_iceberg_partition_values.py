"""The Iceberg partition a Spark source file names: checked against the table's specs on commit."""

from __future__ import annotations

import pytest

from catalog.column_types import ColumnType
from catalog.data.files import IcebergPartition, StatValue
from catalog.data.iceberg_partition_values import check_partition
from catalog.data.iceberg_table import IcebergTableState, PartitionField, PartitionSpec
from catalog.descriptors import ColumnDescriptor
from catalog.errors import ValidationError

TYPES = {
    1: ColumnType.INT64,
    2: ColumnType.STRING,
    3: ColumnType.DECIMAL,
    4: ColumnType.TIMESTAMP_TZ,
    5: ColumnType.UUID,
    6: ColumnType.BOOLEAN,
    7: ColumnType.FLOAT64,
    8: ColumnType.BYTES,
}
COLUMNS = [ColumnDescriptor(id=i, name=f"c{i}", type=t) for i, t in TYPES.items()]
FIELDS = [
    (1, "bucket[8]"),
    (2, "truncate[2]"),
    (3, "identity"),
    (4, "day"),
    (5, "identity"),
    (6, "identity"),
    (7, "identity"),
    (1, "void"),
    (8, "identity"),
]
SPEC = PartitionSpec(
    spec_id=1,
    fields=tuple(
        PartitionField(source_id=s, field_id=1000 + i, name=f"p{i}", transform=t)
        for i, (s, t) in enumerate(FIELDS)
    ),
)
STATE = IcebergTableState(specs=(PartitionSpec(spec_id=0), SPEC), default_spec_id=1)
UUID = "9b2f2a3e-8c1d-4d6b-9a3e-2f1c0b9d8e7a"
GOOD: list[StatValue | None] = [3, "ab", "12.50", 19_782, UUID, True, 1.5, None, None]


def _check(values: list[StatValue | None], spec_id: int = 1) -> None:
    check_partition(IcebergPartition(spec_id=spec_id, values=tuple(values)), STATE, COLUMNS, "p/f")


def test_values_each_transform_gives_are_taken() -> None:
    _check(GOOD)
    _check([None] * len(GOOD))  # null is a value of every field
    _check([], spec_id=0)


@pytest.mark.parametrize(
    ("index", "value"),
    [
        (0, "3"),  # a bucket is an integer
        (0, True),  # and not a boolean
        (2, "twelve"),  # a decimal's exact text
        (2, "NaN"),
        (3, 1.5),  # days since the epoch
        (4, "not-a-uuid"),
        (5, 1),  # a boolean column's value
        (6, "1.5"),
        (7, 0),  # void holds nothing
        (8, "00ff"),  # binary values: none
    ],
)
def test_a_value_no_transform_gives_is_refused(index: int, value: StatValue) -> None:
    values = list(GOOD)
    values[index] = value
    with pytest.raises(ValidationError, match=f"is not a value of partition field p{index}"):
        _check(values)


def test_an_unknown_spec_or_a_wrong_count_is_refused() -> None:
    with pytest.raises(ValidationError, match="partition spec 7, which the table does not have"):
        _check(GOOD, spec_id=7)
    with pytest.raises(ValidationError, match="names 2 partition values; spec 1 has 9 fields"):
        _check(GOOD[:2])

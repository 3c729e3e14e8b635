"""The Iceberg partitions the Spark source computes: Iceberg's transforms, one file each."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
import pytest

from catalog import ColumnType
from catalog.data.iceberg_table import PartitionField, PartitionSpec
from spark.iceberg_partitions import PartitionTransformError, bucket_hash, check_spec, split
from tests.unit.spark.test_pruning import named

ID = named("ID", ColumnType.INT64, 1)
NAME = named("NAME", ColumnType.STRING, 2, length=100)
DAY = named("DAY", ColumnType.DATE, 3)
TS = named("TS", ColumnType.TIMESTAMP, 4)
PRICE = named("PRICE", ColumnType.DECIMAL, 5, precision=9, scale=2)
FLAG = named("FLAG", ColumnType.BOOLEAN, 6)
COLUMNS = (ID, NAME, DAY, TS, PRICE, FLAG)


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [  # the examples of Iceberg's spec, "Appendix B: 32-bit Hash Requirements"
        (34, ColumnType.INT32, 2017239379),
        (34, ColumnType.INT64, 2017239379),
        (decimal.Decimal("14.20"), ColumnType.DECIMAL, -500754589),
        (dt.date(2017, 11, 16), ColumnType.DATE, -653330422),
        (81068000000, ColumnType.TIME, -662762989),
        (dt.datetime(2017, 11, 16, 22, 31, 8), ColumnType.TIMESTAMP, -2047944441),
        ("iceberg", ColumnType.STRING, 1210000089),
        ("f79c3e09-677c-4bbd-a479-3f349cb785e7", ColumnType.UUID, 1488055340),
    ],
)
def test_bucket_hashes_are_icebergs(value: Any, kind: ColumnType, expected: int) -> None:
    assert bucket_hash(value, kind) == expected


def _spec(*fields: tuple[int, str]) -> PartitionSpec:
    return PartitionSpec(
        spec_id=3,
        fields=tuple(
            PartitionField(source_id=s, field_id=1000 + n, name=f"f{n}", transform=t)
            for n, (s, t) in enumerate(fields)
        ),
    )


def _data() -> pa.Table:
    day = dt.date(2024, 2, 29)
    return pa.table(
        {
            "ID": pa.array([1, -7, 34, None], pa.int64()),
            "NAME": ["apple", "apricot", "banana", None],
            "DAY": pa.array([day, day, dt.date(1969, 12, 31), None], pa.date32()),
            "TS": pa.array(
                [dt.datetime(2024, 2, 29, 23, 0), dt.datetime(1969, 12, 31, 23, 59), None, None],
                pa.timestamp("us"),
            ),
            "PRICE": pa.array(
                [decimal.Decimal("10.65"), decimal.Decimal("-0.05"), None, None],
                pa.decimal128(9, 2),
            ),
            "FLAG": [True, False, True, None],
        }
    )


def _partitions(*fields: tuple[int, str]) -> dict[tuple[Any, ...], list[int]]:
    parts = split(_data(), COLUMNS, _spec(*fields))
    assert all(p.partition.spec_id == 3 for p in parts)
    return {p.partition.values: p.rows.to_pylist() for p in parts}


def test_each_transform_gives_icebergs_value_and_rows_group_by_all_fields() -> None:
    assert _partitions((2, "truncate[2]"), (6, "identity")) == {
        ("ap", True): [0],
        ("ap", False): [1],
        ("ba", True): [2],
        (None, None): [3],
    }
    assert _partitions((3, "day")) == {(19782,): [0, 1], (-1,): [2], (None,): [3]}
    assert _partitions((3, "month"), (3, "year")) == {
        (649, 54): [0, 1],
        (-1, -1): [2],
        (None, None): [3],
    }
    assert _partitions((4, "hour")) == {(474791,): [0], (-1,): [1], (None,): [2, 3]}
    assert _partitions((1, "truncate[10]")) == {(0,): [0], (-10,): [1], (30,): [2], (None,): [3]}
    assert _partitions((5, "truncate[50]")) == {("10.50",): [0], ("-0.50",): [1], (None,): [2, 3]}
    assert _partitions((1, "bucket[16]"), (2, "void")) == {
        ((bucket_hash(1, ColumnType.INT64) & 0x7FFFFFFF) % 16, None): [0],
        ((bucket_hash(-7, ColumnType.INT64) & 0x7FFFFFFF) % 16, None): [1],
        ((2017239379 & 0x7FFFFFFF) % 16, None): [2],
        (None, None): [3],
    }
    assert _partitions((4, "identity")) == {
        (1709247600000000,): [0],
        (-60000000,): [1],
        (None,): [2, 3],
    }


@pytest.mark.parametrize(
    ("field", "named_"),
    [((6, "bucket[4]"), r"bucket\[4\] of column FLAG"), ((9, "identity"), "id 9")],
)
def test_a_spec_the_writer_cannot_compute_is_refused_up_front(
    field: tuple[int, str], named_: str
) -> None:
    with pytest.raises(PartitionTransformError, match=named_):
        check_spec(_spec(field), COLUMNS)


@pytest.mark.parametrize(
    "value",
    [
        decimal.Decimal("-1.28"),
        decimal.Decimal("1.27"),
        decimal.Decimal("-0.01"),
        decimal.Decimal("0.00"),
        decimal.Decimal("-327.68"),
        decimal.Decimal("123456789012345678901234567890.12"),
    ],
)
def test_decimal_buckets_and_truncates_are_pyicebergs(value: decimal.Decimal) -> None:
    from pyiceberg.transforms import BucketTransform, TruncateTransform
    from pyiceberg.types import DecimalType

    kind = DecimalType(32, 2)
    price = named("P", ColumnType.DECIMAL, 1, precision=32, scale=2)
    data = pa.table({"P": pa.array([value], pa.decimal128(32, 2))})
    bucket: Any = BucketTransform(16).transform(kind)  # typed for its own value types
    truncate: Any = TruncateTransform(50).transform(kind)
    for transform, expected in (
        ("bucket[16]", bucket(value)),
        ("truncate[50]", str(truncate(value))),
    ):
        spec = PartitionSpec(
            spec_id=1,
            fields=(PartitionField(source_id=1, field_id=1000, name="p", transform=transform),),
        )
        (part,) = split(data, (price,), spec)
        assert part.partition.values == (expected,), transform


def test_a_spec_of_void_fields_or_none_is_still_the_files_spec() -> None:
    (everything,) = split(_data(), COLUMNS, PartitionSpec(spec_id=2, fields=()))
    assert everything.partition.values == () and everything.partition.spec_id == 2
    assert everything.rows.to_pylist() == [0, 1, 2, 3]
    assert _partitions((1, "void")) == {(None,): [0, 1, 2, 3]}

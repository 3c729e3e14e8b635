"""Skipping work: statistics of written files, pruning, row filters, pushed filters, packing."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from pathlib import Path
from typing import Any

import msgpack
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import datasource as ds

from catalog import ColumnType, ValidationError
from catalog.data.files import ColumnStats, DataFile, decode_data_commit
from catalog.data.files import encode_data_commit as encode
from catalog.descriptors import ColumnDescriptor
from spark.evolution import conform
from spark.planning import Packing
from spark.pruning import Bounds, Predicate, may_match, row_filter
from spark.pushdown import push
from spark.statistics import bounds_of_file, file_stats
from spark.table_folder import TableFolder
from spark.types import arrow_schema
from spark.warehouse import read_file
from tests.unit.spark.test_types import column


def named(name: str, ctype: ColumnType, cid: int, **params: object) -> ColumnDescriptor:
    return column(ctype, cid, **params).model_copy(update={"name": name})


ID = named("ID", ColumnType.INT64, 1, nullable=False)
QTY = named("QTY", ColumnType.INT32, 2)
NAME = named("NAME", ColumnType.STRING, 3, length=100)
PRICE = named("PRICE", ColumnType.FLOAT64, 4)
DAY = named("DAY", ColumnType.DATE, 5)
AMOUNT = named("AMOUNT", ColumnType.DECIMAL, 6, precision=10, scale=2)
AT = named("AT", ColumnType.TIMESTAMP_TZ, 7)
COLUMNS = (ID, QTY, NAME, PRICE, DAY, AMOUNT, AT)


def table(rows: list[tuple[Any, ...]], columns: tuple[ColumnDescriptor, ...] = COLUMNS) -> pa.Table:
    names = [c.name for c in columns]
    batch = pa.RecordBatch.from_pylist(
        [dict(zip(names, r, strict=True)) for r in rows], schema=arrow_schema(columns)
    )
    return conform(batch, columns, {c.id: c.name for c in columns}, (ID.id,))


ROWS = [
    (
        1,
        5,
        "apple",
        1.5,
        dt.date(2024, 1, 1),
        decimal.Decimal("1.50"),
        dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
    ),
    (2, None, "banana", float("nan"), dt.date(2024, 1, 3), None, None),
    (3, 7, None, -2.0, None, decimal.Decimal("-3.25"), dt.datetime(2024, 2, 1, tzinfo=dt.UTC)),
]


def test_statistics_of_a_written_file_are_keyed_by_column_id() -> None:
    stats = {s.column_id: s for s in file_stats(table(ROWS), COLUMNS)}
    assert stats[ID.id] == ColumnStats(column_id=ID.id, nulls=0, lower=1, upper=3)
    assert stats[QTY.id] == ColumnStats(column_id=QTY.id, nulls=1, lower=5, upper=7)
    assert (stats[NAME.id].lower, stats[NAME.id].upper) == ("apple", "banana")
    assert (stats[PRICE.id].lower, stats[PRICE.id].upper) == (None, None)  # a NaN: no bounds
    assert (stats[DAY.id].lower, stats[DAY.id].upper) == (19723, 19725)  # days since 1970
    assert (stats[AMOUNT.id].lower, stats[AMOUNT.id].upper) == ("-3.25", "1.50")
    assert stats[AT.id].lower == 1704067200000000  # microseconds since the epoch


def test_a_long_string_keeps_a_cut_lower_bound_and_no_upper_bound() -> None:
    long = "m" * 100
    stats = file_stats(table([(1, 1, long, 1.0, None, None, None)]), COLUMNS)
    name = next(s for s in stats if s.column_id == NAME.id)
    assert name.lower == "m" * 64 and name.upper is None


def test_commits_without_statistics_still_decode_and_are_stored_as_before() -> None:
    old_shape = {
        "table_id": 3,
        "seq": 1,
        "commit_ts": 10,
        "schema_version": 1,
        "mode": "append",
        "files": [{"path": "p0/a.parquet", "partition": 0, "rows": 2, "size": 10}],
        "request_id": "r",
    }
    commit = decode_data_commit(msgpack.packb(old_shape))
    assert commit.files[0].stats is None
    assert encode(commit) == msgpack.packb(old_shape)
    stats = (ColumnStats(column_id=1, nulls=0, lower=1, upper=2),)
    with_stats = commit.model_copy(
        update={"files": (commit.files[0].model_copy(update={"stats": stats}),)}
    )
    assert decode_data_commit(encode(with_stats)) == with_stats


def bounds(file: DataFile, col: ColumnDescriptor) -> Bounds | None:
    return bounds_of_file(file, col)


def test_bounds_of_files_with_and_without_statistics_and_of_an_added_column() -> None:
    stats = file_stats(table(ROWS), COLUMNS)
    file = DataFile(path="p0/f.parquet", partition=0, rows=3, size=100, stats=stats)
    assert bounds(file, AMOUNT) == Bounds(3, 1, decimal.Decimal("-3.25"), decimal.Decimal("1.5"))
    old = file.model_copy(update={"stats": None})
    assert bounds(old, ID) is None  # written before statistics: never skipped
    added = column(ColumnType.INT32, 9)
    assert bounds(file, added) == Bounds(3, 3, None, None)  # every row reads null
    with_default = column(ColumnType.INT32, 9, default=7)
    assert bounds(file, with_default) == Bounds(3, 0, 7, 7)  # every row reads the default


def pred(col: ColumnDescriptor, op: str, *keys: Any, negated: bool = False) -> Predicate:
    return Predicate(col, op, keys, keys, negated=negated)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("predicate", "expected"),
    [
        (pred(ID, "eq", 5), True),
        (pred(ID, "eq", 11), False),
        (pred(ID, "eq", 4), False),
        (pred(ID, "lt", 5), False),
        (pred(ID, "le", 5), True),
        (pred(ID, "gt", 10), False),
        (pred(ID, "ge", 10), True),
        (pred(ID, "in", 1, 20), False),
        (pred(ID, "in", 1, 7), True),
        (pred(ID, "is_null"), True),
        (pred(ID, "not_null"), True),
        (pred(ID, "eq", 5, negated=True), True),
        (pred(ID, "eq", "five"), True),  # does not compare: kept
    ],
)
def test_a_file_is_skipped_only_when_its_bounds_prove_the_predicate_false(
    predicate: Predicate, expected: bool
) -> None:
    assert may_match(predicate, Bounds(rows=10, nulls=2, lower=5, upper=10)) is expected


def test_null_tests_and_all_null_or_constant_columns() -> None:
    none_null = Bounds(rows=4, nulls=0, lower=7, upper=7)
    all_null = Bounds(rows=4, nulls=4, lower=None, upper=None)
    assert not may_match(pred(QTY, "is_null"), none_null)
    assert may_match(pred(QTY, "not_null"), none_null)
    assert not may_match(pred(QTY, "eq", 7, negated=True), none_null)
    assert not may_match(pred(QTY, "eq", 1), all_null)
    assert not may_match(pred(QTY, "eq", 1, negated=True), all_null)
    assert not may_match(pred(QTY, "not_null"), all_null)
    assert not may_match(pred(QTY, "is_null", negated=True), all_null)
    assert may_match(pred(QTY, "is_null"), all_null)
    assert may_match(pred(QTY, "eq", 1), None)


def test_string_prefixes_use_both_bounds() -> None:
    words = Bounds(rows=2, nulls=0, lower="banana", upper="cherry")
    assert may_match(pred(NAME, "starts_with", "ch"), words)
    assert may_match(pred(NAME, "starts_with", "ban"), words)
    assert not may_match(pred(NAME, "starts_with", "ap"), words)
    assert not may_match(pred(NAME, "starts_with", "d"), words)
    assert may_match(pred(NAME, "ends_with", "zzz"), words)


FILTERS: list[tuple[ds.Filter, list[int]]] = [
    (ds.EqualTo(("ID",), 2), [2]),
    (ds.EqualTo(("QTY",), 5), [1]),
    (ds.Not(ds.EqualTo(("QTY",), 5)), [3]),
    (ds.EqualNullSafe(("QTY",), None), [2]),
    (ds.GreaterThan(("AMOUNT",), decimal.Decimal("0")), [1]),
    (ds.LessThanOrEqual(("DAY",), dt.date(2024, 1, 2)), [1]),
    (ds.GreaterThanOrEqual(("AT",), dt.datetime(2024, 1, 15, tzinfo=dt.UTC)), [3]),
    (ds.In(("QTY",), (7, 8)), [3]),
    (ds.Not(ds.In(("QTY",), (7, 8))), [1]),
    (ds.IsNull(("NAME",)), [3]),
    (ds.IsNotNull(("NAME",)), [1, 2]),
    (ds.Not(ds.IsNull(("AMOUNT",))), [1, 3]),
    (ds.StringStartsWith(("NAME",), "ban"), [2]),
    (ds.StringEndsWith(("NAME",), "le"), [1]),
    (ds.StringContains(("NAME",), "nan"), [2]),
    (ds.LessThan(("ID",), 3), [1, 2]),
]


@pytest.mark.parametrize(("spark_filter", "ids"), FILTERS)
def test_a_taken_filter_keeps_the_rows_spark_keeps(
    spark_filter: ds.Filter, ids: list[int], tmp_path: Path
) -> None:
    predicates, left = push([spark_filter], COLUMNS)
    assert left == [] and len(predicates) == 1
    pq.write_table(table(ROWS), tmp_path / "f.parquet", row_group_size=1)
    read = read_file(TableFolder(str(tmp_path)), "f.parquet", COLUMNS, predicates)
    assert read.column("ID").to_pylist() == ids


@pytest.mark.parametrize(
    "spark_filter",
    [
        ds.EqualTo(("PRICE",), 1.5),  # floats: NaN sorts high in Spark, not in Arrow
        ds.EqualTo(("QTY",), 2**40),  # out of INT32's range
        ds.EqualTo(("QTY",), 1.5),
        ds.EqualTo(("AMOUNT",), decimal.Decimal("1.505")),
        ds.EqualTo(("AT",), dt.datetime(2024, 1, 1)),  # naive time for a zoned column
        ds.In(("QTY",), (1, None)),
        ds.Not(ds.EqualNullSafe(("QTY",), 1)),
        ds.EqualTo(("NOPE",), 1),
        ds.EqualTo(("A", "B"), 1),
        ds.StringStartsWith(("QTY",), "1"),
        ds.EqualTo(("PRICE",), math.nan),
    ],
)
def test_filters_the_read_cannot_evaluate_exactly_are_left_to_spark(
    spark_filter: ds.Filter,
) -> None:
    predicates, left = push([spark_filter], COLUMNS)
    assert left == [spark_filter]
    assert len(predicates) <= 1 and not any(p.exact for p in predicates)


def test_float_filters_still_skip_files() -> None:
    predicates, left = push([ds.GreaterThan(("PRICE",), 100.0)], COLUMNS)
    assert len(left) == 1 and predicates[0].keys == (100.0,)
    assert not may_match(predicates[0], Bounds(rows=1, nulls=0, lower=1.0, upper=2.0))


def test_row_filter_reads_renamed_and_added_columns_as_the_read_sees_them(tmp_path: Path) -> None:
    pq.write_table(table(ROWS), tmp_path / "old.parquet")
    folder = TableFolder(str(tmp_path))
    renamed = ID.model_copy(update={"name": "KEY"})
    added = column(ColumnType.INT32, 9, default=7)
    read_as = (renamed, added)
    predicates, _ = push([ds.GreaterThan(("KEY",), 1), ds.EqualTo(("C9",), 7)], read_as)
    assert read_file(folder, "old.parquet", read_as, predicates).to_pylist() == [
        {"KEY": 2, "C9": 7},
        {"KEY": 3, "C9": 7},
    ]
    predicates, _ = push([ds.IsNull(("C9",))], read_as)
    assert read_file(folder, "old.parquet", read_as, predicates).num_rows == 0
    assert row_filter(predicates, lambda c: None) is None


def test_files_pack_into_partitions_by_bytes() -> None:
    mib = 1024 * 1024
    packing = Packing(max_partition_bytes=128 * mib, open_cost_bytes=4 * mib, parallelism=2)
    assert packing.pack([]) == []
    small = [(f"f{i}", mib) for i in range(10)]
    assert len(packing.pack(small)) == 2  # 50 MiB counted, spread over 2 cores
    big = [(f"f{i}", 100 * mib) for i in range(3)]
    assert packing.pack(big) == [("f0",), ("f1",), ("f2",)]  # a file is never split
    assert len(Packing(parallelism=1).pack(small)) == 1


@pytest.mark.parametrize("given", ["0", "-5", "lots", "9" * 5000])
def test_packing_options_must_be_positive_numbers(given: str) -> None:
    with pytest.raises(ValidationError, match="option parallelism must be a positive whole"):
        Packing.of({"parallelism": given})
    assert Packing.of({"max_partition_bytes": "1000"}).max_partition_bytes == 1000

"""The key check of a write: repeats within it, keys the table holds, files ruled out by bounds."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from catalog import ColumnType, ErrorCode
from catalog.data.files import DataFile
from catalog.descriptors import ColumnDescriptor
from spark.evolution import conform
from spark.keys import KeyCheck, PrimaryKeyViolationError, key_text, read_keys
from spark.statistics import comparable_values
from spark.table_folder import TableFolder
from spark.types import arrow_schema
from spark.warehouse import write_partitions
from tests.unit.spark.test_pruning import named

REGION = named("REGION", ColumnType.STRING, 1, nullable=False, length=10)
ID = named("ID", ColumnType.INT64, 2, nullable=False)
QTY = named("QTY", ColumnType.INT32, 3)
COLUMNS = (REGION, ID, QTY)


class Files:
    """Data files written into one folder as a write's tasks write them."""

    def __init__(self, folder: Path, columns: tuple[ColumnDescriptor, ...] = COLUMNS) -> None:
        self.folder, self.columns, self.count = TableFolder(str(folder)), columns, 0

    def write(self, rows: list[tuple[Any, ...]], partitions: int = 1) -> list[DataFile]:
        names = [c.name for c in self.columns]
        batch = pa.RecordBatch.from_pylist(
            [dict(zip(names, r, strict=True)) for r in rows], schema=arrow_schema(self.columns)
        )
        data = conform(batch, self.columns, {c.id: c.name for c in self.columns}, ())
        self.count += 1
        return write_partitions(data, self.columns, self.folder, [0], partitions, f"t{self.count}")


def check(folder: Path, key: tuple[ColumnDescriptor, ...] = (ID,)) -> KeyCheck:
    return KeyCheck(TableFolder(str(folder)), key, "PUBLIC.ORDERS")


def test_keys_repeated_within_a_write_are_refused_naming_a_few(tmp_path: Path) -> None:
    files = Files(tmp_path)
    written = files.write([("eu", i % 7, 1) for i in range(20)], partitions=3)
    written += files.write([("us", 100, 1)])
    with pytest.raises(PrimaryKeyViolationError) as info:
        check(tmp_path).written_files(written)
    error = info.value
    assert error.code is ErrorCode.PRIMARY_KEY_VIOLATION
    assert len(error.keys) == 5 and all(set(k) == {"ID"} for k in error.keys)
    assert {k["ID"] for k in error.keys} <= set(range(7))
    assert "7 key(s) occur in more than one row of the write into PUBLIC.ORDERS" in str(error)
    assert "ID=" in error.message and "and more" in error.message
    assert "write one row per key" in error.message


def test_a_composite_key_repeats_only_when_every_column_does(tmp_path: Path) -> None:
    files = Files(tmp_path)
    key = (REGION, ID)
    check(tmp_path, key).written_files(files.write([("eu", 1, 1), ("us", 1, 1), ("eu", 2, 1)]))
    with pytest.raises(PrimaryKeyViolationError) as info:
        check(tmp_path, key).written_files(files.write([("eu", 1, 1), ("us", 1, 2), ("eu", 1, 3)]))
    assert info.value.keys == [{"REGION": "eu", "ID": 1}]
    assert "(REGION='eu', ID=1)" in info.value.message


def test_keys_the_table_holds_are_refused_naming_them(tmp_path: Path) -> None:
    files = Files(tmp_path)
    table = files.write([("eu", i, 1) for i in range(0, 50)], partitions=2)
    keys = check(tmp_path, (REGION, ID))
    keys.written_files(files.write([("eu", 49, 1), ("us", 10, 1), ("eu", 50, 1)]))
    with pytest.raises(PrimaryKeyViolationError) as info:
        keys.table_files(table, {})
    assert info.value.keys == [{"REGION": "eu", "ID": 49}]
    message = info.value.message
    assert "the table PUBLIC.ORDERS already holds rows with key (REGION='eu', ID=49)" in message
    assert 'mode("append") adds rows whose keys the table does not hold yet' in message
    assert message.endswith("Nothing was committed.")
    fresh = check(tmp_path, (REGION, ID))
    fresh.written_files(files.write([("us", 49, 1), ("eu", 50, 1)]))
    fresh.table_files(table, {})  # no written key is in the table


def test_files_whose_key_bounds_hold_no_written_key_are_not_read(tmp_path: Path) -> None:
    files = Files(tmp_path)
    low = files.write([("eu", 0, 1), ("eu", 3, 1)])
    high = files.write([("eu", 1000, 1), ("eu", 2000, 1)])
    between = files.write([("eu", 5, 1), ("eu", 7, 1)])
    keys = check(tmp_path)
    keys.written_files(files.write([("eu", 11, 1), ("eu", 999, 1), ("eu", 6, 1)]))
    for file in low + high + between:
        (tmp_path / file.path).unlink()
    # Written keys fall inside the bounds of no file but `between` (5..7 holds 6).
    keys.table_files(low + high, {})
    with pytest.raises(FileNotFoundError):
        keys.table_files(between, {})


def test_a_file_checked_once_is_not_read_again(tmp_path: Path) -> None:
    files = Files(tmp_path)
    first = files.write([("eu", 1, 1), ("eu", 3, 1)])
    keys = check(tmp_path)
    keys.written_files(files.write([("eu", 2, 1)]))
    keys.table_files(first, {})
    (tmp_path / first[0].path).unlink()
    later = files.write([("eu", 2, 9)])
    with pytest.raises(PrimaryKeyViolationError):
        keys.table_files(first + later, {})  # reads only the new file, which holds key 2


def test_a_file_without_statistics_is_read(tmp_path: Path) -> None:
    files = Files(tmp_path)
    old = [f.model_copy(update={"stats": None}) for f in files.write([("eu", 5, 1)])]
    keys = check(tmp_path)
    keys.written_files(files.write([("eu", 5, 2)]))
    with pytest.raises(PrimaryKeyViolationError):
        keys.table_files(old, {})


def test_keys_are_read_by_column_id_across_a_rename_and_a_widening(tmp_path: Path) -> None:
    narrow = named("K", ColumnType.INT32, 2, nullable=False)
    old = Files(tmp_path, (REGION, narrow, QTY)).write([("eu", 7, 1)])
    wide = named("KEY", ColumnType.INT64, 2, nullable=False)
    keys = read_keys(TableFolder(str(tmp_path)), old[0].path, (wide,))
    assert keys.schema.field("KEY").type == pa.int64() and keys.column("KEY").to_pylist() == [7]
    now = Files(tmp_path, (REGION, wide, QTY))
    check_now = check(tmp_path, (wide,))
    check_now.written_files(now.write([("eu", 7, 1)]))
    with pytest.raises(PrimaryKeyViolationError) as info:
        check_now.table_files(old, {})
    assert info.value.keys == [{"KEY": 7}]


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ({"ID": 7}, "ID=7"),
        ({"NAME": "it's"}, "NAME='it''s'"),
        ({"D": dt.date(2024, 5, 1), "B": b"\x01\xff"}, "(D='2024-05-01', B=X'01FF')"),
        ({"A": decimal.Decimal("1.50"), "F": True}, "(A=1.50, F=TRUE)"),
    ],
)
def test_keys_are_named_as_sql_literals(key: dict[str, Any], text: str) -> None:
    assert key_text(key) == text


def test_comparable_values_are_sorted_distinct_without_null_or_nan() -> None:
    price = named("PRICE", ColumnType.FLOAT64, 1)
    values = pa.chunked_array([[3.0, None, float("nan"), 1.0, 3.0]])
    assert comparable_values(price, values) == [1.0, 3.0]
    day = named("DAY", ColumnType.DATE, 2)
    days = pa.chunked_array([[dt.date(1970, 1, 3), dt.date(1970, 1, 2)]], type=pa.date32())
    assert comparable_values(day, days) == [1, 2]

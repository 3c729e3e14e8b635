"""Rows deleted by position: read from delete files, left out of reads and of key checks."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog.data.files import DataFile
from spark.deletes import deleted_rows, without_deleted
from spark.keys import PrimaryKeyViolationError, WrittenKeys
from spark.pruning import Predicate
from spark.rewrites import Rewrite
from spark.table_folder import TableFolder
from spark.warehouse import read_file
from tests.unit.spark.test_keys import COLUMNS, ID, Files, check


def _deletes(folder: Path, name: str, rows: list[tuple[str, int]]) -> DataFile:
    """Write a position delete file of ``rows`` (file_path, pos) in ``folder``."""
    table = pa.table(
        {"file_path": [p for p, _ in rows], "pos": pa.array([n for _, n in rows], pa.int64())}
    )
    pq.write_table(table, folder / name)
    return DataFile(path=name, partition=0, rows=len(rows), size=1, content="position-deletes")


def test_positions_are_gathered_per_data_file_of_the_table(tmp_path: Path) -> None:
    first = _deletes(
        tmp_path,
        "d1.parquet",
        [(f"file://{tmp_path}/p0/a.parquet", 3), (f"{tmp_path}/p0/b.parquet", 0)],
    )
    second = _deletes(
        tmp_path,
        "d2.parquet",
        [(f"file:{tmp_path}/p0/a.parquet", 1), ("/elsewhere/p0/a.parquet", 2), ("s3://b/k", 0)],
    )
    found = deleted_rows(TableFolder(str(tmp_path)), [first, second])
    assert {p: a.to_pylist() for p, a in found.items()} == {
        "p0/a.parquet": [3, 1],
        "p0/b.parquet": [0],
    }


def test_a_file_that_is_not_a_position_delete_file_is_refused(tmp_path: Path) -> None:
    pq.write_table(pa.table({"id": [1]}), tmp_path / "x.parquet")
    bogus = DataFile(path="x.parquet", partition=0, rows=1, size=1, content="position-deletes")
    with pytest.raises(ValueError, match="no file_path and pos columns"):
        deleted_rows(TableFolder(str(tmp_path)), [bogus])


def test_rows_at_the_positions_are_left_out_and_others_ignored() -> None:
    data = pa.table({"n": list(range(5))})
    kept = without_deleted(data, pa.array([0, 3, 7, -1], pa.int64()))
    assert kept["n"].to_pylist() == [1, 2, 4]


def test_a_read_leaves_out_deleted_rows_then_filters(tmp_path: Path) -> None:
    (written,) = Files(tmp_path).write([("eu", i, i * 10) for i in range(6)])
    folder = TableFolder(str(tmp_path))
    deleted = pa.array([1, 4], pa.int64())
    rows = read_file(folder, written.path, COLUMNS, [], deleted)
    assert rows["ID"].to_pylist() == [0, 2, 3, 5]
    over = Predicate(ID, "gt", (2,), (2,))
    assert read_file(folder, written.path, COLUMNS, [over], deleted)["ID"].to_pylist() == [3, 5]


def test_a_key_deleted_by_position_is_not_held(tmp_path: Path) -> None:
    files = Files(tmp_path)
    held = files.write([("eu", 1, 1), ("eu", 2, 1)])
    again = files.write([("eu", 1, 5)])
    keys = check(tmp_path)
    keys.written_files(again)
    with pytest.raises(PrimaryKeyViolationError):
        keys.table_files(held, {})
    fresh = check(tmp_path)
    fresh.written_files(again)
    fresh.table_files(held, {held[0].path: pa.array([0], pa.int64())})  # row of key 1 deleted


def test_an_upsert_judged_again_rewrites_a_file_whose_rows_were_deleted_since(
    tmp_path: Path,
) -> None:
    (held,) = Files(tmp_path).write([("eu", 1, 1), ("eu", 2, 1), ("eu", 3, 1)])
    keys = WrittenKeys(pa.table({"ID": pa.array([1], pa.int64())}), (ID,))
    folder = TableFolder(str(tmp_path))
    rewrite = Rewrite(folder, COLUMNS, [0], 1, "w")
    _, first = rewrite.without(keys, [held], {})
    assert read_file(folder, first[0].path, COLUMNS, [])["ID"].to_pylist() == [2, 3]
    # Another writer came first: an engine deleted the row of key 3 by position.
    _, again = rewrite.without(keys, [held], {held.path: pa.array([2], pa.int64())})
    assert read_file(folder, again[0].path, COLUMNS, [])["ID"].to_pylist() == [2]

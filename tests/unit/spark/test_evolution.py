"""A file's TIME and UUID: written as Iceberg has them, read as Spark has them from either."""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog.column_types import ColumnType
from catalog.descriptors import ColumnDescriptor
from spark.evolution import DataMismatchError, conform, for_file, project
from spark.pruning import Op, Predicate
from spark.statistics import file_stats
from spark.table_folder import TableFolder
from spark.types import FIELD_ID, arrow_schema
from spark.warehouse import read_file


def test_sixteen_byte_uuids_read_as_their_canonical_text() -> None:
    column = ColumnDescriptor(id=3, name="U", type=ColumnType.UUID)
    first = uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e")
    for kind in (pa.uuid(), pa.binary(16)):
        storage = pa.array([first.bytes, None], type=pa.binary(16))
        values = pa.ExtensionArray.from_storage(kind, storage) if kind == pa.uuid() else storage
        field = pa.field("u", kind, metadata={FIELD_ID: b"3"})
        data = pa.Table.from_arrays([values], schema=pa.schema([field]))
        assert project(data, [column]).column("U").to_pylist() == [str(first), None]


TIME = ColumnDescriptor(id=2, name="T", type=ColumnType.TIME, precision=6)
UUID = ColumnDescriptor(id=3, name="U", type=ColumnType.UUID)
KEY = ColumnDescriptor(id=1, name="ID", type=ColumnType.INT64, nullable=False)
COLUMNS = (KEY, TIME, UUID)
NOON = 12 * 3600 * 1_000_000


def _conformed(rows: list[dict[str, object]]) -> pa.Table:
    batch = pa.RecordBatch.from_pylist(rows, schema=arrow_schema(COLUMNS))
    return conform(batch, COLUMNS, {c.id: c.name for c in COLUMNS}, (KEY.id,))


def test_files_hold_time_and_uuid_as_iceberg_and_read_back_as_spark_has_them(
    tmp_path: Path,
) -> None:
    first = uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e")
    rows = _conformed(
        [
            {"ID": 1, "T": NOON, "U": str(first).upper()},
            {"ID": 2, "T": None, "U": None},
            {"ID": 3, "T": 0, "U": "{" + first.hex + "}"},
        ]
    )
    assert rows.column("U").to_pylist() == [str(first), None, str(first)]  # canonical
    stored = for_file(rows, COLUMNS)
    assert stored.schema.field("T").type == pa.time64("us")
    assert stored.schema.field("U").type == pa.uuid()
    assert stored.schema.field("U").metadata == {FIELD_ID: b"3"}
    assert stored.column("T").to_pylist()[0] == dt.time(12)
    pq.write_table(stored, tmp_path / "f.parquet")
    assert project(pq.read_table(tmp_path / "f.parquet"), COLUMNS) == project(rows, COLUMNS)
    # The statistics are the same from either encoding: microseconds, canonical text.
    assert file_stats(stored, COLUMNS) == file_stats(rows, COLUMNS)
    assert {s.column_id: (s.lower, s.upper) for s in file_stats(stored, COLUMNS)}[2] == (0, NOON)


def test_a_write_refuses_times_outside_the_day_and_text_that_is_no_uuid() -> None:
    with pytest.raises(DataMismatchError, match=r"column T is a TIME: .* such as 86400000000"):
        _conformed([{"ID": 1, "T": 86_400_000_000, "U": None}])
    with pytest.raises(DataMismatchError, match=r"column T is a TIME: .* such as -1"):
        _conformed([{"ID": 1, "T": -1, "U": None}])
    with pytest.raises(DataMismatchError, match="column U is a UUID, and 'not-a-uuid' is not one"):
        _conformed([{"ID": 1, "T": None, "U": "not-a-uuid"}])


def test_time_predicates_filter_rows_in_either_encoding(tmp_path: Path) -> None:
    rows = _conformed([{"ID": i, "T": i * 1000, "U": None} for i in range(5)])
    pq.write_table(rows, tmp_path / "before.parquet", row_group_size=1)
    pq.write_table(for_file(rows, COLUMNS), tmp_path / "now.parquet", row_group_size=1)
    cases: list[tuple[Op, tuple[int, ...], list[int]]] = [
        ("ge", (3000,), [3, 4]),
        ("in", (1000, 4000), [1, 4]),
    ]
    for op, values, ids in cases:
        predicate = Predicate(TIME, op, values, values)
        for name in ("before.parquet", "now.parquet"):
            read = read_file(TableFolder(str(tmp_path)), name, COLUMNS, [predicate])
            assert read.column("ID").to_pylist() == ids, (name, op)

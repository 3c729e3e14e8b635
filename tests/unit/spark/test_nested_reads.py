"""Nested columns where reads skip work and writes rewrite files: what they use and leave alone."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import datasource as ds

from catalog.data.iceberg_table import PartitionField, PartitionSpec
from spark.iceberg_partitions import PartitionTransformError, check_spec
from spark.keys import WrittenKeys
from spark.pushdown import push
from spark.rewrites import Rewrite
from spark.statistics import bounds_of_file
from spark.table_folder import TableFolder
from spark.warehouse import read_file, write_partitions
from tests.unit.spark.test_nested_types import ROWS, columns_of, conformed, events


def test_filters_on_nested_columns_or_their_fields_are_left_to_spark() -> None:
    columns = columns_of(events())
    on_field = ds.EqualTo(("PAYLOAD", "SOURCE"), "web")
    on_column = ds.IsNull(("PAYLOAD",))
    on_map = ds.IsNotNull(("ATTRS",))
    on_key = ds.GreaterThan(("ID",), 1)
    predicates, left = push([on_field, on_column, on_map, on_key], columns)
    assert [(p.column.name, p.op) for p in predicates] == [("ID", "gt")]
    assert left == [on_field, on_column, on_map]


def test_statistics_are_kept_for_plain_columns_only(tmp_path: Path) -> None:
    columns = columns_of(events())
    folder = TableFolder(str(tmp_path))
    (file,) = write_partitions(conformed(columns, ROWS), columns, folder, [0], 1, "w")
    assert file.stats is not None
    assert [s.column_id for s in file.stats] == [columns[0].id]
    assert (file.stats[0].lower, file.stats[0].upper) == (1, 4)
    for nested in columns[1:]:
        assert bounds_of_file(file, nested) is None  # nothing known: never skipped


def test_a_rewrite_without_some_keys_keeps_the_other_rows_nested_values(tmp_path: Path) -> None:
    columns = columns_of(events())
    folder = TableFolder(str(tmp_path))
    data = conformed(columns, ROWS)
    (held,) = write_partitions(data, columns, folder, [0], 1, "w")
    keys = WrittenKeys(pa.table({"ID": pa.array([3, 1], pa.int64())}), (columns[0],))
    removed, added = Rewrite(folder, columns, [0], 1, "r").without(keys, [held], {})
    assert removed == [held.path]
    (rewritten,) = added
    kept = read_file(folder, rewritten.path, columns, [])
    assert kept.to_pylist() == [data.to_pylist()[1], data.to_pylist()[3]]


def _spec(source_id: int, transform: str) -> PartitionSpec:
    field = PartitionField(source_id=source_id, field_id=1000, name="p", transform=transform)
    return PartitionSpec(spec_id=1, fields=(field,))


def test_a_partition_of_a_nested_field_is_refused_naming_it() -> None:
    columns = columns_of(events())
    source = next(f for f in columns[1].fields if f.name == "SOURCE")
    with pytest.raises(PartitionTransformError, match=r"of field PAYLOAD\.SOURCE, inside a nested"):
        check_spec(_spec(source.id, "identity"), columns)
    with pytest.raises(PartitionTransformError, match="column PAYLOAD, a STRUCT"):
        check_spec(_spec(columns[1].id, "bucket[4]"), columns)

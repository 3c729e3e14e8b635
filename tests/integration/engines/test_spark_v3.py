"""Spark with Iceberg's runtime on tables of format version 3: row lineage kept by the catalog.

Each snapshot an engine adds to a format 3 table gives its new rows ids from the table's
``next-row-id`` (``first-row-id``, ``added-rows``), which the catalog records with the data
commit and serves back, so ``_row_id`` stays a row's id through copy-on-write changes. The
catalog's own Spark source reads such tables and writes none: its commits would give no ids,
and rewrite manifests without theirs. Rows written before an upgrade to format 3 get ids
from the first engine snapshot after it.
"""

from __future__ import annotations

import pytest
from pyiceberg.table.metadata import TableMetadataV3
from pyspark.errors import PySparkException

from tests.integration.engines.test_spark_rows import SparkTable
from tests.integration.engines.test_spark_rows import table as table
from tests.integration.spark.conftest import spark as spark

pytestmark = pytest.mark.timeout(300)

LINEAGE = "SELECT id, _row_id, _last_updated_sequence_number FROM {t} ORDER BY id"


def _create(table: SparkTable, properties: str) -> None:
    table.sql(f"CREATE SCHEMA IF NOT EXISTS cat.{table.namespace}")
    table.sql(
        "CREATE TABLE {t} (id BIGINT, name STRING, part STRING) USING iceberg "
        f"TBLPROPERTIES ({properties})"
    )


def _next_row_id(table: SparkTable) -> int | None:
    """Return the table's next row id as PyIceberg loads it (a format 3 table's metadata)."""
    metadata = table.loaded().metadata
    assert isinstance(metadata, TableMetadataV3)
    return metadata.next_row_id


def test_rows_keep_their_ids_through_copy_on_write_changes(table: SparkTable) -> None:
    _create(table, "'format-version'='3'")
    table.sql("INSERT INTO {t} VALUES (1, 'ann', 'a'), (2, 'bob', 'a')")
    table.sql("INSERT INTO {t} VALUES (3, 'cy', 'b')")
    assert _next_row_id(table) == 3
    assert table.sql(LINEAGE) == [(1, 0, 1), (2, 1, 1), (3, 2, 2)]
    table.sql("UPDATE {t} SET name = 'bo' WHERE id = 2")
    assert table.sql(LINEAGE) == [(1, 0, 1), (2, 1, 3), (3, 2, 2)]
    assert table.read() == [(1, "ann", "a"), (2, "bo", "a"), (3, "cy", "b")]
    snapshots = table.loaded().snapshots()
    assert [s.first_row_id for s in snapshots] == [0, 2, 3]


def test_the_spark_source_reads_a_format_3_table_and_writes_none(table: SparkTable) -> None:
    _create(table, "'format-version'='3'")
    table.sql("INSERT INTO {t} VALUES (1, 'ann', 'a')")
    with pytest.raises(PySparkException, match="format version 3, whose rows keep ids"):
        table.source_append((2, "bob", "a"))
    assert table.read() == [(1, "ann", "a")]  # Spark, PyIceberg and the Spark source
    assert _next_row_id(table) == 1


def test_a_format_2_table_upgraded_to_3_gives_its_old_rows_ids(table: SparkTable) -> None:
    _create(table, "'format-version'='2'")
    table.sql("INSERT INTO {t} VALUES (1, 'ann', 'a'), (2, 'bob', 'a')")
    table.sql("ALTER TABLE {t} SET TBLPROPERTIES ('format-version'='3')")
    assert table.loaded().metadata.format_version == 3
    table.sql("INSERT INTO {t} VALUES (3, 'cy', 'b')")
    assert table.read() == [(1, "ann", "a"), (2, "bob", "a"), (3, "cy", "b")]
    ids = [r[1] for r in table.sql(LINEAGE)]
    assert None not in ids and len(set(ids)) == 3

"""Upserts and deletes by key, on a real catalog server and a real local Spark session.

The files that hold a key are written again without its rows, and their removal commits with
the write's own files: a read as of a moment before still sees the old rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from api.client import CatalogClient
from catalog.data.warehouse import table_folder
from tests.integration.api.servers import RunningServer

pytestmark = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)


class Items:
    """PUBLIC.ITEMS (ID key, V) in a zone of two partitions, written and read through Spark."""

    def __init__(self, spark: SparkSession, client: CatalogClient, url: str) -> None:
        self.spark, self.client, self.url = spark, client, url
        client.sql("CREATE ZONE TWO WITH PARTITIONS=2, STORAGE_PROFILES='default'")
        client.sql("CREATE TABLE ITEMS (ID BIGINT PRIMARY KEY, V VARCHAR(10)) ZONE TWO")
        self.table_id = client.table("PUBLIC", "ITEMS").id

    def write(self, rows: list[tuple[Any, ...]], schema: str, kind: str) -> None:
        frame = self.spark.createDataFrame(rows, schema).coalesce(1)
        writer = frame.write.format("catalog").option("catalog_url", self.url)
        writer.option("write", kind).mode("append").save("PUBLIC.ITEMS")

    def rows(self, at: int | None = None) -> list[tuple[Any, ...]]:
        reader = self.spark.read.format("catalog").option("catalog_url", self.url)
        if at is not None:
            reader = reader.option("as_of", str(at))
        return sorted(tuple(r) for r in reader.load("PUBLIC.ITEMS").collect())

    def commits(self) -> int:
        return len(self.client.data_commits(self.table_id, history=True).commits)


@pytest.fixture
def items(spark: SparkSession, catalog_server: RunningServer) -> Iterator[Items]:
    with CatalogClient(catalog_server.url) as client:
        yield Items(spark, client, catalog_server.url)


def test_an_upsert_replaces_rows_by_key_and_adds_the_others(items: Items, warehouse: Path) -> None:
    items.write([(1, "a"), (2, "b"), (3, "c"), (4, "d")], "ID long, V string", "append")
    before = items.client.now()

    items.write([(2, "B"), (5, "e")], "ID long, V string", "upsert")

    assert items.rows() == [(1, "a"), (2, "B"), (3, "c"), (4, "d"), (5, "e")]
    assert items.rows(at=before) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    # Only the file that held key 2 was written again; the other partition's file stays.
    latest = items.client.data_commits(items.table_id, history=True).commits[-1]
    assert latest.removed is not None and len(latest.removed) == 1
    visible = items.client.data_commits(items.table_id).commits
    paths = {f.path for commit in visible for f in commit.files}
    assert latest.removed[0] not in paths
    folder = Path(table_folder(str(warehouse), items.table_id))
    assert all((folder / path).is_file() for path in paths)


def test_a_delete_removes_the_keys_it_is_given(items: Items) -> None:
    items.write([(1, "a"), (2, "b"), (3, "c")], "ID long, V string", "append")

    items.write([(1, "ignored"), (9, "absent")], "ID long, V string", "delete")
    assert items.rows() == [(2, "b"), (3, "c")]

    commits = items.commits()
    items.write([(7,), (8,)], "ID long", "delete")  # keys the table does not hold
    assert items.commits() == commits  # nothing to commit
    items.write([(2,), (3,)], "ID long", "delete")
    assert items.rows() == []


def test_rows_written_before_a_column_was_added_keep_its_default(items: Items) -> None:
    items.write([(1, "a"), (2, "b")], "ID long, V string", "append")
    items.client.sql("ALTER TABLE ITEMS ADD COLUMN N INT DEFAULT 7")

    items.write([(2, "B", 1)], "ID long, V string, N int", "upsert")

    assert items.rows() == [(1, "a", 7), (2, "B", 1)]


def test_bad_upserts_and_deletes_are_refused_and_change_nothing(items: Items) -> None:
    items.write([(1, "a")], "ID long, V string", "append")
    commits = items.commits()

    with pytest.raises(PySparkException, match="PRIMARY_KEY_VIOLATION"):
        items.write([(2, "x"), (2, "y")], "ID long, V string", "upsert")
    with pytest.raises(PySparkException, match=r"takes append \(the default\), upsert or delete"):
        items.write([(1, "x")], "ID long, V string", "merge")
    with pytest.raises(PySparkException, match="key column ID is missing"):
        items.write([("a",)], "V string", "delete")
    frame = items.spark.createDataFrame([(1, "x")], "ID long, V string")
    writer = frame.write.format("catalog").option("catalog_url", items.url)
    with pytest.raises(PySparkException, match=r'with mode\("append"\)'):
        writer.option("write", "upsert").mode("overwrite").save("PUBLIC.ITEMS")

    assert items.commits() == commits
    assert items.rows() == [(1, "a")]


def test_a_table_without_a_key_takes_appends_and_refuses_changes_by_key(
    spark: SparkSession, catalog_server: RunningServer
) -> None:
    """A keyless table (as an Iceberg engine creates it) takes repeated rows; an upsert or
    a delete is refused, naming the table, before anything is written."""
    url = catalog_server.url
    with CatalogClient(url) as client:
        client.sql("CREATE ZONE TWO WITH PARTITIONS=2, STORAGE_PROFILES='default'")
        client.execute(
            {
                "op": "create_table",
                "name": "LOG",
                "columns": [{"name": "ID", "type": "INT64"}, {"name": "V", "type": "STRING"}],
                "primary_key": [],
                "keyless": True,
                "zone": "TWO",
            }
        )
    frame = spark.createDataFrame([(1, "a"), (1, "a"), (2, "b")], "ID long, V string")
    for _ in range(2):
        frame.write.format("catalog").option("catalog_url", url).mode("append").save("PUBLIC.LOG")
    rows = spark.read.format("catalog").option("catalog_url", url).load("PUBLIC.LOG").collect()
    assert sorted(tuple(r) for r in rows) == [(1, "a")] * 4 + [(2, "b")] * 2
    for kind in ("upsert", "delete"):
        writer = frame.write.format("catalog").option("catalog_url", url).option("write", kind)
        with pytest.raises(PySparkException, match="LOG has no primary key"):
            writer.mode("append").save("PUBLIC.LOG")

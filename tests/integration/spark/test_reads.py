"""Reads that skip work, on a real catalog server and a real local Spark session.

Pruning is proven by files not opened: the files a filter rules out are overwritten with
garbage, and the read still answers (a read that needs one of them fails).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from api.client import CatalogClient
from catalog import commands as c
from catalog.data.warehouse import table_folder
from tests.integration.api.servers import RunningServer

pytestmark = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)


class Facts:
    """PUBLIC.FACTS in a zone of ``partitions`` partitions: writes and reads through Spark."""

    def __init__(self, spark: SparkSession, server: RunningServer, warehouse: Path) -> None:
        self.spark, self.warehouse = spark, warehouse
        self.client = CatalogClient(server.url)
        self.options = {
            "catalog_url": server.url,
            "warehouse": str(warehouse),
            "table": "PUBLIC.FACTS",
        }

    def create(self, partitions: int) -> None:
        self.client.execute(c.CreateZone(name="Z", partitions=partitions, replicas=1))
        self.client.sql(
            "CREATE TABLE FACTS (ID BIGINT PRIMARY KEY, N INT, S VARCHAR(20), F DOUBLE, D DATE)"
            " ZONE Z"
        )

    def write(self, rows: list[tuple[Any, ...]], schema: str) -> None:
        frame = self.spark.createDataFrame(rows, schema).coalesce(1)
        frame.write.format("catalog").options(**self.options).mode("append").save()

    def read(self, **options: str) -> DataFrame:
        return self.spark.read.format("catalog").options(**self.options, **options).load()

    def files(self) -> list[Path]:
        table_id = self.client.table("PUBLIC", "FACTS").id
        folder = Path(table_folder(str(self.warehouse), table_id))
        return sorted(folder.glob("p*/*.parquet"), key=lambda p: p.stat().st_mtime_ns)


@pytest.fixture
def facts(spark: SparkSession, catalog_server: RunningServer, warehouse: Path) -> Iterator[Facts]:
    table = Facts(spark, catalog_server, warehouse)
    try:
        yield table
    finally:
        table.client.close()


def ids(frame: DataFrame) -> list[int]:
    return sorted(row.ID for row in frame.collect())


def test_a_filter_reads_only_the_files_that_may_hold_its_rows(facts: Facts) -> None:
    facts.create(partitions=1)
    for batch in range(10):
        rows = [(i, i % 7, f"s{i}", i / 2, None) for i in range(batch * 100, batch * 100 + 100)]
        facts.write(rows, "ID long, N int, S string, F double, D date")
    files = facts.files()
    assert len(files) == 10
    for path in files[1:]:
        path.write_bytes(b"not parquet: opening this file fails the read")

    assert ids(facts.read().where("ID = 42")) == [42]
    assert ids(facts.read().where("ID IN (3, 99, 5000)")) == [3, 99]
    assert ids(facts.read().where("ID < 2 AND S LIKE 's1%'")) == [1]
    assert facts.read().where("ID = 42").rdd.getNumPartitions() == 1
    assert facts.read().where("ID > 5000").count() == 0  # no file planned: Spark's empty task
    with pytest.raises(PySparkException):
        facts.read().where("ID = 150").collect()  # its file is garbage: it would be noticed


def test_input_partitions_follow_files_and_bytes_never_empty_table_partitions(
    facts: Facts,
) -> None:
    facts.create(partitions=25)
    assert facts.read().rdd.getNumPartitions() == 1  # no files: Spark's one empty task
    facts.write(
        [(1, 1, "a", 1.0, None), (2, 2, "b", 2.0, None)],
        "ID long, N int, S string, F double, D date",
    )
    assert len(facts.files()) == 2
    assert facts.read(parallelism="1").rdd.getNumPartitions() == 1  # two small files, one task
    assert facts.read(parallelism="2").rdd.getNumPartitions() == 2  # spread over two cores
    tiny = {"max_partition_bytes": "1", "open_cost_bytes": "1"}
    assert facts.read(**tiny).rdd.getNumPartitions() == 2  # one file a task
    assert ids(facts.read(**tiny)) == [1, 2]
    with pytest.raises(PySparkException, match="option parallelism must be a positive whole"):
        facts.read(parallelism="none").collect()


CONDITIONS = [
    "ID = 4",
    "ID BETWEEN 3 AND 12",
    "M = 3",
    "M <> 3",
    "M IS NULL",
    "M IS NOT NULL",
    "M IN (1, 2)",
    "NOT (M IN (1, 2))",
    "M <=> NULL",
    "M <=> 2",
    "NOT (M <=> 2)",
    "E = 7",
    "E > 7",
    "E IS NULL",
    "G IS NULL",
    "G = 1",
    "S LIKE 'a%'",
    "S LIKE '%z'",
    "S LIKE '%b%'",
    "S > 'b'",
    "F > 0.5",
    "F = double('NaN')",
    "F < 100",
    "D >= date'2024-01-02'",
    "D IS NULL",
    "M > 1 AND S LIKE 'a%'",
    "E = 7 AND ID < 5",
    "M = 1 OR E = 9",
]


def test_pushed_filters_give_the_rows_spark_gives_across_evolution(facts: Facts) -> None:
    facts.create(partitions=2)
    day = dt.date.fromisoformat
    old = [
        (1, 1, "apple", 0.25, day("2024-01-01")),
        (2, None, "abz", float("nan"), None),
        (3, 3, None, None, day("2024-01-03")),
        (4, 2, "bob", -1.0, day("2024-01-02")),
        (5, 2, "cab", 2.0, None),
    ]
    facts.write(old, "ID long, N int, S string, F double, D date")
    facts.client.sql("ALTER TABLE FACTS RENAME COLUMN N TO M")
    facts.client.sql("ALTER TABLE FACTS ADD COLUMN E INT DEFAULT 7")
    facts.client.sql("ALTER TABLE FACTS ADD COLUMN G INT")
    new = [
        (10, 1, "zz", 9.5, day("2024-02-01"), 9, 1),
        (11, None, None, float("nan"), None, None, None),
        (12, 3, "abba", 0.75, day("2024-01-02"), 7, None),
        (13, 2, "b", 100.0, None, 8, 2),
    ]
    facts.write(new, "ID long, M int, S string, F double, D date, E int, G int")
    whole = facts.read()
    plain = facts.spark.createDataFrame(whole.collect(), whole.schema)  # filtered by Spark only
    for condition in CONDITIONS:
        assert ids(facts.read().where(condition)) == ids(plain.where(condition)), condition

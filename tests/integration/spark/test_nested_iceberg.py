"""Nested columns between the Spark source and PyIceberg: each reads what the other wrote.

The Spark source writes a field id on every nested field (a struct's fields, a list's element,
a map's key and value) as Iceberg does, so PyIceberg scans its files by id; and it reads the
nested files PyIceberg writes by the same ids.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from api.client import CatalogClient
from spark.schema import schema_at
from tests.integration.api.servers import RunningServer, ServerFactory
from tests.integration.iceberg.conftest import rest_catalog
from tests.integration.spark.test_nested import CREATE, ROWS

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def server(tmp_path: Path, warehouse: Path) -> Iterator[RunningServer]:
    factory = ServerFactory()
    try:
        yield factory.start(f"sqlite:///{tmp_path}/catalog.db", warehouse=str(warehouse))
    finally:
        factory.stop_all()


def _spark_rows(spark: SparkSession, url: str) -> list[dict[str, Any]]:
    frame = spark.read.format("catalog").option("catalog_url", url).load("PUBLIC.EV")
    return sorted((r.asDict(recursive=True) for r in frame.collect()), key=lambda r: r["ID"])


def test_pyiceberg_and_the_spark_source_read_each_others_nested_rows(
    spark: SparkSession, server: RunningServer
) -> None:
    with CatalogClient(server.url) as client:
        client.sql("CREATE ZONE TWO WITH PARTITIONS=2, STORAGE_PROFILES='default'")
        client.execute([CREATE])
        frame = spark.createDataFrame(ROWS, schema_at(client, "PUBLIC.EV")).coalesce(1)
    frame.write.format("catalog").option("catalog_url", server.url).mode("append").save("PUBLIC.EV")

    table = rest_catalog(server).load_table("PUBLIC.EV")
    scanned = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["ID"])
    assert scanned == [_iceberg_row(r) for r in ROWS]

    more = {**ROWS[0], "ID": 10, "PAYLOAD": {**ROWS[0]["PAYLOAD"], "N": -3}}
    table.append(_iceberg_rows(table.schema().as_arrow(), [more]))
    assert _spark_rows(spark, server.url) == [*ROWS, more]


def _iceberg_rows(schema: pa.Schema, rows: list[dict[str, Any]]) -> pa.Table:
    """Return rows as PyIceberg's ``append`` takes them.

    UUIDs go in as 16 bytes: Arrow builds no ``uuid`` value from Python values in a list.
    """
    tags = schema.field("TAGS")
    rest = pa.schema([f for f in schema if f.name != "TAGS"])
    data = pa.Table.from_pylist([_iceberg_row(r) for r in rows], schema=rest)
    values = [[None if t is None else uuid.UUID(t).bytes for t in r["TAGS"]] for r in rows]
    storage = pa.array(values, pa.large_list(pa.binary(16)))
    element = pa.ExtensionArray.from_storage(tags.type.value_type, storage.values)
    column = pa.LargeListArray.from_arrays(storage.offsets, element, type=tags.type)
    return data.append_column(tags, column).select(schema.names)


def _iceberg_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row as PyIceberg's Arrow has it: maps as pairs, UUIDs as ``uuid.UUID``."""
    attrs = row["ATTRS"]
    tags = row["TAGS"]
    return {
        **row,
        "ATTRS": None if attrs is None else list(attrs.items()),
        "TAGS": None if tags is None else [None if t is None else uuid.UUID(t) for t in tags],
    }

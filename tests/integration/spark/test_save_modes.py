"""Spark save modes on a catalog table, as Spark really hands them to the data source.

Spark gives a Python data source only ``append`` and ``overwrite`` (``writer(schema,
overwrite)``); it refuses every other mode itself, before the source runs, naming the two that
work. These tests pin that down, so a Spark that starts passing the other modes is noticed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from api.client import CatalogClient
from tests.integration.api.servers import RunningServer

pytestmark = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)


def test_append_and_overwrite_work_every_other_mode_is_refused_naming_them(
    spark: SparkSession, catalog_server: RunningServer, warehouse: Path
) -> None:
    options = {"catalog_url": catalog_server.url, "warehouse": str(warehouse), "table": "T"}
    with CatalogClient(catalog_server.url) as client:
        client.sql("CREATE TABLE T (ID BIGINT PRIMARY KEY, V VARCHAR(10))")

    def write(rows: list[tuple[int, str]], mode: str | None) -> None:
        writer = spark.createDataFrame(rows, "ID long, V string").write.format("catalog")
        writer = writer.options(**options)
        (writer if mode is None else writer.mode(mode)).save()

    def read() -> list[tuple[int, str]]:
        frame = spark.read.format("catalog").options(**options).load()
        return sorted((row.ID, row.V) for row in frame.collect())

    write([(1, "a")], "append")
    write([(2, "b")], "append")
    assert read() == [(1, "a"), (2, "b")]
    write([(3, "c")], "overwrite")
    assert read() == [(3, "c")]
    for mode in (None, "error", "errorifexists", "default", "ignore"):
        with pytest.raises(AnalysisException) as info:
            write([(9, "z")], mode)
        message = str(info.value)
        assert "UNSUPPORTED_DATA_SOURCE_SAVE_MODE" in message, mode
        assert '"Append" or "Overwrite"' in message, mode
        assert read() == [(3, "c")]  # nothing was written

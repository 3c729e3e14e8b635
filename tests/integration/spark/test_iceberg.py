"""The Spark source and PyIceberg on one table: each reads what the other committed.

PyIceberg writes through the server's Iceberg REST catalog; the Spark source reads those files
as of a timestamp like its own, and its writes become snapshots PyIceberg scans.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.expressions import EqualTo
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from api.client import CatalogClient
from catalog.warehouse import table_folder
from tests.integration.api.servers import RunningServer, ServerFactory
from tests.integration.iceberg.conftest import rest_catalog
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def server(tmp_path: Path, warehouse: Path) -> Iterator[RunningServer]:
    """A server whose warehouse is ``warehouse``, the folder the Spark source is given."""
    factory = ServerFactory()
    try:
        yield factory.start(f"sqlite:///{tmp_path}/catalog.db", warehouse=str(warehouse))
    finally:
        factory.stop_all()


def _read(spark: SparkSession, options: dict[str, str], **more: str) -> DataFrame:
    return spark.read.format("catalog").options(**options, **more).load()


def _ids(frame: DataFrame) -> list[int]:
    return sorted(row["ID"] for row in frame.select("ID").collect())


def test_spark_reads_what_pyiceberg_committed_as_of_each_commit(
    spark: SparkSession, server: RunningServer, warehouse: Path
) -> None:
    iceberg = rest_catalog(server)
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    table.append(rows(table, range(1, 4)))
    table.append(rows(table, range(4, 6)))
    table.delete(EqualTo(term="ID", value=2))
    options = {"catalog_url": server.url, "warehouse": str(warehouse), "table": "PUBLIC.EVENTS"}
    with CatalogClient(server.url) as client:
        table_id = client.table("PUBLIC", "EVENTS").id
        first, second, third = client.data_commits(table_id, history=True).commits
    assert third.removed
    assert _ids(_read(spark, options)) == [1, 3, 4, 5]
    assert _ids(_read(spark, options, as_of=str(first.commit_ts))) == [1, 2, 3]
    assert _ids(_read(spark, options, as_of=str(second.commit_ts))) == [1, 2, 3, 4, 5]
    values = _read(spark, options).where("ID = 4").select("COUNT", "RATIO").collect()
    assert [(r["COUNT"], r["RATIO"]) for r in values] == [(40, 2.0)]
    # The bounds from the manifests prune: a read of ids above 3 does not open the file the
    # delete rewrote (ids 1 and 3), so garbage in its place does not fail it.
    [rewritten] = third.files
    (table_folder(warehouse, table_id) / rewritten.path).write_bytes(b"not parquet")
    assert _ids(_read(spark, options).where("ID > 3")) == [4, 5]


def test_pyiceberg_scans_what_spark_wrote_and_keys_hold_across_both(
    spark: SparkSession, server: RunningServer, warehouse: Path
) -> None:
    iceberg = rest_catalog(server)
    iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    options = {"catalog_url": server.url, "warehouse": str(warehouse), "table": "PUBLIC.EVENTS"}

    def write(ids: list[int], mode: str = "append") -> None:
        frame = spark.createDataFrame([(i, i * 10) for i in ids], "ID BIGINT, COUNT INT")
        frame.coalesce(1).write.format("catalog").options(**options).mode(mode).save()

    write([1, 2])
    table = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(table) == [1, 2]
    table.append(rows(table, range(3, 5)))
    assert _ids(_read(spark, options)) == [1, 2, 3, 4]
    with pytest.raises(PySparkException, match="PRIMARY_KEY_VIOLATION"):
        write([4, 5])  # PyIceberg wrote key 4
    write([5])
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [1, 2, 3, 4, 5]
    write([7], mode="overwrite")
    scanned = iceberg.load_table("PUBLIC.EVENTS").scan().to_arrow()
    assert scanned.select(["ID", "COUNT"]) == pa.table(
        {"ID": pa.array([7], pa.int64()), "COUNT": pa.array([70], pa.int32())}
    ).cast(scanned.select(["ID", "COUNT"]).schema)

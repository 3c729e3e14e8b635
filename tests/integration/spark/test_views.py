"""The catalog's tables in Spark SQL at one timestamp, on a real server and a real Spark session.

Jobs here name only the catalog's URL and the tables: each table's data is in the folder it
recorded when it was created.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from api.client import CatalogClient
from catalog import ValidationError
from catalog.data.files import DataFile
from spark.source import register
from spark.views import quoted, register_views
from tests.integration.api.servers import RunningServer

pytestmark = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)


@pytest.fixture
def client(catalog_server: RunningServer) -> Iterator[CatalogClient]:
    with CatalogClient(catalog_server.url) as own:
        yield own


def _append(spark: SparkSession, url: str, table: str, rows: list[Any], schema: str) -> None:
    frame = spark.createDataFrame(rows, schema).coalesce(1)
    frame.write.format("catalog").option("catalog_url", url).mode("append").save(table)


def _rows(spark: SparkSession, query: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in spark.sql(query).collect()]


def test_tables_join_in_spark_sql_at_one_timestamp(
    spark: SparkSession, catalog_server: RunningServer, client: CatalogClient, warehouse: Path
) -> None:
    url = catalog_server.url
    client.sql("CREATE TABLE USERS (ID BIGINT PRIMARY KEY, NAME VARCHAR(20))")
    client.sql("CREATE TABLE EVENTS (ID BIGINT PRIMARY KEY, USER_ID BIGINT, KIND VARCHAR(10))")
    client.sql("CREATE TABLE NOTHING_YET (ID INT PRIMARY KEY, AT TIMESTAMP)")
    assert client.table("PUBLIC", "USERS").location == str(
        warehouse / f"table_{client.table('PUBLIC', 'USERS').id}"
    )
    _append(spark, url, "PUBLIC.USERS", [(1, "ann"), (2, "bob")], "ID long, NAME string")
    events = "ID long, USER_ID long, KIND string"
    _append(spark, url, "PUBLIC.EVENTS", [(10, 1, "a"), (11, 2, "b"), (12, 1, "c")], events)
    # Files written before a rename and an added column are read by their own names.
    client.sql("ALTER TABLE EVENTS RENAME COLUMN KIND TO WHAT")
    client.sql("ALTER TABLE EVENTS ADD COLUMN SCORE INT DEFAULT 5")
    later = "ID long, USER_ID long, WHAT string, SCORE int"
    _append(spark, url, "PUBLIC.EVENTS", [(13, 2, "d", 7)], later)

    ts = register_views(spark, url, schemas=["PUBLIC"])

    joined = _rows(
        spark,
        "SELECT u.NAME, count(*) FROM PUBLIC.EVENTS e JOIN PUBLIC.USERS u ON e.USER_ID = u.ID "
        "GROUP BY u.NAME ORDER BY u.NAME",
    )
    assert joined == [("ann", 2), ("bob", 2)]
    assert _rows(spark, "SELECT ID, WHAT, SCORE FROM PUBLIC.EVENTS ORDER BY ID") == [
        (10, "a", 5),
        (11, "b", 5),
        (12, "c", 5),
        (13, "d", 7),
    ]
    assert _rows(spark, "SELECT * FROM PUBLIC.NOTHING_YET") == []
    assert spark.table("PUBLIC.NOTHING_YET").columns == ["ID", "AT"]
    # The views and the data source agree at the same timestamp.
    pinned = spark.read.format("catalog").option("catalog_url", url).option("as_of", str(ts))
    assert sorted(tuple(r) for r in pinned.load("PUBLIC.EVENTS").collect()) == _rows(
        spark, "SELECT * FROM PUBLIC.EVENTS ORDER BY ID"
    )

    # Pinned: a later write is not seen until the views are registered again.
    _append(spark, url, "PUBLIC.USERS", [(3, "cy")], "ID long, NAME string")
    assert _rows(spark, "SELECT count(*) FROM PUBLIC.USERS") == [(2,)]
    assert register_views(spark, url, schemas=["PUBLIC"]) > ts
    assert _rows(spark, "SELECT count(*) FROM PUBLIC.USERS") == [(3,)]
    # Registered again at the first timestamp, the views show that moment again.
    assert register_views(spark, url, as_of=ts) == ts
    assert _rows(spark, "SELECT count(*) FROM PUBLIC.USERS") == [(2,)]


def test_names_spark_cannot_hold_are_refused_before_anything_is_registered(
    spark: SparkSession, catalog_server: RunningServer, client: CatalogClient
) -> None:
    url = catalog_server.url
    client.sql('CREATE SCHEMA "Sales"')
    client.sql('CREATE TABLE "Sales".orders (ID INT PRIMARY KEY, "v" VARCHAR(5))')
    _append(spark, url, '"Sales".ORDERS', [(1, "x"), (2, "y")], "ID int, v string")

    register_views(spark, url, schemas=["Sales"])

    frame = spark.sql(f"SELECT ID, {quoted('v')} FROM Sales.ORDERS WHERE ID = 2")
    assert [tuple(r) for r in frame.collect()] == [(2, "y")]
    assert "EqualTo(ID,2)" in frame._jdf.queryExecution().toString()  # Spark's own pushdown

    client.sql('CREATE TABLE "Sales"."my orders" (ID INT PRIMARY KEY)')
    client.sql('CREATE TABLE "Sales"."Orders" (ID INT PRIMARY KEY)')
    with pytest.raises(ValueError, match=r'"Sales"."my orders", "Sales"."Orders"; read them'):
        register_views(spark, url, schemas=["Sales"])
    with pytest.raises(ValueError, match="no schema SALES in the catalog"):
        register_views(spark, url, schemas=["SALES"])


def test_tables_with_time_or_uuid_in_their_files_are_refused_before_anything_is_registered(
    spark: SparkSession, catalog_server: RunningServer, client: CatalogClient
) -> None:
    # Spark's own Parquet reader cannot read Iceberg's time and uuid, as the files hold them.
    url = catalog_server.url
    client.sql("CREATE SCHEMA CLOCKS")
    client.sql("CREATE TABLE CLOCKS.PLAIN (ID INT PRIMARY KEY)")
    client.sql("CREATE TABLE CLOCKS.TIMES (ID INT PRIMARY KEY, T TIME(6))")
    client.sql("CREATE TABLE CLOCKS.KEYS (ID INT PRIMARY KEY, U UUID)")
    _append(
        spark, url, "CLOCKS.KEYS", [(1, "0f8fad5b-d9cb-469f-a165-70867728950e")], "ID int, U string"
    )
    client.sql("ALTER TABLE CLOCKS.KEYS DROP COLUMN U")  # its file still holds it
    refused = r"CLOCKS.TIMES \(column T, TIME\), CLOCKS.KEYS \(column U, UUID\); read them"
    with pytest.raises(ValidationError, match=refused) as caught:
        register_views(spark, url, schemas=["CLOCKS"])
    assert caught.value.code == "VALIDATION_ERROR"
    assert 'spark.read.format("catalog")' in str(caught.value)
    assert not spark.catalog.databaseExists("CLOCKS")  # nothing was registered

    client.sql("DROP TABLE CLOCKS.TIMES")
    overwrite = spark.createDataFrame([(2,)], "ID int").coalesce(1)
    overwrite.write.format("catalog").option("catalog_url", url).mode("overwrite").save(
        "CLOCKS.KEYS"
    )
    register_views(spark, url, schemas=["CLOCKS"])
    assert _rows(spark, "SELECT * FROM CLOCKS.KEYS") == [(2,)]
    assert _rows(spark, "SELECT * FROM CLOCKS.PLAIN") == []


def test_a_table_with_rows_deleted_by_position_is_refused_and_read_by_the_source(
    spark: SparkSession, catalog_server: RunningServer, client: CatalogClient
) -> None:
    url = catalog_server.url
    client.sql("CREATE SCHEMA MOR")
    client.sql("CREATE TABLE MOR.T (ID INT PRIMARY KEY)")
    _append(spark, url, "MOR.T", [(1,), (2,), (3,)], "ID int")
    table = client.table("MOR", "T")
    assert table.location is not None
    folder = Path(table.location)
    files = [folder / f.path for c in client.data_commits(table.id).commits for f in c.files]
    (holder,) = [p for p in files if 2 in pq.read_table(p)["ID"].to_pylist()]
    position = pq.read_table(holder)["ID"].to_pylist().index(2)
    deleted = pa.table({"file_path": [str(holder)], "pos": [position]})
    pq.write_table(deleted, folder / "deletes-1.parquet")
    size = (folder / "deletes-1.parquet").stat().st_size
    deletes = DataFile(
        path="deletes-1.parquet", partition=0, rows=1, size=size, content="position-deletes"
    )
    client.commit_data(
        table.id, [deletes], schema_version=table.schema_version, request_id="mor-deletes-1"
    )
    with pytest.raises(ValidationError, match=r"position delete files.*: MOR\.T; read them"):
        register_views(spark, url, schemas=["MOR"])
    assert not spark.catalog.databaseExists("MOR")  # nothing was registered
    source = spark.read.format("catalog").option("catalog_url", url).load("MOR.T")
    assert sorted(r.ID for r in source.collect()) == [1, 3]  # the row of ID 2 is left out


def test_the_sessions_catalog_url_is_every_jobs_default(
    spark: SparkSession, catalog_server: RunningServer, client: CatalogClient
) -> None:
    client.sql("CREATE TABLE T (ID INT PRIMARY KEY)")
    spark.conf.set("catalog.url", catalog_server.url)
    try:
        register(spark)
        rows = spark.createDataFrame([(1,), (2,)], "ID int")
        rows.write.format("catalog").mode("append").save("PUBLIC.T")
        assert sorted(r.ID for r in spark.read.format("catalog").load("PUBLIC.T").collect()) == [
            1,
            2,
        ]
    finally:
        spark.conf.unset("catalog.url")
        register(spark)


def test_rows_written_before_a_replace_of_the_rows_are_read_by_no_reader(
    spark: SparkSession, catalog_server: RunningServer, client: CatalogClient
) -> None:
    """A NOT NULL column added by a replace of the rows: the earlier files hold none of it."""
    url = catalog_server.url
    client.sql("CREATE TABLE T (ID BIGINT PRIMARY KEY, NAME VARCHAR(20))")
    _append(spark, url, "PUBLIC.T", [(1, "a"), (2, "b")], "ID long, NAME string")
    before = client.now()
    # The replace through Iceberg's REST protocol, as Java's client sends it (Spark's
    # REPLACE TABLE): the same columns and a required one, N.
    table_path = f"{url}/iceberg/v1/namespaces/PUBLIC/tables/T"
    metadata = httpx.get(table_path).json()["metadata"]
    schema = {
        "type": "struct",
        "fields": [
            *metadata["schemas"][-1]["fields"],
            {"id": metadata["last-column-id"] + 1, "name": "N", "type": "int", "required": True},
        ],
        "identifier-field-ids": metadata["schemas"][-1]["identifier-field-ids"],
    }
    replace = {
        "requirements": [{"type": "assert-table-uuid", "uuid": metadata["table-uuid"]}],
        "updates": [
            {
                "action": "add-schema",
                "schema": schema,
                "last-column-id": metadata["last-column-id"] + 1,
            },
            {"action": "set-current-schema", "schema-id": -1},
            {"action": "remove-snapshot-ref", "ref-name": "main"},
        ],
    }
    answer = httpx.post(table_path, json=replace, timeout=30)
    assert answer.is_success, answer.text
    replaced = client.table("PUBLIC", "T")
    assert replaced.rows_from == replaced.schema_version  # the rows count from the replace
    _append(spark, url, "PUBLIC.T", [(3, "c", 30)], "ID long, NAME string, N int")
    source = spark.read.format("catalog").option("catalog_url", url)
    assert [tuple(r) for r in source.load("PUBLIC.T").collect()] == [(3, "c", 30)]
    register_views(spark, url, schemas=["PUBLIC"])
    assert _rows(spark, "SELECT * FROM PUBLIC.T") == [(3, "c", 30)]
    # As of before the replace, the table's rows are the earlier ones.
    earlier = source.option("as_of", str(before)).load("PUBLIC.T").collect()
    assert sorted(tuple(r) for r in earlier) == [(1, "a"), (2, "b")]

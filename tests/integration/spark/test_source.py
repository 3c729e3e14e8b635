"""The ``catalog`` data source against a real catalog server and a real local Spark session."""

from __future__ import annotations

import datetime as dt
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from api.client import CatalogClient
from api.wire.roles import Role
from catalog import ColumnType
from catalog import commands as c
from catalog.data.warehouse import table_folder
from spark.warehouse import remove_orphans
from tests.integration.api.servers import RunningServer, ServerFactory, issue_token

sqlite_only = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)


class Table:
    """PUBLIC.ORDERS on one server and warehouse: DDL, writes and reads through Spark."""

    def __init__(self, spark: SparkSession, server: RunningServer, warehouse: Path) -> None:
        self.spark, self.server, self.warehouse = spark, server, warehouse
        self.client = CatalogClient(server.url)

    def create(self, partitions: int = 3, name: str = "ORDERS") -> None:
        if self.client.catalog().find_zone("Z") is None:
            self.client.execute(c.CreateZone(name="Z", partitions=partitions, replicas=1))
        self.client.sql(
            f"CREATE TABLE {name} (ID BIGINT PRIMARY KEY, QTY INT, NAME VARCHAR(20)) ZONE Z"
        )

    def ddl(self, *commands: c.CommandBase) -> int:
        return self.client.execute(list(commands)).version

    def write(self, rows: list[tuple[Any, ...]], schema: str, mode: str = "append") -> None:
        (
            self.spark.createDataFrame(rows, schema)
            .write.format("catalog")
            .option("catalog_url", self.server.url)
            .option("warehouse", str(self.warehouse))
            .option("table", "PUBLIC.ORDERS")
            .mode(mode)
            .save()
        )

    def read(self, as_of: object = None) -> DataFrame:
        reader = (
            self.spark.read.format("catalog")
            .option("catalog_url", self.server.url)
            .option("warehouse", str(self.warehouse))
            .option("table", "PUBLIC.ORDERS")
        )
        if as_of is not None:
            reader = reader.option("as_of", str(as_of))
        return reader.load()

    def rows(self, as_of: object = None) -> dict[int, tuple[Any, ...]]:
        return {r[0]: tuple(r) for r in self.read(as_of).collect()}


@pytest.fixture
def orders(spark: SparkSession, catalog_server: RunningServer, warehouse: Path) -> Iterator[Table]:
    table = Table(spark, catalog_server, warehouse)
    try:
        table.create()
        yield table
    finally:
        table.client.close()


def test_read_at_each_moment_has_that_moments_schema_and_data(orders: Table) -> None:
    orders.write([(i, i * 10, f"n{i}") for i in range(30)], "ID long, QTY int, NAME string")
    t1 = orders.client.now()
    note = c.Column(name="NOTE", type=ColumnType.STRING, length=10, default="none")
    orders.ddl(c.AddColumns(table="ORDERS", columns=[note]))
    orders.write([(100, 1, "x", "hello")], "ID long, QTY int, NAME string, NOTE string")
    t2 = orders.client.now()

    before = orders.read(t1)
    assert before.columns == ["ID", "QTY", "NAME"]
    assert sorted(orders.rows(t1)) == list(range(30))
    after = orders.rows(t2)
    assert orders.read(t2).columns == ["ID", "QTY", "NAME", "NOTE"]
    assert len(after) == 31
    assert after[3] == (3, 30, "n3", "none") and after[100] == (100, 1, "x", "hello")
    fields = orders.read(t2).schema.fields
    assert [f.metadata["column_id"] for f in fields] == [0, 1, 2, 3]


@sqlite_only
def test_as_of_takes_versions_and_rfc3339_times(orders: Table) -> None:
    orders.write([(1, 1, "a")], "ID long, QTY int, NAME string")
    created = orders.client.table_info("PUBLIC", "ORDERS").version
    time.sleep(0.05)
    moment = dt.datetime.now(dt.UTC)
    time.sleep(0.05)
    orders.ddl(c.DropColumns(table="ORDERS", columns=["NAME"]))
    orders.write([(2, 2)], "ID long, QTY int")
    assert orders.read(f"version={created}").columns == ["ID", "QTY", "NAME"]
    assert orders.rows(moment.isoformat()) == {1: (1, 1, "a")}
    assert orders.rows() == {1: (1, 1), 2: (2, 2)}


@sqlite_only
def test_evolution_reads_old_files_by_column_id(orders: Table) -> None:
    orders.write([(1, 5, "a"), (2, 6, "b")], "ID long, QTY int, NAME string")
    orders.ddl(
        c.RenameColumn(table="ORDERS", column="NAME", new_name="LABEL"),
        c.AlterColumn(table="ORDERS", column="QTY", type=ColumnType.INT64),
        c.AddColumns(
            table="ORDERS",
            columns=[c.Column(name="PRIO", type=ColumnType.INT16, nullable=False, default=7)],
        ),
    )
    orders.write([(3, 2**40, "c", 1)], "ID long, QTY long, LABEL string, PRIO short")
    df = orders.read()
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("ID", "bigint"),
        ("QTY", "bigint"),
        ("LABEL", "string"),
        ("PRIO", "smallint"),
    ]
    assert orders.rows() == {1: (1, 5, "a", 7), 2: (2, 6, "b", 7), 3: (3, 2**40, "c", 1)}
    orders.ddl(c.DropColumns(table="ORDERS", columns=["LABEL"]))
    # A new column reusing the dropped name is a new column: the old values do not come back.
    orders.ddl(
        c.AddColumns(table="ORDERS", columns=[c.Column(name="LABEL", type=ColumnType.STRING)])
    )
    assert orders.rows() == {1: (1, 5, 7, None), 2: (2, 6, 7, None), 3: (3, 2**40, 1, None)}


@sqlite_only
def test_a_table_recreated_under_the_same_name_does_not_see_the_old_files(orders: Table) -> None:
    orders.write([(1, 1, "old")], "ID long, QTY int, NAME string")
    old_id = orders.client.table("PUBLIC", "ORDERS").id
    orders.ddl(c.DropTable(name="ORDERS"))
    orders.create()
    assert orders.client.table("PUBLIC", "ORDERS").id != old_id
    assert orders.rows() == {}
    orders.write([(2, 2, "new")], "ID long, QTY int, NAME string")
    assert orders.rows() == {2: (2, 2, "new")}


@sqlite_only
def test_overwrite_replaces_the_rows_from_its_timestamp_on(orders: Table) -> None:
    orders.write([(1, 1, "a"), (2, 2, "b")], "ID long, QTY int, NAME string")
    t1 = orders.client.now()
    orders.write([(9, 9, "z")], "ID long, QTY int, NAME string", mode="overwrite")
    assert orders.rows() == {9: (9, 9, "z")}
    assert sorted(orders.rows(t1)) == [1, 2]


@sqlite_only
@pytest.mark.parametrize(
    ("rows", "schema", "message"),
    [
        ([(1, "many", "a")], "ID long, QTY string, NAME string", "column QTY is int32"),
        ([(1, 1, "a", 2)], "ID long, QTY int, NAME string, EXTRA int", "EXTRA is not in the table"),
        ([(1, "a")], "QTY int, NAME string", "key column ID is missing"),
        ([(None, 1, "a")], "ID long, QTY int, NAME string", "column ID is NOT NULL, but 1 row"),
        ([(1, 1, "x" * 21)], "ID long, QTY int, NAME string", "at most 20 characters"),
    ],
)
def test_a_bad_write_fails_clearly_and_leaves_nothing_visible(
    orders: Table, rows: list[tuple[Any, ...]], schema: str, message: str
) -> None:
    orders.write([(5, 5, "kept")], "ID long, QTY int, NAME string")
    with pytest.raises(PySparkException) as info:
        orders.write(rows, schema)
    assert message in str(info.value)
    assert orders.rows() == {5: (5, 5, "kept")}
    table_id = orders.client.table("PUBLIC", "ORDERS").id
    folder = Path(table_folder(str(orders.warehouse), table_id))
    files = sorted(folder.glob("p*/*.parquet*"))
    assert len(files) == 1  # the failed write's files were deleted on abort


@sqlite_only
def test_a_pinned_read_repeats_exactly_while_writes_and_ddl_run(orders: Table) -> None:
    orders.write([(i, i, "a") for i in range(10)], "ID long, QTY int, NAME string")
    pinned = orders.client.now()
    stop = threading.Event()
    errors: list[BaseException] = []

    def churn() -> None:
        with CatalogClient(orders.server.url) as client:
            table_id = client.table("PUBLIC", "ORDERS").id
            for i in range(200):
                if stop.is_set():
                    return
                try:
                    if i % 3 == 0:
                        extra = c.Column(name=f"C{i}", type=ColumnType.INT32)
                        client.execute(c.AddColumns(table="ORDERS", columns=[extra]))
                    else:
                        # A commit of an (empty) write, as a concurrent writer's would be.
                        client.commit_data(table_id, [], schema_version=1, request_id=f"c{i}")
                except BaseException as e:
                    errors.append(e)
                    return

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        first = orders.read(pinned)
        first_rows = sorted(tuple(r) for r in first.collect())
        for _ in range(3):
            again = orders.read(pinned)
            assert again.schema == first.schema
            assert sorted(tuple(r) for r in again.collect()) == first_rows
            orders.write([(100 + _, 1, "late")], "ID long, QTY int, NAME string")
    finally:
        stop.set()
        thread.join(30)
    assert not errors, errors
    assert len(first_rows) == 10
    assert len(orders.rows()) == 13


@sqlite_only
def test_orphans_of_a_killed_write_are_removed_after_the_grace_period(orders: Table) -> None:
    orders.write([(7, 7, "before")], "ID long, QTY int, NAME string")
    t1 = orders.client.now()
    orders.write([(1, 1, "a")], "ID long, QTY int, NAME string", mode="overwrite")
    table_id = orders.client.table("PUBLIC", "ORDERS").id
    folder = Path(table_folder(str(orders.warehouse), table_id))
    # What an executor of a job killed before its commit leaves: a whole, valid data file
    # beside the committed ones. Readers never see it, before or after it is cleaned up.
    orphan = folder / "p0" / "killed-job.parquet"
    killed = pa.table(
        {
            "ID": pa.array([666], pa.int64()),
            "QTY": pa.array([6], pa.int32()),
            "NAME": pa.array(["killed"], pa.string()),
        }
    )
    pq.write_table(killed, orphan)
    assert orders.rows() == {1: (1, 1, "a")}
    assert orders.rows(t1) == {7: (7, 7, "before")}
    warehouse = str(orders.warehouse)
    assert remove_orphans(orders.client, warehouse, table_id, older_than_s=3600) == []
    assert remove_orphans(orders.client, warehouse, table_id, older_than_s=0) == [str(orphan)]
    assert not orphan.exists()
    assert orders.rows() == {1: (1, 1, "a")}
    # Files an overwrite hid are not orphans: time travel still reads them.
    assert orders.rows(t1) == {7: (7, 7, "before")}


def test_reads_and_writes_with_a_token_when_the_server_checks_them(
    spark: SparkSession, warehouse: Path, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path}/secure.db"
    factory = ServerFactory()
    try:
        server = factory.start(store, auth="on")
        writer = issue_token(store, Role.WRITER)
        with CatalogClient(server.url, token=writer) as client:
            client.sql("CREATE TABLE ORDERS (ID BIGINT PRIMARY KEY, QTY INT, NAME VARCHAR(20))")
        frame = spark.createDataFrame([(1, 2, "x")], "ID long, QTY int, NAME string")
        options = {"catalog_url": server.url, "warehouse": str(warehouse), "table": "ORDERS"}
        with pytest.raises(PySparkException, match="UNAUTHENTICATED"):
            frame.write.format("catalog").options(**options).mode("append").save()
        frame.write.format("catalog").options(**options, token=writer).mode("append").save()
        reader = issue_token(store, Role.READER)
        rows = spark.read.format("catalog").options(**options, token=reader).load().collect()
        assert [tuple(r) for r in rows] == [(1, 2, "x")]
        fresh = spark.createDataFrame([(2, 3, "y")], "ID long, QTY int, NAME string")
        with pytest.raises(PySparkException, match="FORBIDDEN"):
            fresh.write.format("catalog").options(**options, token=reader).mode("append").save()
    finally:
        factory.stop_all()


def test_reads_and_writes_signed_in_as_a_principal(
    spark: SparkSession, warehouse: Path, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path}/signed.db"
    factory = ServerFactory()
    try:
        server = factory.start(store, auth="on")
        with CatalogClient(server.url, token=issue_token(store, Role.ADMIN)) as admin:
            made = admin.create_principal("nightly", Role.WRITER)
            admin.sql("CREATE TABLE ORDERS (ID BIGINT PRIMARY KEY, QTY INT, NAME VARCHAR(20))")
        credential = f"{made.client_id}:{made.client_secret}"
        frame = spark.createDataFrame([(1, 2, "x")], "ID long, QTY int, NAME string")
        options = {"catalog_url": server.url, "warehouse": str(warehouse), "table": "ORDERS"}
        writer = frame.write.format("catalog").options(**options, credential=credential)
        writer.mode("append").save()  # the driver and each task sign in
        read = spark.read.format("catalog").options(**options, credential=credential).load()
        assert [tuple(r) for r in read.collect()] == [(1, 2, "x")]
        wrong = f"{made.client_id}:not-the-secret"
        with pytest.raises(PySparkException, match="wrong client secret"):
            spark.read.format("catalog").options(**options, credential=wrong).load().collect()
    finally:
        factory.stop_all()


def test_a_principal_of_the_role_none_reads_and_writes_what_it_was_granted(
    spark: SparkSession, warehouse: Path, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path}/granted.db"
    factory = ServerFactory()
    try:
        server = factory.start(store, auth="on")
        with CatalogClient(server.url, token=issue_token(store, Role.ADMIN)) as admin:
            made = admin.create_principal("ann", Role.NONE)
            admin.sql(
                "CREATE TABLE ORDERS (ID BIGINT PRIMARY KEY, QTY INT, NAME VARCHAR(20));"
                "CREATE TABLE SECRETS (ID BIGINT PRIMARY KEY);"
                'GRANT USAGE ON SCHEMA PUBLIC TO USER "ann";'
                'GRANT SELECT, MODIFY ON TABLE ORDERS TO USER "ann"'
            )
        credential = f"{made.client_id}:{made.client_secret}"
        options = {"catalog_url": server.url, "warehouse": str(warehouse), "credential": credential}
        frame = spark.createDataFrame([(1, 2, "x")], "ID long, QTY int, NAME string")
        frame.write.format("catalog").options(**options, table="ORDERS").mode("append").save()
        read = spark.read.format("catalog").options(**options, table="ORDERS").load()
        assert [tuple(r) for r in read.collect()] == [(1, 2, "x")]
        with pytest.raises(PySparkException, match="SECRETS"):  # not there, as ann sees it
            spark.read.format("catalog").options(**options, table="SECRETS").load().collect()
    finally:
        factory.stop_all()


@sqlite_only
def test_rows_written_without_a_key_whose_default_is_rand_uuid_get_one_each(
    orders: Table,
) -> None:
    orders.client.sql(
        "CREATE TABLE EVENTS (ID UUID DEFAULT RAND_UUID, KIND VARCHAR(10), PRIMARY KEY (ID)) ZONE Z"
    )
    options = {"catalog_url": orders.server.url, "warehouse": str(orders.warehouse)}
    rows = [("click",), ("view",), ("click",)]
    frame = orders.spark.createDataFrame(rows, "KIND string")
    frame.write.format("catalog").options(**options).option("table", "EVENTS").mode("append").save()
    read = orders.spark.read.format("catalog").options(**options).option("table", "EVENTS")
    written = read.load().collect()
    keys = [uuid.UUID(r["ID"]) for r in written]
    assert len(set(keys)) == 3 and all(k.version == 4 for k in keys)
    assert sorted(r["KIND"] for r in written) == ["click", "click", "view"]

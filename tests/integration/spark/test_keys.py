"""The primary key of Spark writes, on a real catalog server and a real local Spark session.

A refused write leaves nothing visible and deletes its files. Races are real: writers on
threads (Spark jobs, or the data source's writer driven in-process as a job's driver drives it)
and commits through the REST API, with no hook to order them; exactly one of two writers of a
key wins whichever way the race goes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from api.client import CatalogClient
from catalog.data.warehouse import table_folder
from spark.keys import PrimaryKeyViolationError
from spark.source import CatalogDataSource, CatalogWriter, FilesWritten
from tests.integration.api.servers import RunningServer

sqlite_only = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)

SCHEMA = "REGION string, ID long, QTY int"


class Orders:
    """PUBLIC.ORDERS keyed by (REGION, ID) on one server and warehouse."""

    def __init__(self, spark: SparkSession, client: CatalogClient, url: str, warehouse: Path):
        self.spark, self.client, self.warehouse = spark, client, warehouse
        self.options = {"catalog_url": url, "warehouse": str(warehouse), "table": "PUBLIC.ORDERS"}
        self.client.sql(
            "CREATE TABLE ORDERS (REGION VARCHAR(4), ID BIGINT, QTY INT, PRIMARY KEY (REGION, ID))"
        )
        self.table_id = self.client.table("PUBLIC", "ORDERS").id

    def write(self, rows: list[tuple[str, int, int]], mode: str = "append") -> None:
        frame = self.spark.createDataFrame(rows, SCHEMA)
        frame.write.format("catalog").options(**self.options).mode(mode).save()

    def rows(self) -> list[tuple[str, int, int]]:
        frame = self.spark.read.format("catalog").options(**self.options).load()
        return sorted((r.REGION, r.ID, r.QTY) for r in frame.collect())

    def files(self) -> list[Path]:
        folder = Path(table_folder(str(self.warehouse), self.table_id))
        return sorted(folder.glob("p*/*.parquet*"))

    def committed_files(self) -> list[Path]:
        folder = Path(table_folder(str(self.warehouse), self.table_id))
        commits = self.client.data_commits(self.table_id).commits
        return sorted(folder / f.path for commit in commits for f in commit.files)

    def prepared(self, rows: list[tuple[str, int, int]]) -> tuple[CatalogWriter, FilesWritten]:
        """A writer with its files written, as a job's tasks leave it before the commit."""
        frame = self.spark.createDataFrame([], SCHEMA)
        writer = CatalogDataSource(self.options).writer(frame.schema, overwrite=False)
        batch = pa.RecordBatch.from_pylist(
            [{"REGION": r, "ID": i, "QTY": q} for r, i, q in rows],
            schema=pa.schema([("REGION", pa.string()), ("ID", pa.int64()), ("QTY", pa.int32())]),
        )
        return writer, writer.write(iter([batch]))


@pytest.fixture
def orders(spark: SparkSession, catalog_server: RunningServer, warehouse: Path) -> Iterator[Orders]:
    with CatalogClient(catalog_server.url) as client:
        yield Orders(spark, client, catalog_server.url, warehouse)


def refused(write: Callable[[], None]) -> str:
    with pytest.raises(PySparkException) as info:
        write()
    message = str(info.value)
    assert "PRIMARY_KEY_VIOLATION" in message
    return message


@sqlite_only
def test_a_key_repeated_within_a_write_is_refused_and_nothing_becomes_visible(
    orders: Orders,
) -> None:
    orders.write([("eu", 1, 1)])
    kept = orders.files()
    message = refused(lambda: orders.write([("eu", 2, 1), ("us", 2, 1), ("eu", 2, 5)]))
    assert "occur in more than one row of the write into PUBLIC.ORDERS" in message
    assert "(REGION='eu', ID=2)" in message and "ID=1" not in message
    assert orders.rows() == [("eu", 1, 1)]
    assert orders.files() == kept  # the refused write's files were deleted


def test_a_key_the_table_holds_is_refused_naming_it_and_a_later_append_works(
    orders: Orders,
) -> None:
    orders.write([("eu", i, 1) for i in range(10)])
    kept = orders.files()
    rows = [("eu", 3, 9), ("us", 3, 9), ("eu", 10, 9), ("eu", 7, 9)]
    message = refused(lambda: orders.write(rows))
    assert "already holds rows with key (REGION='eu', ID=3), (REGION='eu', ID=7)." in message
    assert 'mode("append") adds rows whose keys the table does not hold yet' in message
    assert orders.rows() == [("eu", i, 1) for i in range(10)]
    assert orders.files() == kept
    # The same rows without the keys the table holds go in.
    orders.write([("us", 3, 9), ("eu", 10, 9)])
    assert len(orders.rows()) == 12 and ("us", 3, 9) in orders.rows()


@sqlite_only
def test_overwrite_refuses_keys_repeated_within_it_but_not_keys_of_the_rows_it_replaces(
    orders: Orders,
) -> None:
    orders.write([("eu", 1, 1), ("eu", 2, 1)])
    kept = orders.files()
    message = refused(lambda: orders.write([("eu", 5, 1), ("eu", 5, 2)], mode="overwrite"))
    assert "(REGION='eu', ID=5)" in message
    assert orders.rows() == [("eu", 1, 1), ("eu", 2, 1)]
    assert orders.files() == kept
    orders.write([("eu", 1, 7), ("eu", 3, 7)], mode="overwrite")
    assert orders.rows() == [("eu", 1, 7), ("eu", 3, 7)]
    # An append is checked against the rows the overwrite left, not those it replaced.
    orders.write([("eu", 2, 8)])
    refused(lambda: orders.write([("eu", 3, 8)]))
    assert orders.rows() == [("eu", 1, 7), ("eu", 2, 8), ("eu", 3, 7)]


def _race(writers: list[Callable[[], object]]) -> list[BaseException | None]:
    outcomes: list[BaseException | None] = [None] * len(writers)
    start = threading.Barrier(len(writers))

    def run(i: int) -> None:
        start.wait()
        try:
            writers[i]()
        except BaseException as e:
            outcomes[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(writers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return outcomes


def test_of_two_writers_appending_one_key_at_once_exactly_one_wins(orders: Orders) -> None:
    for round_ in range(6):
        first, first_files = orders.prepared([("eu", round_, 1), ("us", 100 + round_, 1)])
        second, second_files = orders.prepared([("eu", round_, 2), ("eu", 200 + round_, 2)])
        outcomes = _race(
            [partial(first.commit, [first_files]), partial(second.commit, [second_files])]
        )
        losers = [e for e in outcomes if e is not None]
        assert len(losers) == 1, outcomes
        assert isinstance(losers[0], PrimaryKeyViolationError)
        assert losers[0].keys == [{"REGION": "eu", "ID": round_}]
    rows = orders.rows()
    assert len(rows) == 12 and len({(r, i) for r, i, _ in rows}) == 12
    assert orders.files() == orders.committed_files()  # the losers' files were deleted


@sqlite_only
def test_of_two_spark_jobs_appending_one_key_at_once_exactly_one_wins(orders: Orders) -> None:
    outcomes = _race(
        [lambda: orders.write([("eu", 1, 1), ("eu", 2, 1)]), lambda: orders.write([("eu", 1, 2)])]
    )
    losers = [e for e in outcomes if e is not None]
    assert len(losers) == 1, outcomes
    assert "PRIMARY_KEY_VIOLATION" in str(losers[0]) and "(REGION='eu', ID=1)" in str(losers[0])
    assert [(r, i) for r, i, _ in orders.rows()] in ([("eu", 1), ("eu", 2)], [("eu", 1)])


@sqlite_only
def test_a_commit_through_the_rest_api_racing_a_write_of_its_key_wins_alone(
    orders: Orders,
) -> None:
    for round_ in range(4):
        writer, written = orders.prepared([("eu", round_, 1)])
        _, other_written = orders.prepared([("eu", round_, 2)])
        # A client that commits files itself, without a key check of its own.
        commit_directly = partial(
            orders.client.commit_data,
            orders.table_id,
            list(other_written.files),
            schema_version=1,
            request_id=f"direct-{round_}",
        )
        outcomes = _race([partial(writer.commit, [written]), commit_directly])
        assert outcomes[1] is None
        assert isinstance(outcomes[0], PrimaryKeyViolationError), outcomes
    assert orders.rows() == [("eu", i, 2) for i in range(4)]
    assert orders.files() == orders.committed_files()


@sqlite_only
def test_an_append_gets_through_while_other_commits_keep_coming(orders: Orders) -> None:
    stop = threading.Event()
    commits: list[int] = []

    def churn() -> None:
        # A busy table: another writer's (empty) commits, about 20 a second, each of which
        # landing between a write's check and its commit makes the write check again. (A
        # writer committing without pause, faster than a check and a commit take, would
        # win every race: the append then gives up, refused, after its rounds.)
        with CatalogClient(orders.options["catalog_url"]) as client:
            while not stop.wait(0.05):
                request_id = f"churn-{len(commits)}"
                client.commit_data(orders.table_id, [], schema_version=1, request_id=request_id)
                commits.append(1)

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        for i in range(3):
            writer, written = orders.prepared([("eu", i, 1)])
            writer.commit([written])
    finally:
        stop.set()
        thread.join(30)
    assert commits
    assert orders.rows() == [("eu", i, 1) for i in range(3)]


@sqlite_only
def test_an_abort_after_a_commit_keeps_the_files_the_commit_names(orders: Orders) -> None:
    # Spark aborts after a commit that raised, also when the commit went through unseen.
    writer, written = orders.prepared([("eu", 1, 1)])
    writer.commit([written])
    writer.abort([written])
    assert orders.files() == orders.committed_files() != []
    assert orders.rows() == [("eu", 1, 1)]
    loser, lost = orders.prepared([("eu", 2, 1)])
    loser.abort([lost])
    assert orders.files() == orders.committed_files()

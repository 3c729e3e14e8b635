"""Rows an engine deleted by position, as the catalog's own Spark source reads and writes them.

DuckDB deletes and updates merge-on-read: position delete files. The catalog's Spark source
leaves those rows out of a read, of its key check (a key deleted may be written again) and of
the files an upsert writes again; every Iceberg reader then reads what it wrote.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyspark.sql import SparkSession

from tests.integration.api.servers import RunningServer
from tests.integration.engines.conftest import Recorder, Seed
from tests.integration.engines.engines import DuckDBEngine
from tests.integration.engines.test_smoke import run
from tests.integration.spark.conftest import spark  # noqa: F401  (the catalog's own Spark)

pytestmark = pytest.mark.timeout(300)


class People:
    """Table ``people`` of a namespace: DuckDB, PyIceberg and the catalog's Spark source."""

    def __init__(
        self,
        duckdb: Any,
        pyiceberg: RestCatalog,
        session: SparkSession,
        server: RunningServer,
        namespace: str,
        recorder: Recorder,
    ) -> None:
        self.duckdb = DuckDBEngine(duckdb)
        self.pyiceberg = pyiceberg
        self.spark = session
        self.server = server
        self.namespace = namespace
        self.recorder = recorder

    def duck(self, statement: str) -> list[tuple[Any, ...]]:
        """Run ``statement`` on DuckDB (``{t}`` names the table); return its rows."""
        name = f"cat.{self.namespace}.people"
        return [tuple(r) for r in run(self.duckdb, statement.format(t=name), self.recorder)]

    def source_rows(self) -> list[tuple[Any, ...]]:
        """Return the rows as the catalog's Spark source reads them, by id."""
        frame = self.spark.read.format("catalog").option("catalog_url", self.server.url)
        rows = frame.load(f'"{self.namespace}"."people"').orderBy("id").collect()
        return [(r["id"], r["name"]) for r in rows]

    def source_write(self, rows: list[tuple[int, str]], write: str = "append") -> None:
        """Write ``rows`` with the catalog's Spark source (``write``: append or upsert)."""
        frame = self.spark.createDataFrame(rows, "id BIGINT, name STRING")
        writer = frame.write.format("catalog").option("catalog_url", self.server.url)
        writer.option("write", write).mode("append").save(f'"{self.namespace}"."people"')

    def rows(self) -> list[tuple[Any, ...]]:
        """Return the rows as every reader reads them (they must agree)."""
        by_duckdb = self.duck("SELECT id, name FROM {t} ORDER BY id")
        arrow = self.pyiceberg.load_table(f"{self.namespace}.people").scan().to_arrow()
        arrow = arrow.sort_by("id")
        by_pyiceberg = list(zip(arrow["id"].to_pylist(), arrow["name"].to_pylist(), strict=True))
        assert by_pyiceberg == by_duckdb, "PyIceberg reads other rows than DuckDB"
        assert self.source_rows() == by_duckdb, "the catalog's Spark source reads others"
        return by_duckdb


@pytest.fixture
def people(
    duckdb: Any,
    pyiceberg: RestCatalog,
    spark: SparkSession,  # noqa: F811
    engine_server: RunningServer,
    namespace: str,
    recorder: Recorder,
    seed: Seed,
) -> People:
    """``people`` (a primary key on id) with four rows, then ids 1 and 3 deleted by DuckDB."""
    seed(namespace, "people", [(1, "ann"), (2, "bo"), (3, "cy"), (4, "di")])
    table = People(duckdb, pyiceberg, spark, engine_server, namespace, recorder)
    table.duck("DELETE FROM {t} WHERE id IN (1, 3)")
    return table


def test_every_reader_leaves_out_the_rows_deleted_by_position(people: People) -> None:
    assert people.rows() == [(2, "bo"), (4, "di")]
    people.duck("UPDATE {t} SET name = 'DI' WHERE id = 4")
    assert people.rows() == [(2, "bo"), (4, "DI")]


def test_a_key_deleted_by_position_may_be_written_again(people: People) -> None:
    people.source_write([(1, "ann again")])
    assert people.rows() == [(1, "ann again"), (2, "bo"), (4, "di")]


def test_an_upsert_writes_a_file_again_without_its_deleted_rows(people: People) -> None:
    people.source_write([(2, "BO"), (5, "ed")], write="upsert")
    assert people.rows() == [(2, "BO"), (4, "di"), (5, "ed")]

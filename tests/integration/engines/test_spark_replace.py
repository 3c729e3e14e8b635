"""Spark with Iceberg's runtime replaces tables: RTAS, CREATE OR REPLACE, REPLACE TABLE.

Each replace is one commit of Java's REST client (``UpdateRequirements.forReplaceTable``,
``TableMetadata.buildReplacement``): one catalog version for the table's changes and, for an
RTAS, one data commit of its rows. Spark, PyIceberg and the catalog's own Spark source then
read only what the replace committed; the table keeps its uuid and its earlier snapshots.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.table import Table
from pyspark.sql import SparkSession

from tests.integration.api.servers import RunningServer
from tests.integration.engines.conftest import EngineError, Recorder, SparkShell
from tests.integration.engines.engines import SparkEngine
from tests.integration.engines.test_matrix import _versions
from tests.integration.engines.test_smoke import run as run_on
from tests.integration.iceberg.test_replaces import check_made_on_none
from tests.integration.spark.conftest import spark  # noqa: F401  (the catalog's own Spark)

pytestmark = pytest.mark.timeout(300)


@dataclass
class Replacing:
    """Table ``t`` (id, name; rows 1 and 2) made by Spark in a namespace of the test's own."""

    shell: SparkShell
    pyiceberg: RestCatalog
    namespace: str
    recorder: Recorder
    server: RunningServer
    session: SparkSession

    @property
    def t(self) -> str:
        """Return the table's name in Spark."""
        return f"cat.{self.namespace}.t"

    def sql(self, statement: str) -> list[tuple[Any, ...]]:
        """Run ``statement`` in Spark; a refusal fails the test naming the server's answer."""
        return [tuple(r) for r in run_on(SparkEngine(self.shell), statement, self.recorder)]

    def load(self) -> Table:
        """Return the table as PyIceberg loads it."""
        loaded: Table = self.pyiceberg.load_table(f"{self.namespace}.t")
        return loaded

    def catalog_read(self) -> list[tuple[Any, ...]]:
        """Return the table's rows as the catalog's own Spark source reads them, by id."""
        frame = self.session.read.format("catalog").option("catalog_url", self.server.url)
        return [tuple(r) for r in frame.load(f'"{self.namespace}"."t"').orderBy("id").collect()]


@pytest.fixture
def replacing(
    spark_engine: SparkShell,
    pyiceberg: RestCatalog,
    namespace: str,
    recorder: Recorder,
    engine_server: RunningServer,
    spark: SparkSession,  # noqa: F811
) -> Replacing:
    made = Replacing(spark_engine, pyiceberg, namespace, recorder, engine_server, spark)
    made.sql(f"CREATE NAMESPACE cat.{namespace}")
    made.sql(f"CREATE TABLE {made.t} (id BIGINT, name STRING) USING iceberg")
    made.sql(f"INSERT INTO {made.t} VALUES (1, 'ann'), (2, 'bo')")
    return made


def test_rtas_keeps_the_ids_of_kept_columns_and_reads_only_its_rows(replacing: Replacing) -> None:
    before = replacing.load()
    version = _versions(replacing.server)[-1]["version"]
    mark = replacing.recorder.log.mark()
    replacing.sql(
        f"REPLACE TABLE {replacing.t} USING iceberg AS "
        "SELECT CAST(7 AS BIGINT) AS id, 'cy' AS name, 70 AS score"
    )
    assert [str(e) for e in replacing.recorder.log.failures(mark)] == []
    changed = [v for v in _versions(replacing.server) if v["version"] > version]
    assert len(changed) == 1, changed  # the replace is one catalog version
    assert replacing.sql(f"SELECT * FROM {replacing.t}") == [(7, "cy", 70)]
    table = replacing.load()
    fields = [(f.field_id, f.name) for f in table.schema().fields]
    assert fields == [(1, "id"), (2, "name"), (3, "score")]
    assert table.metadata.table_uuid == before.metadata.table_uuid
    assert table.scan().to_arrow().to_pylist() == [{"id": 7, "name": "cy", "score": 70}]
    check_made_on_none(before, table)
    assert replacing.catalog_read() == [(7, "cy", 70)]
    previous = before.current_snapshot()
    assert previous is not None
    earlier = replacing.sql(f"SELECT id FROM {replacing.t} VERSION AS OF {previous.snapshot_id}")
    assert sorted(earlier) == [(1,), (2,)]


def test_create_or_replace_as_select_replaces_an_existing_table(replacing: Replacing) -> None:
    t = replacing.t
    replacing.sql(f"CREATE OR REPLACE TABLE {t} USING iceberg AS SELECT CAST(5 AS BIGINT) AS id")
    assert replacing.sql(f"SELECT * FROM {t}") == [(5,)]
    table = replacing.load()
    assert [(f.field_id, f.name) for f in table.schema().fields] == [(1, "id")]
    assert table.scan().to_arrow().to_pylist() == [{"id": 5}]
    assert replacing.catalog_read() == [(5,)]
    # CREATE OR REPLACE of a table that is not there creates it.
    other = f"cat.{replacing.namespace}.fresh"
    replacing.sql(f"CREATE OR REPLACE TABLE {other} USING iceberg AS SELECT 1 AS x")
    assert replacing.sql(f"SELECT * FROM {other}") == [(1,)]


def test_replace_table_with_a_new_schema_and_spec_leaves_it_empty(replacing: Replacing) -> None:
    t = replacing.t
    replacing.sql(
        f"REPLACE TABLE {t} (id BIGINT, day DATE) USING iceberg PARTITIONED BY (days(day)) "
        "TBLPROPERTIES ('purpose'='replaced')"
    )
    assert replacing.sql(f"SELECT * FROM {t}") == []
    table = replacing.load()
    assert [(f.field_id, f.name) for f in table.schema().fields] == [(1, "id"), (3, "day")]
    assert table.current_snapshot() is None
    assert "main" not in table.metadata.refs
    assert len(table.metadata.snapshot_log) == 1  # the log keeps the snapshot before
    assert [(f.source_id, str(f.transform)) for f in table.spec().fields] == [(3, "day")]
    assert table.properties["purpose"] == "replaced"
    assert table.scan().to_arrow().num_rows == 0
    assert replacing.catalog_read() == []
    replacing.sql(f"INSERT INTO {t} VALUES (9, DATE '2026-01-02')")
    assert replacing.catalog_read() == [(9, datetime.date(2026, 1, 2))]
    current = replacing.load().current_snapshot()
    assert current is not None and current.parent_snapshot_id is None


def test_a_replace_the_catalog_refuses_writes_nothing(replacing: Replacing) -> None:
    before = replacing.load()
    with pytest.raises(EngineError, match="BadRequestException"):
        replacing.shell.sql(f"REPLACE TABLE {replacing.t} USING iceberg AS SELECT 'x' AS id")
    after = replacing.load()
    assert after.schema() == before.schema()
    assert after.current_snapshot() == before.current_snapshot()
    assert sorted(replacing.sql(f"SELECT id FROM {replacing.t}")) == [(1,), (2,)]

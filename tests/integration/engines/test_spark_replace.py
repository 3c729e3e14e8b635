"""Spark with Iceberg's runtime replaces tables: RTAS, CREATE OR REPLACE, REPLACE TABLE.

Each replace is one commit of Java's REST client (``UpdateRequirements.forReplaceTable``,
``TableMetadata.buildReplacement``): one catalog version for the table's changes and, for an
RTAS, one data commit of its rows. Spark, PyIceberg and the catalog's own Spark source then
read only what the replace committed; the table keeps its uuid and its earlier snapshots.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyspark.sql import SparkSession

from tests.integration.api.servers import RunningServer
from tests.integration.engines.conftest import EngineError, Recorder, SparkShell
from tests.integration.engines.engines import SparkEngine
from tests.integration.engines.test_matrix import _versions
from tests.integration.engines.test_smoke import run as run_on
from tests.integration.spark.conftest import spark  # noqa: F401  (the catalog's own Spark)

pytestmark = pytest.mark.timeout(300)


def _rows(shell: SparkShell, statement: str, recorder: Recorder) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in run_on(SparkEngine(shell), statement, recorder)]


def _table(shell: SparkShell, namespace: str, recorder: Recorder) -> str:
    """Create ``cat.<namespace>.t`` (id, name) with two rows; return its name."""
    _rows(shell, f"CREATE NAMESPACE cat.{namespace}", recorder)
    t = f"cat.{namespace}.t"
    _rows(shell, f"CREATE TABLE {t} (id BIGINT, name STRING) USING iceberg", recorder)
    _rows(shell, f"INSERT INTO {t} VALUES (1, 'ann'), (2, 'bo')", recorder)
    return t


def _catalog_read(session: SparkSession, server: RunningServer, namespace: str) -> list[Any]:
    """Return the rows of ``<namespace>.t`` as the catalog's own Spark source reads them."""
    frame = session.read.format("catalog").option("catalog_url", server.url)
    return [tuple(r) for r in frame.load(f'"{namespace}"."t"').orderBy("id").collect()]


def test_rtas_keeps_the_ids_of_kept_columns_and_reads_only_its_rows(
    spark_engine: SparkShell,
    pyiceberg: RestCatalog,
    namespace: str,
    recorder: Recorder,
    engine_server: RunningServer,
    spark: SparkSession,  # noqa: F811
) -> None:
    t = _table(spark_engine, namespace, recorder)
    before = pyiceberg.load_table(f"{namespace}.t")
    version = _versions(engine_server)[-1]["version"]
    mark = recorder.log.mark()
    _rows(
        spark_engine,
        f"REPLACE TABLE {t} USING iceberg AS "
        "SELECT CAST(7 AS BIGINT) AS id, 'cy' AS name, 70 AS score",
        recorder,
    )
    assert [str(e) for e in recorder.log.failures(mark)] == []
    changed = [v for v in _versions(engine_server) if v["version"] > version]
    assert len(changed) == 1, changed  # the replace is one catalog version
    assert _rows(spark_engine, f"SELECT * FROM {t}", recorder) == [(7, "cy", 70)]
    table = pyiceberg.load_table(f"{namespace}.t")
    assert [(f.field_id, f.name) for f in table.schema().fields] == [
        (1, "id"),
        (2, "name"),
        (3, "score"),
    ]
    assert table.metadata.table_uuid == before.metadata.table_uuid
    assert table.scan().to_arrow().to_pylist() == [{"id": 7, "name": "cy", "score": 70}]
    current = table.current_snapshot()
    assert current is not None and current.parent_snapshot_id is None
    previous = before.current_snapshot()
    assert previous is not None
    assert [e.snapshot_id for e in table.metadata.snapshot_log] == [
        previous.snapshot_id,
        current.snapshot_id,
    ]
    assert _catalog_read(spark, engine_server, namespace) == [(7, "cy", 70)]
    earlier = _rows(
        spark_engine, f"SELECT id FROM {t} VERSION AS OF {previous.snapshot_id}", recorder
    )
    assert sorted(earlier) == [(1,), (2,)]


def test_create_or_replace_as_select_replaces_an_existing_table(
    spark_engine: SparkShell,
    pyiceberg: RestCatalog,
    namespace: str,
    recorder: Recorder,
    engine_server: RunningServer,
    spark: SparkSession,  # noqa: F811
) -> None:
    t = _table(spark_engine, namespace, recorder)
    _rows(
        spark_engine,
        f"CREATE OR REPLACE TABLE {t} USING iceberg AS SELECT CAST(5 AS BIGINT) AS id",
        recorder,
    )
    assert _rows(spark_engine, f"SELECT * FROM {t}", recorder) == [(5,)]
    table = pyiceberg.load_table(f"{namespace}.t")
    assert [(f.field_id, f.name) for f in table.schema().fields] == [(1, "id")]
    assert table.scan().to_arrow().to_pylist() == [{"id": 5}]
    assert _catalog_read(spark, engine_server, namespace) == [(5,)]
    # CREATE OR REPLACE of a table that is not there creates it.
    other = f"cat.{namespace}.fresh"
    _rows(spark_engine, f"CREATE OR REPLACE TABLE {other} USING iceberg AS SELECT 1 AS x", recorder)
    assert _rows(spark_engine, f"SELECT * FROM {other}", recorder) == [(1,)]


def test_replace_table_with_a_new_schema_and_spec_leaves_it_empty(
    spark_engine: SparkShell,
    pyiceberg: RestCatalog,
    namespace: str,
    recorder: Recorder,
    engine_server: RunningServer,
    spark: SparkSession,  # noqa: F811
) -> None:
    t = _table(spark_engine, namespace, recorder)
    _rows(
        spark_engine,
        f"REPLACE TABLE {t} (id BIGINT, day DATE) USING iceberg PARTITIONED BY (days(day)) "
        "TBLPROPERTIES ('purpose'='replaced')",
        recorder,
    )
    assert _rows(spark_engine, f"SELECT * FROM {t}", recorder) == []
    table = pyiceberg.load_table(f"{namespace}.t")
    assert [(f.field_id, f.name) for f in table.schema().fields] == [(1, "id"), (3, "day")]
    assert table.current_snapshot() is None
    assert "main" not in table.metadata.refs
    assert len(table.metadata.snapshot_log) == 1  # the log keeps the snapshot before
    assert [(f.source_id, str(f.transform)) for f in table.spec().fields] == [(3, "day")]
    assert table.properties["purpose"] == "replaced"
    assert table.scan().to_arrow().num_rows == 0
    assert _catalog_read(spark, engine_server, namespace) == []
    _rows(spark_engine, f"INSERT INTO {t} VALUES (9, DATE '2026-01-02')", recorder)
    assert _catalog_read(spark, engine_server, namespace) == [(9, datetime.date(2026, 1, 2))]
    reloaded = pyiceberg.load_table(f"{namespace}.t").current_snapshot()
    assert reloaded is not None and reloaded.parent_snapshot_id is None


def test_a_replace_the_catalog_refuses_writes_nothing(
    spark_engine: SparkShell,
    pyiceberg: RestCatalog,
    namespace: str,
    recorder: Recorder,
) -> None:
    t = _table(spark_engine, namespace, recorder)
    before = pyiceberg.load_table(f"{namespace}.t")
    with pytest.raises(EngineError, match="BadRequestException"):
        spark_engine.sql(f"REPLACE TABLE {t} USING iceberg AS SELECT 'x' AS id")
    after = pyiceberg.load_table(f"{namespace}.t")
    assert after.schema() == before.schema()
    assert after.current_snapshot() == before.current_snapshot()
    assert sorted(_rows(spark_engine, f"SELECT id FROM {t}", recorder)) == [(1,), (2,)]

"""Spark and Trino create views in the catalog and read them; who reads whose, and as of T.

A view is its query text per dialect, kept as the engine gave it. Spark reads a view in its
own dialect or, lacking one, the first text it finds; Trino reads only a view with a
``trino`` text. A view made through the catalog's own commands with both texts is read by
both. DuckDB and PyIceberg do not run views (DuckDB's Iceberg extension has no views;
PyIceberg keeps their metadata only), so they are not in this file's matrix.
"""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog

from api.client import CatalogClient
from tests.integration.api.servers import RunningServer
from tests.integration.engines.conftest import EngineError, Recorder, Seed, SparkShell, TrinoServer
from tests.integration.engines.engines import SparkEngine, TrinoEngine
from tests.integration.engines.test_smoke import run

pytestmark = pytest.mark.timeout(300)

ROWS = [(1, "ann"), (2, "bob"), (3, None)]


def _dialects(pyiceberg: RestCatalog, name: str) -> list[str]:
    version = pyiceberg.load_view(name).metadata.versions[-1]
    return [r.root.dialect for r in version.representations]


def test_spark_and_trino_create_views_and_read_them(
    seed: Seed,
    namespace: str,
    pyiceberg: RestCatalog,
    spark_engine: SparkShell,
    trino_engine: TrinoServer,
    recorder: Recorder,
) -> None:
    seed(namespace, "people", ROWS)
    spark, trino = SparkEngine(spark_engine), TrinoEngine(trino_engine)
    people = f"cat.{namespace}.people"

    run(
        spark,
        f"CREATE VIEW cat.{namespace}.by_spark AS SELECT id, name FROM {people} WHERE id > 1",
        recorder,
    )
    assert run(spark, f"SELECT * FROM cat.{namespace}.by_spark ORDER BY id", recorder) == [
        [2, "bob"],
        [3, None],
    ]
    run(
        trino,
        f"CREATE VIEW cat.{namespace}.by_trino AS SELECT id, name FROM {people} WHERE id < 3",
        recorder,
    )
    assert run(trino, f"SELECT * FROM cat.{namespace}.by_trino ORDER BY id", recorder) == [
        [1, "ann"],
        [2, "bob"],
    ]
    assert _dialects(pyiceberg, f"{namespace}.by_spark") == ["spark"]
    assert _dialects(pyiceberg, f"{namespace}.by_trino") == ["trino"]
    assert sorted(pyiceberg.list_views(namespace)) == [
        (namespace, "by_spark"),
        (namespace, "by_trino"),
    ]

    # Spark reads Trino's text (its only one); Trino refuses a view without a trino text
    assert run(spark, f"SELECT * FROM cat.{namespace}.by_trino ORDER BY id", recorder) == [
        [1, "ann"],
        [2, "bob"],
    ]
    with pytest.raises(EngineError, match="unsupported dialect 'spark'"):
        trino.sql(f"SELECT * FROM cat.{namespace}.by_spark")

    # each engine replaces and drops its view; the catalog keeps the versions
    run(
        spark,
        f"CREATE OR REPLACE VIEW cat.{namespace}.by_spark AS SELECT id FROM {people}",
        recorder,
    )
    assert len(run(spark, f"SELECT * FROM cat.{namespace}.by_spark", recorder)) == 3
    assert len(pyiceberg.load_view(f"{namespace}.by_spark").metadata.versions) == 2
    run(trino, f"DROP VIEW cat.{namespace}.by_trino", recorder)
    run(spark, f"DROP VIEW cat.{namespace}.by_spark", recorder)
    assert pyiceberg.list_views(namespace) == []


def test_a_view_with_a_text_per_dialect_is_read_by_both_and_as_of_a_version(
    seed: Seed,
    namespace: str,
    engine_server: RunningServer,
    spark_engine: SparkShell,
    trino_engine: TrinoServer,
    recorder: Recorder,
) -> None:
    seed(namespace, "people", ROWS)
    spark, trino = SparkEngine(spark_engine), TrinoEngine(trino_engine)
    people = f"cat.{namespace}.people"

    def command(limit: int) -> dict[str, object]:
        return {
            "op": "create_view",
            "schema": namespace,
            "name": "named",
            "or_replace": True,
            "columns": [{"name": "id", "type": "INT64"}, {"name": "name", "type": "STRING"}],
            "version": {
                "queries": [
                    {
                        "dialect": "spark",
                        "sql": f"SELECT id, name FROM {people} WHERE id <= {limit}",
                    },
                    {
                        "dialect": "trino",
                        "sql": f"SELECT id, name FROM {people} WHERE id <= {limit}",
                    },
                ],
                "default_catalog": "cat",
            },
        }

    with CatalogClient(engine_server.url) as client:
        first = client.execute([command(1)]).version
        client.execute([command(2)])
    for engine in (spark, trino):
        rows = run(engine, f"SELECT id, name FROM cat.{namespace}.named ORDER BY id", recorder)
        assert rows == [[1, "ann"], [2, "bob"]], engine.name

    # a catalog pinned at the first version serves the view as it was then
    pinned = f"pin_{namespace[-6:]}"
    uri = f"{engine_server.url}/iceberg"
    for key, value in {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "rest",
        ".uri": uri,
        ".warehouse": f"main@v{first}",
    }.items():
        run(spark, f"SET spark.sql.catalog.{pinned}{key}={value}", recorder)
    rows = run(spark, f"SELECT id FROM {pinned}.{namespace}.named ORDER BY id", recorder)
    assert rows == [[1]]


def test_a_view_made_in_the_catalogs_sql_is_read_by_spark_and_trino(
    namespace: str,
    engine_server: RunningServer,
    spark_engine: SparkShell,
    trino_engine: TrinoServer,
    recorder: Recorder,
) -> None:
    schema = namespace.upper()
    with CatalogClient(engine_server.url) as client:
        client.sql(
            f"CREATE SCHEMA {schema}; "
            f"CREATE TABLE {schema}.ORDERS (ID BIGINT PRIMARY KEY, AMOUNT DECIMAL(10, 2))"
        )
        # Trino resolves a view's names only with a default catalog, which a view made in the
        # catalog's SQL names none of: its text names the engines' catalog (both call it cat)
        client.sql(
            f"CREATE VIEW {schema}.BIG AS SELECT id, amount FROM cat.{schema}.orders "
            "WHERE amount > 10"
        )
    spark, trino = SparkEngine(spark_engine), TrinoEngine(trino_engine)
    run(spark, f"INSERT INTO cat.{namespace}.orders VALUES (1, 5.00), (2, 50.00)", recorder)
    for engine in (spark, trino):
        rows = run(engine, f"SELECT * FROM cat.{namespace}.big", recorder)
        assert [[int(str(i)), float(str(a))] for i, a in rows] == [[2, 50.0]], engine.name

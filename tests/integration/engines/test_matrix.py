"""Every engine reads what every engine wrote: the same rows and the same schema.

Each writer (DuckDB, Spark with Iceberg's runtime, Trino, PyIceberg) creates a table and inserts
rows through the Iceberg REST endpoint; every engine then reads that table, PyIceberg checks its
schema, and the catalog's own Spark source (``format("catalog")``) reads it too. The writer's
CREATE TABLE is one catalog version whose origin names the client that sent it. Each engine
then deletes a row its own way (position delete files, or copy-on-write) and every reader
reads the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.expressions import EqualTo
from pyspark.sql import SparkSession

from tests.integration.api.servers import RunningServer
from tests.integration.engines.conftest import Recorder
from tests.integration.engines.engines import DuckDBEngine, Engine, SparkEngine, TrinoEngine
from tests.integration.engines.test_smoke import run
from tests.integration.spark.conftest import spark  # noqa: F401  (the catalog's own Spark)

pytestmark = pytest.mark.timeout(300)

ENGINES = ["duckdb", "spark", "trino"]
ROWS = [(1, "ann"), (2, None), (3, "cy")]


def _engine(request: pytest.FixtureRequest, name: str) -> Engine:
    if name == "duckdb":
        return DuckDBEngine(request.getfixturevalue("duckdb"))
    if name == "spark":
        return SparkEngine(request.getfixturevalue("spark_engine"))
    return TrinoEngine(request.getfixturevalue("trino_engine"))


def _write(request: pytest.FixtureRequest, writer: str, namespace: str, recorder: Recorder) -> None:
    if writer == "pyiceberg":
        catalog: RestCatalog = request.getfixturevalue("pyiceberg")
        schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
        table = catalog.create_table(f"{namespace}.t", schema)
        ids, names = zip(*ROWS, strict=True)
        table.append(pa.table({"id": list(ids), "name": list(names)}, schema=schema))
        return
    engine = _engine(request, writer)
    run(engine, f"CREATE TABLE cat.{namespace}.t (id BIGINT, name {engine.text_type})", recorder)
    values = ", ".join(f"({i}, {'NULL' if n is None else repr(n)})" for i, n in ROWS)
    run(engine, f"INSERT INTO cat.{namespace}.t VALUES {values}", recorder)


def _versions(server: RunningServer) -> list[dict[str, Any]]:
    with httpx.Client(base_url=server.url) as client:
        answer = client.get("/v1/versions", params={"limit": 10_000})
        answer.raise_for_status()
        versions: list[dict[str, Any]] = answer.json()["versions"]
        return versions


@pytest.fixture(
    params=[
        "duckdb",
        "spark",
        "trino",
        "pyiceberg",
    ]
)
def written(
    request: pytest.FixtureRequest,
    pyiceberg: RestCatalog,
    engine_server: RunningServer,
    namespace: str,
    recorder: Recorder,
) -> Iterator[str]:
    """The namespace of table ``t``, written by the engine the parameter names."""
    pyiceberg.create_namespace(namespace)
    before = _versions(engine_server)[-1]["version"]
    _write(request, request.param, namespace, recorder)
    created = [v for v in _versions(engine_server) if v["version"] > before]
    creates = [v for v in created if "new_table" in v.get("entries", [])]
    assert len(creates) == 1, created  # the CREATE TABLE is one catalog version
    (origin,) = creates[0]["origins"]
    assert origin["client"] not in ("", "unknown"), origin
    yield namespace


@pytest.mark.parametrize("reader", ENGINES)
def test_every_engine_reads_what_every_engine_wrote(
    request: pytest.FixtureRequest, written: str, reader: str, recorder: Recorder
) -> None:
    engine = _engine(request, reader)
    rows = run(engine, f"SELECT id, name FROM cat.{written}.t ORDER BY id", recorder)
    assert [tuple(r) for r in rows] == ROWS


def test_pyiceberg_reads_the_rows_and_schema_every_engine_wrote(
    written: str, pyiceberg: RestCatalog
) -> None:
    table = pyiceberg.load_table(f"{written}.t")
    assert [(f.field_id, f.name) for f in table.schema().fields] == [(1, "id"), (2, "name")]
    read = table.scan().to_arrow().sort_by("id")
    assert (
        list(zip(read.column("id").to_pylist(), read.column("name").to_pylist(), strict=False))
        == ROWS
    )


def test_the_catalog_spark_source_reads_what_every_engine_wrote(
    written: str,
    engine_server: RunningServer,
    spark: SparkSession,  # noqa: F811
) -> None:
    read = spark.read.format("catalog").option("catalog_url", engine_server.url)
    frame = read.load(f'"{written}"."t"')
    assert frame.columns == ["id", "name"]
    assert [(r[0], r[1]) for r in frame.orderBy("id").collect()] == ROWS


@pytest.mark.parametrize("deleter", [*ENGINES, "pyiceberg"])
def test_every_engine_reads_the_rows_every_engine_deleted(
    request: pytest.FixtureRequest,
    deleter: str,
    pyiceberg: RestCatalog,
    engine_server: RunningServer,
    spark: SparkSession,  # noqa: F811
    namespace: str,
    recorder: Recorder,
) -> None:
    """DuckDB, Spark (merge-on-read) and Trino delete with position delete files, PyIceberg
    copy-on-write; every engine, PyIceberg and the catalog's Spark source read the rest."""
    pyiceberg.create_namespace(namespace)
    _write(request, deleter, namespace, recorder)
    t = f"cat.{namespace}.t"
    if deleter == "pyiceberg":
        pyiceberg.load_table(f"{namespace}.t").delete(EqualTo(term="id", value=2))
    else:
        engine = _engine(request, deleter)
        if deleter == "spark":
            run(
                engine,
                f"ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')",
                recorder,
            )
        run(engine, f"DELETE FROM {t} WHERE id = 2", recorder)
    expected = [ROWS[0], ROWS[2]]
    for reader in ENGINES:
        rows = run(_engine(request, reader), f"SELECT id, name FROM {t} ORDER BY id", recorder)
        assert [tuple(r) for r in rows] == expected, reader
    read = pyiceberg.load_table(f"{namespace}.t").scan().to_arrow().sort_by("id")
    assert list(zip(read["id"].to_pylist(), read["name"].to_pylist(), strict=True)) == expected
    source = spark.read.format("catalog").option("catalog_url", engine_server.url)
    frame = source.load(f'"{namespace}"."t"').orderBy("id")
    assert [(r[0], r[1]) for r in frame.collect()] == expected

"""Every engine reads the whole catalog as of one moment through a pinned Iceberg REST prefix.

Two tables change while DuckDB, Spark with Iceberg's runtime, Trino and PyIceberg each run
the same join through a catalog configured with ``warehouse=main@<T>``: each gets exactly the
rows the catalog's own Spark source reads as of T, however the tables moved since. And a
writer's multi-table transactions are seen whole or not at all by a reader pinned at any
moment.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.expressions import EqualTo
from pyspark.sql import SparkSession

from tests.integration.api.servers import RunningServer
from tests.integration.engines.conftest import PEOPLE, Recorder, SparkShell, TrinoServer
from tests.integration.engines.engines import DuckDBEngine, SparkEngine, TrinoEngine
from tests.integration.engines.test_smoke import run
from tests.integration.iceberg.test_transactions import Staged, send, staging
from tests.integration.spark.conftest import spark  # noqa: F401  (the catalog's own Spark)

pytestmark = pytest.mark.timeout(300)

Row = tuple[int, str, str]


def _append(catalog: RestCatalog, name: str, rows: list[tuple[int, str]]) -> None:
    table = catalog.load_table(name)
    frame = [{"id": i, "name": n} for i, n in rows]
    table.append(pa.Table.from_pylist(frame, schema=table.schema().as_arrow()))


@pytest.fixture
def moment(pyiceberg: RestCatalog, namespace: str) -> Iterator[str]:
    """Two tables with rows, a moment T, and writers changing both tables after T."""
    pyiceberg.create_namespace(namespace)
    for name in ("a", "b"):
        pyiceberg.create_table(f"{namespace}.{name}", PEOPLE)
    _append(pyiceberg, f"{namespace}.a", [(1, "a1"), (2, "a2"), (3, "a3")])
    _append(pyiceberg, f"{namespace}.b", [(1, "b1"), (3, "b3"), (4, "b4")])
    pyiceberg.load_table(f"{namespace}.a").delete(EqualTo(term="id", value=2))
    time.sleep(0.05)
    at = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
    time.sleep(0.05)
    stop = threading.Event()

    def write() -> None:
        n = 10
        while not stop.is_set():
            _append(pyiceberg, f"{namespace}.a", [(n, f"a{n}")])
            _append(pyiceberg, f"{namespace}.b", [(n, f"b{n}")])
            n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        yield at
    finally:
        stop.set()
        writer.join(60)


def _join(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> list[Row]:
    names = {i: n for i, n in b}
    return sorted((i, n, names[i]) for i, n in a if i in names)


JOIN = "SELECT a.id, a.name, b.name FROM {c}.{ns}.a a JOIN {c}.{ns}.b b ON a.id = b.id ORDER BY 1"


def test_every_engine_joins_two_tables_exactly_as_of_a_pinned_moment(
    moment: str,
    namespace: str,
    engine_server: RunningServer,
    pyiceberg: RestCatalog,
    duckdb: Any,
    spark_engine: SparkShell,
    trino_engine: TrinoServer,
    spark: SparkSession,  # noqa: F811
    recorder: Recorder,
) -> None:
    pin, uri = f"main@{moment}", f"{engine_server.url}/iceberg"
    source = spark.read.format("catalog").option("catalog_url", engine_server.url)
    at = source.option("as_of", moment)
    expected = _join(
        [tuple(r) for r in at.load(f'"{namespace}"."a"').collect()],
        [tuple(r) for r in at.load(f'"{namespace}"."b"').collect()],
    )
    assert expected == [(1, "a1", "b1"), (3, "a3", "b3")]
    catalog = f"pin_{uuid.uuid4().hex[:8]}"
    got: dict[str, list[Row]] = {}

    duckdb.execute(
        f"ATTACH '{pin}' AS {catalog} (TYPE iceberg, ENDPOINT '{uri}', AUTHORIZATION_TYPE 'none')"
    )
    rows = run(DuckDBEngine(duckdb), JOIN.format(c=catalog, ns=namespace), recorder)
    got["duckdb"] = [tuple(r) for r in rows]  # type: ignore[misc]

    shell = SparkEngine(spark_engine)
    prefix = f"spark.sql.catalog.{catalog}"
    settings = {"": "org.apache.iceberg.spark.SparkCatalog", ".type": "rest", ".uri": uri}
    for key, value in {**settings, ".warehouse": pin}.items():
        run(shell, f"SET {prefix}{key}={value}", recorder)
    rows = run(shell, JOIN.format(c=catalog, ns=namespace), recorder)
    got["spark"] = [tuple(r) for r in rows]  # type: ignore[misc]

    trino = TrinoEngine(trino_engine)
    properties = {
        "iceberg.catalog.type": "rest",
        "iceberg.rest-catalog.uri": uri,
        "iceberg.rest-catalog.warehouse": pin,
        "fs.native-local.enabled": "true",
        "local.location": "/",
    }
    listed = ", ".join(f"\"{k}\" = '{v}'" for k, v in properties.items())
    run(trino, f"CREATE CATALOG {catalog} USING iceberg WITH ({listed})", recorder)
    rows = run(trino, JOIN.format(c=catalog, ns=namespace), recorder)
    got["trino"] = [tuple(r) for r in rows]  # type: ignore[misc]

    pinned = load_catalog(catalog, type="rest", uri=uri, warehouse=pin)
    assert isinstance(pinned, RestCatalog)
    tables = [pinned.load_table(f"{namespace}.{n}").scan().to_arrow() for n in ("a", "b")]
    got["pyiceberg"] = _join(
        *(list(zip(t["id"].to_pylist(), t["name"].to_pylist(), strict=True)) for t in tables)
    )

    assert got == dict.fromkeys(got, expected)
    latest = run(DuckDBEngine(duckdb), JOIN.format(c="cat", ns=namespace), recorder)
    assert len(latest) > len(expected), "the writers changed both tables after the moment"


def test_a_reader_at_any_moment_sees_all_of_a_multi_table_transaction_or_none(
    pyiceberg: RestCatalog,
    namespace: str,
    engine_server: RunningServer,
    duckdb: Any,
    spark_engine: SparkShell,
    recorder: Recorder,
) -> None:
    """A writer commits one row to each of two tables per transaction; DuckDB and Spark read
    both tables pinned at moments taken while it runs, and always count as many in each."""
    pyiceberg.create_namespace(namespace)
    for name in ("a", "b"):
        pyiceberg.create_table(f"{namespace}.{name}", PEOPLE)
    uri, stop, sent = f"{engine_server.url}/iceberg", threading.Event(), [0]

    def write() -> None:
        catalog = staging(engine_server)
        while not stop.is_set() and sent[0] < 40:
            catalog.staged.clear()
            for name in ("a", "b"):
                table = catalog.load_table(f"{namespace}.{name}")
                frame = [{"id": sent[0], "name": f"{name}{sent[0]}"}]
                with pytest.raises(Staged):
                    table.append(pa.Table.from_pylist(frame, schema=table.schema().as_arrow()))
            assert send(engine_server, catalog.staged).status_code == 204
            sent[0] += 1

    writer = threading.Thread(target=write)
    writer.start()
    counts: list[tuple[str, int, int]] = []
    count = "SELECT (SELECT count(*) FROM {c}.{ns}.a), (SELECT count(*) FROM {c}.{ns}.b)"
    try:
        for n in range(6):
            time.sleep(0.3)
            pin = f"main@{dt.datetime.now(dt.UTC).isoformat(timespec='milliseconds')}"
            catalog = f"tx_{uuid.uuid4().hex[:8]}"
            if n % 2 == 0:
                duckdb.execute(
                    f"ATTACH '{pin}' AS {catalog} "
                    f"(TYPE iceberg, ENDPOINT '{uri}', AUTHORIZATION_TYPE 'none')"
                )
                engine: Any = DuckDBEngine(duckdb)
            else:
                engine = SparkEngine(spark_engine)
                prefix = f"spark.sql.catalog.{catalog}"
                for key, value in {
                    "": "org.apache.iceberg.spark.SparkCatalog",
                    ".type": "rest",
                    ".uri": uri,
                    ".warehouse": pin,
                }.items():
                    run(engine, f"SET {prefix}{key}={value}", recorder)
            ((a, b),) = run(engine, count.format(c=catalog, ns=namespace), recorder)
            counts.append((engine.name, int(str(a)), int(str(b))))
    finally:
        stop.set()
        writer.join(60)
    assert all(a == b for _, a, b in counts), counts
    assert any(0 < a < sent[0] for _, a, _ in counts), counts  # read while it was writing

"""What a user of each engine does first: list, read, create, insert, drop.

Each scenario runs on DuckDB, Spark (Iceberg's runtime) and Trino against one catalog server.
A scenario an engine cannot do yet because of a gap of the server is marked strict xfail in
``GAPS``, naming the request the server refuses; when the server is fixed, the test passes
unexpectedly and its entry goes.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pyiceberg.catalog.rest import RestCatalog

from tests.integration.engines.conftest import (
    EngineError,
    Recorder,
    Seed,
    TrinoServer,
    engine_failure,
)
from tests.integration.engines.engines import DuckDBEngine, Engine, SparkEngine, TrinoEngine

pytestmark = pytest.mark.timeout(240)

ROWS = [(1, "ann"), (2, None)]

GAPS: dict[tuple[str, str], str] = {}
"""(scenario, engine) -> the server gap that makes it fail (strict xfail)."""


@pytest.fixture(params=["duckdb", "spark", "trino"])
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    gap = GAPS.get((request.function.__name__, request.param))
    if gap is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=gap))
    if request.param == "duckdb":
        yield DuckDBEngine(request.getfixturevalue("duckdb"))
    elif request.param == "spark":
        yield SparkEngine(request.getfixturevalue("spark_engine"))
    else:
        yield TrinoEngine(request.getfixturevalue("trino_engine"))


def run(engine: Engine, statement: str, recorder: Recorder) -> list[list[object]]:
    """Run ``statement``; a refusal fails the test naming the engine's and the server's error."""
    try:
        return engine.sql(statement)
    except EngineError as e:
        pytest.fail(f"[{engine.name}] " + engine_failure(statement, e, recorder), pytrace=False)


def test_lists_namespaces_and_tables(
    engine: Engine, seed: Seed, namespace: str, recorder: Recorder
) -> None:
    seed(namespace, "people", ROWS)
    try:
        assert namespace in engine.namespaces()
        assert engine.tables(namespace) == ["people"]
    except EngineError as e:
        pytest.fail(engine_failure("list", e, recorder), pytrace=False)


def test_reads_seeded_rows(engine: Engine, seed: Seed, namespace: str, recorder: Recorder) -> None:
    seed(namespace, "people", ROWS)
    rows = run(engine, f"SELECT id, name FROM cat.{namespace}.people ORDER BY id", recorder)
    assert [tuple(r) for r in rows] == ROWS


def test_reads_an_empty_table(
    engine: Engine, seed: Seed, namespace: str, recorder: Recorder
) -> None:
    seed(namespace, "people", [])
    assert run(engine, f"SELECT count(*) FROM cat.{namespace}.people", recorder) == [[0]]


def test_creates_and_drops_a_namespace(
    engine: Engine, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> None:
    run(engine, f"CREATE SCHEMA cat.{namespace}", recorder)
    assert (namespace,) in pyiceberg.list_namespaces()
    run(engine, f"DROP SCHEMA cat.{namespace}", recorder)
    assert (namespace,) not in pyiceberg.list_namespaces()


def test_creates_a_table(
    engine: Engine, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> None:
    pyiceberg.create_namespace(namespace)
    run(engine, f"CREATE TABLE cat.{namespace}.t (id BIGINT, name {engine.text_type})", recorder)
    table = pyiceberg.load_table(f"{namespace}.t")
    assert [f.name for f in table.schema().fields] == ["id", "name"]


def test_inserts_into_a_seeded_table(
    engine: Engine, seed: Seed, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> None:
    seed(namespace, "people", ROWS)
    run(engine, f"INSERT INTO cat.{namespace}.people VALUES (3, 'cy')", recorder)
    read = pyiceberg.load_table(f"{namespace}.people").scan().to_arrow()
    assert sorted(read.column("id").to_pylist()) == [1, 2, 3]
    rows = run(engine, f"SELECT id, name FROM cat.{namespace}.people ORDER BY id", recorder)
    assert [tuple(r) for r in rows] == [*ROWS, (3, "cy")]


def test_drops_a_seeded_table(
    engine: Engine, seed: Seed, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> None:
    seed(namespace, "people", ROWS)
    run(engine, f"DROP TABLE cat.{namespace}.people", recorder)
    assert not pyiceberg.table_exists(f"{namespace}.people")


def test_round_trip(engine: Engine, namespace: str, recorder: Recorder) -> None:
    """Create a namespace and a table, insert, read back, drop both: all through the engine."""
    run(engine, f"CREATE SCHEMA cat.{namespace}", recorder)
    run(engine, f"CREATE TABLE cat.{namespace}.t (id BIGINT, name {engine.text_type})", recorder)
    run(engine, f"INSERT INTO cat.{namespace}.t VALUES (1, 'ann'), (2, NULL)", recorder)
    rows = run(engine, f"SELECT id, name FROM cat.{namespace}.t ORDER BY id", recorder)
    assert [tuple(r) for r in rows] == ROWS
    run(engine, f"DROP TABLE cat.{namespace}.t", recorder)
    run(engine, f"DROP SCHEMA cat.{namespace}", recorder)
    assert namespace not in engine.namespaces()


def test_duckdb_scans_a_table_from_its_metadata_file_alone(
    duckdb: Any, seed: Seed, pyiceberg: RestCatalog, namespace: str
) -> None:
    """The metadata file a load names is on disk and holds the whole table."""
    seed(namespace, "people", ROWS)
    loaded = pyiceberg.load_table(f"{namespace}.people")
    # Beside the table's folder: <warehouse>/metadata/table_<id>/ for <warehouse>/table_<id>.
    warehouse, _, folder = loaded.location().rpartition("/")
    assert loaded.metadata_location.startswith(f"{warehouse}/metadata/{folder}/")
    rows = duckdb.execute(
        f"SELECT id, name FROM iceberg_scan('{loaded.metadata_location}') ORDER BY id"
    ).fetchall()
    assert [tuple(r) for r in rows] == ROWS


def test_creates_a_table_as_select(
    engine: Engine, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> None:
    """CTAS: a staged create, then one commit that creates the table with its first data."""
    pyiceberg.create_namespace(namespace)
    run(
        engine,
        f"CREATE TABLE cat.{namespace}.t AS SELECT CAST(id AS BIGINT) AS id, "
        f"CAST(name AS {engine.text_type}) AS name "
        "FROM (VALUES (1, 'ann'), (2, NULL)) AS v(id, name)",
        recorder,
    )
    table = pyiceberg.load_table(f"{namespace}.t")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2]
    rows = run(engine, f"SELECT id, name FROM cat.{namespace}.t ORDER BY id", recorder)
    assert [tuple(r) for r in rows] == ROWS


# --- Trino folds every name to lower case ---------------------------------------------------


def _upper_case_table(seed: Seed, rows: list[tuple[int, str | None]]) -> str:
    """Seed a table of its own in the catalog's PUBLIC schema; return its (upper-case) name."""
    name = f"ORDERS_{uuid.uuid4().hex[:8].upper()}"
    seed("PUBLIC", name, rows)
    return name


def test_trino_lists_and_reads_the_upper_case_public_schema_by_lower_case_names(
    trino_engine: TrinoServer, seed: Seed, recorder: Recorder
) -> None:
    engine = TrinoEngine(trino_engine)
    name = _upper_case_table(seed, [])
    assert "public" in engine.namespaces()
    assert name.lower() in engine.tables("public")
    columns = run(engine, f"DESCRIBE cat.public.{name.lower()}", recorder)
    assert [c[0] for c in columns] == ["id", "name"]
    assert run(engine, f"SELECT count(*) FROM cat.public.{name.lower()}", recorder) == [[0]]


def test_trino_reads_rows_of_the_upper_case_public_schema_by_lower_case_names(
    trino_engine: TrinoServer, seed: Seed, recorder: Recorder
) -> None:
    engine = TrinoEngine(trino_engine)
    name = _upper_case_table(seed, ROWS)
    rows = run(engine, f"SELECT id, name FROM cat.public.{name.lower()} ORDER BY id", recorder)
    assert [tuple(r) for r in rows] == ROWS


def test_duckdb_deletes_and_updates_with_delete_files_every_reader_applies(
    duckdb: Any, seed: Seed, namespace: str, pyiceberg: RestCatalog, recorder: Recorder
) -> None:
    """DuckDB deletes and updates merge-on-read: position delete files, which readers apply."""
    engine = DuckDBEngine(duckdb)
    seed(namespace, "people", [*ROWS, (3, "cy")])
    run(engine, f"DELETE FROM cat.{namespace}.people WHERE id = 1", recorder)
    run(engine, f"UPDATE cat.{namespace}.people SET name = 'bo' WHERE id = 2", recorder)
    expected = [(2, "bo"), (3, "cy")]
    rows = run(engine, f"SELECT id, name FROM cat.{namespace}.people ORDER BY id", recorder)
    assert [tuple(r) for r in rows] == expected
    arrow = pyiceberg.load_table(f"{namespace}.people").scan().to_arrow().sort_by("id")
    assert list(zip(arrow["id"].to_pylist(), arrow["name"].to_pylist(), strict=True)) == expected


def test_duckdb_reads_a_table_as_of_a_snapshot_and_a_timestamp(
    duckdb: Any, seed: Seed, namespace: str, pyiceberg: RestCatalog, recorder: Recorder
) -> None:
    engine = DuckDBEngine(duckdb)
    seed(namespace, "people", ROWS[:1])
    first = pyiceberg.load_table(f"{namespace}.people")
    snapshot = first.current_snapshot()
    assert snapshot is not None
    visible_ms = first.metadata.snapshot_log[-1].timestamp_ms
    run(engine, f"INSERT INTO cat.{namespace}.people VALUES (3, 'cy')", recorder)
    t = f"cat.{namespace}.people"
    at_version = f"SELECT id FROM {t} AT (VERSION => {snapshot.snapshot_id}) ORDER BY id"
    assert run(engine, at_version, recorder) == [[1]]
    when = f"make_timestamp({visible_ms * 1000})"
    assert run(engine, f"SELECT id FROM {t} AT (TIMESTAMP => {when}) ORDER BY id", recorder) == [
        [1]
    ]
    assert run(engine, f"SELECT id FROM {t} ORDER BY id", recorder) == [[1], [3]]

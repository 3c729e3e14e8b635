"""Every Iceberg engine reads and writes the same tables on S3 through the catalog, holding no
storage keys of its own.

The catalog runs as a real ``catalog serve`` process on a warehouse in SeaweedFS
(``s3_lake``): it alone has S3 keys, in its own environment. The test process and the engine
processes have no ``AWS_`` setting, and no engine is configured with a key: each asks the
catalog for access (``X-Iceberg-Access-Delegation``) and gets either short-lived keys for the
one table (``vended-credentials``) or the catalog's signature of each S3 request
(``remote-signing``). The catalog's own Spark source asks ``/v1/data/keys``.

The matrix, engine x mode (``test_engine_writes_and_reads_on_s3``): each engine creates a
table, writes rows and reads them back, in each mode it has (``NOT_AVAILABLE`` says why an
engine has no other). Then engines read and append to what others wrote, the vended keys
open their own table alone, and a caller that may not read a table gets neither keys nor
signatures.

Trino reads only the keys from a vended answer (``s3.access-key-id``, ``s3.secret-access-key``,
``s3.session-token``): where the store is (endpoint, region, path style) is in its catalog's
settings, as it must be.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table
from pyspark.sql import SparkSession

from tests.integration.engines.conftest import PEOPLE, EngineError, SparkShell, TrinoServer
from tests.integration.engines.engines import DuckDBEngine, Engine, SparkEngine, TrinoEngine
from tests.integration.engines.s3_lake import (
    KEY_VARIABLES,
    SIGNED,
    SIGNER_PATH,
    VENDED,
    Lake,
    config_keys,
    running_lake,
)
from tests.integration.engines.test_sign_in import (
    _duckdb_with,
    _pyiceberg,
    _spark_catalog,
    _trino_catalog,
)
from tests.integration.spark.conftest import spark  # noqa: F401  (the catalog's own Spark)
from tests.seaweedfs import SeaweedFS, seaweedfs_fixture

pytestmark = pytest.mark.timeout(300)

seaweedfs = seaweedfs_fixture("module")

ROWS: list[tuple[int, str | None]] = [(1, "ann"), (2, None)]
MODES = {"vended": VENDED, "signed": SIGNED}
"""The matrix's modes, and what each asks for in X-Iceberg-Access-Delegation."""
ENGINES = ["pyiceberg", "spark", "duckdb", "trino", "catalog-spark"]

NOT_AVAILABLE = {
    ("pyiceberg", "signed"): (
        "PyIceberg 0.12 signs only through FsspecFileIO with s3fs (s3.signer=S3V4RestSigner), "
        "and s3fs's aiobotocore would downgrade botocore 1.44.8 to 1.43.117; its pyarrow "
        "FileIO has no remote signing"
    ),
    ("duckdb", "signed"): (
        "DuckDB 1.4.4's iceberg extension takes ACCESS_DELEGATION_MODE 'vended_credentials' "
        "or 'none' only"
    ),
    ("trino", "signed"): (
        "Trino 476's REST catalog takes vended keys (iceberg.rest-catalog.vended-credentials-"
        "enabled) and has no remote signing"
    ),
    ("catalog-spark", "signed"): (
        "the catalog's Spark source reads and writes with the keys /v1/data/keys hands out; "
        "it has no remote signing"
    ),
}
"""(engine, mode) -> why the engine cannot work in that mode (not in the matrix)."""


SPARK_CATALOGS = {"vended": "lake_vended", "signed": "lake_signed"}
SPARK_PINNED = "lake_signer_pinned"
"""A Spark catalog signing through ``/v1/aws/s3/sign`` (pinned with ``signer.endpoint``)."""
TRINO_CATALOG = "lake_vended"


@pytest.fixture(scope="module", autouse=True)
def no_aws_settings() -> Iterator[None]:
    """The test process (DuckDB and the catalog's Spark run in it) has no ``AWS_`` setting."""
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.startswith("AWS_")]:
            patch.delenv(name)
        yield


@pytest.fixture(scope="module")
def lake(seaweedfs: SeaweedFS, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    with running_lake(tmp_path_factory.mktemp("s3-lake"), seaweedfs) as running:
        yield running


@pytest.fixture(scope="module")
def writer(lake: Lake) -> Catalog:
    """PyIceberg as the writer principal, asking for vended keys."""
    return _pyiceberg(lake.uri, lake.writer, extra={"header.X-Iceberg-Access-Delegation": VENDED})


@pytest.fixture(scope="module")
def spark_lake(lake: Lake, spark_engine: SparkShell) -> SparkEngine:
    """The run's Spark with Iceberg's S3FileIO on the lake: a catalog for each mode."""
    s3 = {".io-impl": "org.apache.iceberg.aws.s3.S3FileIO"}
    asks = ".header.X-Iceberg-Access-Delegation"
    for mode, name in SPARK_CATALOGS.items():
        _spark_catalog(spark_engine, name, lake.uri, lake.writer, {**s3, asks: MODES[mode]})
    pinned = {**s3, asks: SIGNED, ".signer.endpoint": SIGNER_PATH.removeprefix("/iceberg/")}
    _spark_catalog(spark_engine, SPARK_PINNED, lake.uri, lake.writer, pinned)
    return SparkEngine(spark_engine)


@pytest.fixture(scope="module")
def trino_lake(lake: Lake, trino_engine: TrinoServer) -> TrinoEngine:
    """The run's Trino with a catalog on the lake taking vended keys (native S3, no keys)."""
    settings = {
        "iceberg.rest-catalog.vended-credentials-enabled": "true",
        "fs.native-s3.enabled": "true",
        "s3.endpoint": lake.s3.endpoint_url,
        "s3.region": lake.s3.region,
        "s3.path-style-access": "true",
    }
    _trino_catalog(trino_engine, TRINO_CATALOG, lake.uri, lake.writer, settings)
    return TrinoEngine(trino_engine)


@pytest.fixture(scope="module")
def duckdb_lake(lake: Lake) -> Iterator[DuckDBEngine]:
    """DuckDB with the lake attached as ``cat``, taking vended keys."""
    token_endpoint = f"{lake.uri}/v1/oauth/tokens"
    attach = {"ACCESS_DELEGATION_MODE": "vended_credentials"}
    con = _duckdb_with(lake.uri, lake.writer, token_endpoint, attach=attach)
    try:
        yield DuckDBEngine(con)
    finally:
        con.close()


# --- how each engine writes and reads -------------------------------------------------------


def _run(engine: Engine, statement: str, lake: Lake) -> list[list[Any]]:
    """Run ``statement``; a refusal fails the test naming the engine's and the server's error."""
    mark = len(lake.server.requests())
    try:
        return engine.sql(statement)
    except EngineError as e:
        refused = lake.server.refused_since(mark).replace("\n", "\n    ")
        pytest.fail(
            f"[{engine.name}] {statement}\n  engine: {str(e)[:2000]}\n"
            f"  catalog server refused:\n    {refused}",
            pytrace=False,
        )


def _rows(engine: Engine, table: str, lake: Lake) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in _run(engine, f"SELECT id, name FROM {table} ORDER BY id", lake)]


def _values(rows: list[tuple[int, str | None]]) -> str:
    return ", ".join(f"({i}, {'NULL' if n is None else repr(n)})" for i, n in rows)


def _sql_writes_and_reads(engine: Engine, table: str, lake: Lake) -> list[tuple[Any, ...]]:
    """Create ``table`` with ``engine``, insert ``ROWS``, and read them back."""
    _run(engine, f"CREATE TABLE {table} (id BIGINT, name {engine.text_type})", lake)
    _run(engine, f"INSERT INTO {table} VALUES {_values(ROWS)}", lake)
    return _rows(engine, table, lake)


def _append(table: Table, rows: list[tuple[int, str | None]]) -> None:
    arrow = [{"id": i, "name": n} for i, n in rows]
    table.append(pa.Table.from_pylist(arrow, schema=table.schema().as_arrow()))


def _pyiceberg_rows(catalog: Catalog, name: str) -> list[tuple[Any, ...]]:
    read = catalog.load_table(name).scan().to_arrow().sort_by("id")
    return list(zip(read["id"].to_pylist(), read["name"].to_pylist(), strict=True))


def _source(lake: Lake, namespace: str) -> dict[str, str]:
    """The options of the catalog's Spark source on table ``namespace.t``, as the writer."""
    return {
        "catalog_url": lake.server.url,
        "credential": lake.writer,
        "table": f'"{namespace}"."t"',
    }


def _catalog_spark_rows(session: SparkSession, lake: Lake, namespace: str) -> list[tuple[Any, ...]]:
    read = session.read.format("catalog").options(**_source(lake, namespace)).load()
    return sorted((r[0], r[1]) for r in read.collect())


def _worker_key_variables(session: SparkSession) -> list[str]:
    """Return the S3 key variables a Python worker of the catalog's Spark has (none)."""
    names = KEY_VARIABLES
    found = session.sparkContext.parallelize([0], 1).flatMap(
        lambda _: [n for n in names if n in os.environ]
    )
    return sorted(found.collect())


def _writes_and_reads(
    request: pytest.FixtureRequest, engine: str, mode: str, namespace: str, lake: Lake
) -> list[tuple[Any, ...]]:
    """Have ``engine`` in ``mode`` create table ``namespace.t``, write ``ROWS``, read them."""
    writer: Catalog = request.getfixturevalue("writer")
    if engine == "pyiceberg":
        _append(writer.create_table(f"{namespace}.t", PEOPLE), ROWS)
        return _pyiceberg_rows(writer, f"{namespace}.t")
    if engine == "catalog-spark":
        session: SparkSession = request.getfixturevalue("spark")
        assert _worker_key_variables(session) == []
        writer.create_table(f"{namespace}.t", PEOPLE)
        frame = session.createDataFrame(ROWS, "id BIGINT NOT NULL, name STRING")
        frame.write.format("catalog").options(**_source(lake, namespace)).mode("append").save()
        assert _pyiceberg_rows(writer, f"{namespace}.t") == ROWS  # an Iceberg engine reads it
        return _catalog_spark_rows(session, lake, namespace)
    if engine == "spark":
        spark_lake: Engine = request.getfixturevalue("spark_lake")
        return _sql_writes_and_reads(spark_lake, f"{SPARK_CATALOGS[mode]}.{namespace}.t", lake)
    if engine == "duckdb":
        duckdb_lake: Engine = request.getfixturevalue("duckdb_lake")
        return _sql_writes_and_reads(duckdb_lake, f"cat.{namespace}.t", lake)
    trino_lake: Engine = request.getfixturevalue("trino_lake")
    return _sql_writes_and_reads(trino_lake, f"{TRINO_CATALOG}.{namespace}.t", lake)


# --- the matrix -----------------------------------------------------------------------------


MATRIX = [(e, m) for e in ENGINES for m in MODES if (e, m) not in NOT_AVAILABLE]
"""Every engine in every mode it has (the others are ``NOT_AVAILABLE``, and said why)."""


@pytest.mark.parametrize(("engine", "mode"), MATRIX)
def test_engine_writes_and_reads_on_s3(
    request: pytest.FixtureRequest,
    engine: str,
    mode: str,
    lake: Lake,
    writer: Catalog,
    namespace: str,
) -> None:
    writer.create_namespace(namespace)
    assert _writes_and_reads(request, engine, mode, namespace, lake) == ROWS


def test_spark_signs_through_the_catalog_with_its_signer_endpoint_pinned(
    lake: Lake, writer: Catalog, spark_lake: SparkEngine, namespace: str
) -> None:
    """Iceberg 1.12's S3FileIO, told the catalog's signer path, writes and reads with no keys:
    every S3 request it makes is one the catalog signed."""
    writer.create_namespace(namespace)
    mark = len(lake.server.requests())
    table = f"{SPARK_PINNED}.{namespace}.t"
    assert _sql_writes_and_reads(spark_lake, table, lake) == ROWS
    signed = [a for a in lake.server.requests()[mark:] if a.target == SIGNER_PATH]
    assert signed and all(a.status == 200 for a in signed), signed
    loaded = lake.load(lake.writer, f"namespaces/{namespace}/tables/t", SIGNED)
    assert loaded.status_code == 200, loaded.text
    config = loaded.json()["config"]
    assert config["s3.remote-signing-enabled"] == "true"
    assert "s3.access-key-id" not in config and "storage-credentials" not in loaded.json()


# --- cross-engine ---------------------------------------------------------------------------


def test_every_engine_reads_and_appends_to_what_spark_wrote(
    lake: Lake,
    writer: Catalog,
    spark_lake: SparkEngine,
    duckdb_lake: DuckDBEngine,
    trino_lake: TrinoEngine,
    spark: SparkSession,  # noqa: F811
    namespace: str,
) -> None:
    writer.create_namespace(namespace)
    t = f"{namespace}.t"
    assert _sql_writes_and_reads(spark_lake, f"{SPARK_CATALOGS['vended']}.{t}", lake) == ROWS
    assert _pyiceberg_rows(writer, t) == ROWS
    assert _rows(duckdb_lake, f"cat.{t}", lake) == ROWS
    assert _rows(trino_lake, f"{TRINO_CATALOG}.{t}", lake) == ROWS
    assert _catalog_spark_rows(spark, lake, namespace) == ROWS
    _run(duckdb_lake, f"INSERT INTO cat.{t} VALUES (3, 'duckdb')", lake)
    _run(trino_lake, f"INSERT INTO {TRINO_CATALOG}.{t} VALUES (4, 'trino')", lake)
    every = [*ROWS, (3, "duckdb"), (4, "trino")]
    assert _rows(spark_lake, f"{SPARK_PINNED}.{t}", lake) == every
    assert _pyiceberg_rows(writer, t) == every


def test_spark_duckdb_and_trino_read_what_pyiceberg_wrote(
    lake: Lake,
    writer: Catalog,
    spark_lake: SparkEngine,
    duckdb_lake: DuckDBEngine,
    trino_lake: TrinoEngine,
    namespace: str,
) -> None:
    writer.create_namespace(namespace)
    t = f"{namespace}.t"
    _append(writer.create_table(t, PEOPLE), ROWS)
    assert _rows(spark_lake, f"{SPARK_CATALOGS['vended']}.{t}", lake) == ROWS
    assert _rows(spark_lake, f"{SPARK_PINNED}.{t}", lake) == ROWS
    assert _rows(duckdb_lake, f"cat.{t}", lake) == ROWS
    assert _rows(trino_lake, f"{TRINO_CATALOG}.{t}", lake) == ROWS


# --- what the keys open, and what is refused ------------------------------------------------


def _denied(action: Any) -> None:
    with pytest.raises(OSError, match="ACCESS_DENIED"):
        action()


def _read(fs: pafs.S3FileSystem, path: str) -> bytes:
    with fs.open_input_stream(path) as source:
        data: bytes = source.read()
        return data


def _write(fs: pafs.S3FileSystem, path: str) -> None:
    with fs.open_output_stream(path) as out:
        out.write(b"x")


def test_vended_keys_open_their_own_table_alone(
    lake: Lake, writer: Catalog, namespace: str
) -> None:
    writer.create_namespace(namespace)
    mine = writer.create_table(f"{namespace}.mine", PEOPLE)
    _append(mine, ROWS)
    sibling = writer.create_table(f"{namespace}.sibling", PEOPLE)
    _append(sibling, ROWS)
    mine, sibling = (
        writer.load_table(f"{namespace}.mine"),
        writer.load_table(f"{namespace}.sibling"),
    )
    keys = config_keys(mine.io.properties)
    assert keys.access_key not in (lake.s3.admin.access_key, lake.s3.reader.access_key)
    fs = lake.s3.filesystem(keys)
    assert _read(fs, mine.metadata_location.removeprefix("s3://"))
    sibling_data = lake.s3.filesystem().get_file_info(
        pafs.FileSelector(sibling.location().removeprefix("s3://"), recursive=True)
    )
    _denied(lambda: _read(fs, sibling.metadata_location.removeprefix("s3://")))
    _denied(lambda: _read(fs, next(i.path for i in sibling_data if i.size)))
    _denied(lambda: _write(fs, f"{sibling.location().removeprefix('s3://')}/data/x.parquet"))
    _write(fs, f"{mine.location().removeprefix('s3://')}/data/written-with-vended-keys")

    # A reader's keys read the table and write nothing.
    reader = _pyiceberg(lake.uri, lake.reader, extra={"header.X-Iceberg-Access-Delegation": VENDED})
    read_only = lake.s3.filesystem(
        config_keys(reader.load_table(f"{namespace}.mine").io.properties)
    )
    assert _read(read_only, mine.metadata_location.removeprefix("s3://"))
    _denied(lambda: _write(read_only, f"{mine.location().removeprefix('s3://')}/data/y.parquet"))

    # /credentials answers keys for the table's location and its metadata folder.
    fresh = lake.load(lake.writer, f"namespaces/{namespace}/tables/mine/credentials", None)
    assert fresh.status_code == 200, fresh.text
    prefixes = sorted(c["prefix"] for c in fresh.json()["storage-credentials"])
    folder = mine.metadata_location.rsplit("/", 1)[0]
    assert prefixes == sorted([mine.location(), folder])


def test_no_keys_and_no_signature_for_a_table_the_caller_may_not_read(
    lake: Lake, writer: Catalog, namespace: str
) -> None:
    writer.create_namespace(namespace)
    table = writer.create_table(f"{namespace}.t", PEOPLE)
    _append(table, ROWS)
    metadata = writer.load_table(f"{namespace}.t").metadata_location.removeprefix("s3://")
    mark = len(lake.server.requests())

    refused = lake.sign(lake.nobody, "GET", metadata)
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["type"] == "ForbiddenException", refused.text
    assert "headers" not in refused.json() and "AWS4-HMAC-SHA256" not in refused.text
    outside = lake.sign(lake.writer, "GET", f"{metadata.split('/')[0]}/elsewhere/x.parquet")
    assert outside.status_code == 403 and "AWS4-HMAC-SHA256" not in outside.text, outside.text
    allowed = lake.sign(lake.writer, "GET", metadata)  # the signer itself works
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["headers"]["Authorization"][0].startswith("AWS4-HMAC-SHA256")

    for path in (
        f"namespaces/{namespace}/tables/t",
        f"namespaces/{namespace}/tables/t/credentials",
    ):
        hidden = lake.load(lake.nobody, path, VENDED)
        assert hidden.status_code in (403, 404), hidden.text
        for key in ("s3.access-key-id", "s3.secret-access-key", "s3.session-token"):
            assert key not in hidden.text
        assert "storage-credentials" not in hidden.text
    statuses = [a.status for a in lake.server.requests()[mark:] if a.target == SIGNER_PATH]
    assert statuses == [403, 403, 200]
    # Nothing the catalog printed shows its keys.
    assert lake.s3.admin.secret_key not in lake.server.log_text()

"""Every engine signs in with a principal's client id and secret, and does what its role allows.

A catalog server with auth on (its own, beside the shared one the other engine tests use)
has a writer principal and a reader principal. PyIceberg, Spark's Iceberg runtime, Trino and
DuckDB are each configured the standard way (``credential=<id>:<secret>``; DuckDB's
``CLIENT_ID``/``CLIENT_SECRET``): they fetch an access token from ``/iceberg/v1/oauth/tokens``
and send it with every request. The writer's engines create and write a table; the reader's
read it and are refused when they write. Each version names the principal that made it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import ForbiddenError, OAuthError

from api.wire.roles import Role
from tests.integration.api.servers import RunningServer, issue_token
from tests.integration.engines.conftest import (
    PEOPLE,
    EngineError,
    Recorder,
    SparkShell,
    TrinoServer,
    catalog_settings,
    duckdb_extension_directory,
)
from tests.integration.engines.engines import DuckDBEngine, SparkEngine, TrinoEngine
from tests.integration.engines.test_smoke import run

pytestmark = pytest.mark.timeout(300)


class SignedServer:
    """A catalog server with auth on, and the credentials of its two principals."""

    def __init__(self, server: RunningServer, writer: str, reader: str) -> None:
        self.server = server
        self.uri = f"{server.url}/iceberg"
        self.writer = writer
        self.reader = reader


class Served(Protocol):
    """A catalog server, in the test process or not: where it answers."""

    url: str


def _principal(server: Served, admin: str, name: str, role: str) -> str:
    made = httpx.post(
        f"{server.url}/v1/principals",
        json={"name": name, "role": role},
        headers={"Authorization": f"Bearer {admin}"},
        timeout=10,
    )
    assert made.status_code == 201, made.text
    return f"{made.json()['client_id']}:{made.json()['client_secret']}"


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SignedServer]:
    server = RunningServer(catalog_settings(tmp_path_factory.mktemp("signed"), auth="on"))
    store = server.settings.store
    server.start()
    try:
        admin = issue_token(store, Role.ADMIN)
        yield SignedServer(
            server,
            _principal(server, admin, "pipeline", "writer"),
            _principal(server, admin, "analyst", "reader"),
        )
    finally:
        server.stop()


def _principals_of_versions(signed: SignedServer) -> list[str]:
    admin = issue_token(signed.server.settings.store, Role.ADMIN)
    answer = httpx.get(
        f"{signed.server.url}/v1/versions",
        params={"from_version": 1, "limit": 1000},
        headers={"Authorization": f"Bearer {admin}"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    return [o["principal"] for v in answer.json()["versions"] for o in v["origins"]]


def _pyiceberg(
    uri: str,
    credential: str,
    token_endpoint: str | None = None,
    scope: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> Catalog:
    """PyIceberg on ``uri``, signed in with ``credential`` at ``token_endpoint`` (by default
    the catalog's own), with ``extra`` settings."""
    scoped = {} if scope is None else {"scope": scope}
    return load_catalog(
        "signed",
        type="rest",
        uri=uri,
        credential=credential,
        **{"oauth2-server-uri": token_endpoint or f"{uri}/v1/oauth/tokens"},
        **scoped,
        **(extra or {}),
    )


def _spark_catalog(
    shell: SparkShell,
    name: str,
    uri: str,
    credential: str,
    extra: dict[str, str] | None = None,
) -> None:
    """Register Spark catalog ``name`` on ``uri``, signing in with ``credential``."""
    settings = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "rest",
        ".uri": uri,
        ".credential": credential,
        **(extra or {}),
    }
    for key, value in settings.items():
        shell.sql(f"SET `spark.sql.catalog.{name}{key}`=`{value}`")


def _trino_catalog(
    server: TrinoServer,
    name: str,
    uri: str,
    credential: str,
    extra: dict[str, str] | None = None,
) -> None:
    """Create Trino catalog ``name`` on ``uri``, signing in with ``credential``."""
    properties = {
        "iceberg.catalog.type": "rest",
        "iceberg.rest-catalog.uri": uri,
        "iceberg.rest-catalog.security": "OAUTH2",
        "iceberg.rest-catalog.oauth2.credential": credential,
        "fs.native-local.enabled": "true",
        "local.location": "/",
        **(extra or {}),
    }
    listed = ", ".join(f"\"{k}\" = '{v}'" for k, v in properties.items())
    server.sql(f"CREATE CATALOG {name} USING iceberg WITH ({listed})")


def _duckdb(uri: str, credential: str) -> Any:
    return _duckdb_with(uri, credential, f"{uri}/v1/oauth/tokens")


def _duckdb_with(
    uri: str,
    credential: str,
    token_endpoint: str,
    scope: str | None = None,
    attach: Mapping[str, str] | None = None,
) -> Any:
    """A DuckDB connection attached as ``cat``, signing in at ``token_endpoint``, with more
    ATTACH options ``attach``."""
    import duckdb as duck

    con = duck.connect(
        config={
            "extension_directory": duckdb_extension_directory(),
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        }
    )
    for extension in ("httpfs", "avro", "iceberg"):
        con.execute(f"LOAD {extension}")
    client_id, secret = credential.split(":", 1)
    scoped = "" if scope is None else f", OAUTH2_SCOPE '{scope}'"
    con.execute(
        f"CREATE SECRET signed (TYPE iceberg, CLIENT_ID '{client_id}', "
        f"CLIENT_SECRET '{secret}', OAUTH2_SERVER_URI '{token_endpoint}'{scoped})"
    )
    more = "".join(f", {option} '{value}'" for option, value in (attach or {}).items())
    con.execute(f"ATTACH 'warehouse' AS cat (TYPE iceberg, SECRET signed, ENDPOINT '{uri}'{more})")
    return con


def test_each_engine_signs_in_and_does_what_its_role_allows(
    signed: SignedServer,
    namespace: str,
    spark_engine: SparkShell,
    trino_engine: TrinoServer,
    recorder: Recorder,
) -> None:
    # PyIceberg, as the writer: creates and fills the table.
    writer = _pyiceberg(signed.uri, signed.writer)
    writer.create_namespace(namespace)
    table = writer.create_table(f"{namespace}.people", PEOPLE)
    rows = [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))

    # Spark's Iceberg runtime, as the writer: reads and appends.
    _spark_catalog(spark_engine, "signed_w", signed.uri, signed.writer)
    spark = SparkEngine(spark_engine)
    people = f"signed_w.{namespace}.people"
    assert run(spark, f"SELECT count(*) FROM {people}", recorder) == [[2]]
    run(spark, f"INSERT INTO {people} VALUES (3, 'cy')", recorder)

    # Trino, as the reader: reads all three rows, may not write.
    _trino_catalog(trino_engine, f"r_{namespace}", signed.uri, signed.reader)
    trino = TrinoEngine(trino_engine)
    read = f"r_{namespace}.{namespace}.people"
    assert run(trino, f"SELECT id, name FROM {read} ORDER BY id", recorder) == [
        [1, "ann"],
        [2, "bob"],
        [3, "cy"],
    ]
    with pytest.raises(EngineError, match="analyst has the reader role"):
        trino.sql(f"INSERT INTO {read} VALUES (4, 'dee')")

    # DuckDB, as the reader: reads, may not write.
    con = _duckdb(signed.uri, signed.reader)
    try:
        duck = DuckDBEngine(con)
        assert run(duck, f"SELECT count(*) FROM cat.{namespace}.people", recorder) == [[3]]
        with pytest.raises(EngineError):
            duck.sql(f"INSERT INTO cat.{namespace}.people VALUES (4, 'dee')")
    finally:
        con.close()

    # PyIceberg, as the reader: reads, may not create.
    reader = _pyiceberg(signed.uri, signed.reader)
    assert reader.load_table(f"{namespace}.people").scan().to_arrow().num_rows == 3
    with pytest.raises(ForbiddenError, match="analyst has the reader role"):
        reader.create_table(f"{namespace}.other", PEOPLE)

    assert set(_principals_of_versions(signed)) >= {"pipeline"}
    assert "analyst" not in _principals_of_versions(signed)


def test_a_wrong_secret_signs_no_engine_in(signed: SignedServer, trino_engine: TrinoServer) -> None:
    client_id = signed.reader.split(":", 1)[0]
    with pytest.raises(OAuthError, match="invalid_client"):
        _pyiceberg(signed.uri, f"{client_id}:wrong")
    with pytest.raises(Exception, match="Could not get token"):  # DuckDB shows no more
        _duckdb(signed.uri, f"{client_id}:wrong")
    missing = httpx.get(f"{signed.uri}/v1/config", timeout=10)
    assert missing.status_code == 401


def test_spark_with_a_wrong_secret_is_refused(
    signed: SignedServer, spark_engine: SparkShell, namespace: str
) -> None:
    client_id = signed.writer.split(":", 1)[0]
    _spark_catalog(spark_engine, "signed_bad", signed.uri, f"{client_id}:wrong")
    with pytest.raises(EngineError, match="unknown client id or wrong client secret"):
        spark_engine.sql("SHOW NAMESPACES IN signed_bad")

"""Engines signed in as principals of the role ``none`` see and do only what they were granted.

A catalog server with auth on holds schemas SALES (tables ORDERS and ITEMS) and HR (table
PAY), made and filled through PyIceberg by a writer principal. An admin grants, over
``/v1/ddl``: the role MARKETING holds USAGE on SALES and SELECT on SALES.ORDERS, and ann
holds MARKETING; etl holds USAGE on SALES and MODIFY on SALES.ORDERS. Both have
the cluster role ``none``, so they hold nothing more. Each engine signs in with a principal's
client id and secret: what its principal may not see is missing (the engine's own "table not
found") and left out of lists, and what it sees but may not change is refused naming the
principal and the privilege. A revoke applies to the next request that reaches the catalog.

With an outside provider (Keycloak), a token whose groups map to no cluster role holds what
the catalog role named like its group was granted, and nothing more: PyIceberg, Spark's Iceberg
runtime and DuckDB, each signed in at Keycloak as a client of the group ``marketing``, see and
do what MARKETING may.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import ForbiddenError, NoSuchNamespaceError, NoSuchTableError

from api.wire.roles import Role
from tests.integration.api.servers import RunningServer, issue_token
from tests.integration.engines.conftest import (
    PEOPLE,
    EngineError,
    Recorder,
    SparkShell,
    catalog_settings,
)
from tests.integration.engines.engines import DuckDBEngine, SparkEngine
from tests.integration.engines.keycloak import Keycloak, Realm, trusting_server
from tests.integration.engines.recording import RecordingMiddleware, RequestLog
from tests.integration.engines.test_sign_in import (
    _duckdb,
    _duckdb_with,
    _principal,
    _pyiceberg,
    _spark_catalog,
)
from tests.integration.engines.test_smoke import run

pytestmark = pytest.mark.timeout(300)

TABLES = ("SALES.ORDERS", "SALES.ITEMS", "HR.PAY")
SEEDED = [[1, "ann"], [2, "bob"]]
"""The rows each table is made with; later appends use ids from 10 up."""
REVOKE_S = 5.0
"""How long a revoke may take to reach an engine's next read."""


def _grant(
    privileges: dict[str, Any], grantee: str, to: str = "user", op: str = "grant"
) -> dict[str, Any]:
    """The command granting (or revoking, ``op``) ``privileges`` (with what they are on)."""
    return {"op": op, **privileges, "to": to, "grantee": grantee}


def _role(role: str) -> dict[str, Any]:
    """The privileges that give role ``role`` to a grantee."""
    return {"privileges": ["USAGE"], "on": "role", "name": role}


def _append(catalog: Catalog, row_id: int, name: str) -> None:
    """Append one row to SALES.ORDERS through ``catalog``."""
    orders = catalog.load_table("SALES.ORDERS")
    row = [{"id": row_id, "name": name}]
    orders.append(pa.Table.from_pylist(row, schema=orders.schema().as_arrow()))


MARKETING = [
    {"op": "create_role", "name": "MARKETING"},
    _grant({"privileges": ["USAGE"], "on": "schema", "name": "SALES"}, "MARKETING", "role"),
    _grant(
        {"privileges": ["SELECT"], "on": "table", "schema": "SALES", "name": "ORDERS"},
        "MARKETING",
        "role",
    ),
]
"""The role MARKETING: it reads SALES.ORDERS, and nothing else."""


def _ddl(server: RunningServer, *commands: dict[str, Any]) -> None:
    """Run ``commands`` as one batch with an admin token."""
    admin = issue_token(server.settings.store, Role.ADMIN)
    answer = httpx.post(
        f"{server.url}/v1/ddl",
        json={"commands": list(commands)},
        headers={"Authorization": f"Bearer {admin}"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text


def _make_tables(server: RunningServer) -> None:
    """Make SALES.ORDERS, SALES.ITEMS and HR.PAY with two rows each, as a writer principal."""
    admin = issue_token(server.settings.store, Role.ADMIN)
    maker = _pyiceberg(f"{server.url}/iceberg", _principal(server, admin, "maker", "writer"))
    for namespace in ("SALES", "HR"):
        maker.create_namespace(namespace)
    for name in TABLES:
        table = maker.create_table(name, PEOPLE)
        rows = [{"id": i, "name": n} for i, n in SEEDED]
        table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))


@dataclass
class Granted:
    """The server, its request log, and the credentials of ann and etl (role ``none``)."""

    server: RunningServer
    log: RequestLog
    ann: str
    etl: str

    @property
    def uri(self) -> str:
        return f"{self.server.url}/iceberg"


@pytest.fixture(scope="module")
def granted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Granted]:
    server = RunningServer(catalog_settings(tmp_path_factory.mktemp("granted"), auth="on"))
    log = RequestLog()
    server.app.add_middleware(RecordingMiddleware, log=log)
    server.start()
    try:
        admin = issue_token(server.settings.store, Role.ADMIN)
        ann = _principal(server, admin, "ann", "none")
        etl = _principal(server, admin, "etl", "none")
        _make_tables(server)
        _ddl(
            server,
            *MARKETING,
            _grant(_role("MARKETING"), "ann"),
            _grant({"privileges": ["USAGE"], "on": "schema", "name": "SALES"}, "etl"),
            _grant(
                {"privileges": ["MODIFY"], "on": "table", "schema": "SALES", "name": "ORDERS"},
                "etl",
            ),
        )
        yield Granted(server, log, ann, etl)
    finally:
        server.stop()


@pytest.fixture
def served(granted: Granted) -> Recorder:
    """The requests the granted server answered since the test began."""
    return Recorder(granted.log)


@pytest.fixture(scope="module")
def ann_spark(granted: Granted, spark_engine: SparkShell) -> SparkEngine:
    """The run's Spark with Spark catalog ``as_ann``, signed in as ann."""
    _spark_catalog(spark_engine, "as_ann", granted.uri, granted.ann)
    return SparkEngine(spark_engine)


def _eventually_refused(read: Callable[[], object], words: str) -> str:
    """Return the error of ``read`` once it fails naming ``words``, within ``REVOKE_S``."""
    deadline = time.monotonic() + REVOKE_S
    while True:
        try:
            read()
        except EngineError as e:
            if words in str(e):
                return str(e)
            raise
        if time.monotonic() > deadline:
            pytest.fail(f"still read {REVOKE_S} s after the revoke")
        time.sleep(0.2)


def _refused_as_marketing(refused: pytest.ExceptionInfo[EngineError], principal: str) -> None:
    """Check that ``refused`` names ``principal``'s role ``none`` and the MODIFY it lacks."""
    assert f"{principal} has the none role" in str(refused.value), refused.value
    assert "MODIFY on table SALES.ORDERS" in str(refused.value), refused.value


def _spark_holds_marketings_grants(
    spark: SparkEngine, catalog: str, principal: str, served: Recorder
) -> None:
    """Check that Spark catalog ``catalog``, signed in as ``principal`` (role ``none``,
    holding MARKETING), lists and reads SALES.ORDERS alone, and may not write it."""
    assert run(spark, f"SHOW NAMESPACES IN {catalog}", served) == [["SALES"]]
    listed = run(spark, f"SHOW TABLES IN {catalog}.SALES", served)
    assert [r[1] for r in listed] == ["ORDERS"]
    orders = f"{catalog}.SALES.ORDERS"
    rows = run(spark, f"SELECT id, name FROM {orders} WHERE id < 10 ORDER BY id", served)
    assert rows == SEEDED
    for hidden in ("SALES.ITEMS", "HR.PAY"):
        with pytest.raises(EngineError, match="TABLE_OR_VIEW_NOT_FOUND"):
            spark.sql(f"SELECT * FROM {catalog}.{hidden}")
    with pytest.raises(EngineError, match="Namespace does not exist: HR"):
        spark.sql(f"SHOW TABLES IN {catalog}.HR")
    with pytest.raises(EngineError) as refused:
        spark.sql(f"INSERT INTO {orders} VALUES (9, 'eve')")
    _refused_as_marketing(refused, principal)
    assert run(spark, f"SELECT count(*) FROM {orders} WHERE id = 9", served) == [[0]]


def _duckdb_holds_marketings_grants(con: Any, principal: str, served: Recorder) -> None:
    """Check that DuckDB catalog ``cat`` on ``con``, signed in as ``principal`` (role
    ``none``, holding MARKETING), reads SALES.ORDERS alone and may not write it; close
    ``con``."""
    try:
        duck = DuckDBEngine(con)
        rows = run(duck, "SELECT id, name FROM cat.SALES.ORDERS WHERE id < 10 ORDER BY id", served)
        assert rows == SEEDED
        with pytest.raises(EngineError, match="Table with name ITEMS does not exist"):
            duck.sql("SELECT * FROM cat.SALES.ITEMS")
        with pytest.raises(EngineError, match="Forbidden_403") as refused:
            duck.sql("INSERT INTO cat.SALES.ORDERS VALUES (9, 'eve')")
        _refused_as_marketing(refused, principal)
    finally:
        con.close()


def test_spark_as_ann_sees_and_reads_only_the_granted_table(
    ann_spark: SparkEngine, served: Recorder
) -> None:
    _spark_holds_marketings_grants(ann_spark, "as_ann", "ann", served)


def test_duckdb_as_ann_reads_the_granted_table_only(granted: Granted, served: Recorder) -> None:
    _duckdb_holds_marketings_grants(_duckdb(granted.uri, granted.ann), "ann", served)


def test_pyiceberg_as_etl_sees_the_table_it_may_modify_and_may_not_drop_it(
    granted: Granted,
) -> None:
    etl = _pyiceberg(granted.uri, granted.etl)
    assert etl.list_namespaces() == [("SALES",)]
    assert etl.list_tables("SALES") == [("SALES", "ORDERS")]
    with pytest.raises(NoSuchTableError, match=r"SALES\.ITEMS"):
        etl.load_table("SALES.ITEMS")
    with pytest.raises(NoSuchNamespaceError):
        etl.list_tables("HR")
    with pytest.raises(ForbiddenError, match="etl has the none role") as refused:
        etl.drop_table("SALES.ORDERS")
    assert "DROP on table SALES.ORDERS" in str(refused.value)
    assert etl.table_exists("SALES.ORDERS")


def test_pyiceberg_as_etl_appends_with_modify_alone(granted: Granted) -> None:
    """MODIFY lets a writer load the metadata it commits against, and commit."""
    etl = _pyiceberg(granted.uri, granted.etl)
    _append(etl, 11, "etl")
    assert etl.load_table("SALES.ORDERS").scan(row_filter="id = 11").to_arrow().num_rows == 1


def test_a_revoke_reaches_anns_next_read(
    granted: Granted, ann_spark: SparkEngine, served: Recorder
) -> None:
    orders = "as_ann.SALES.ORDERS"
    assert run(ann_spark, f"SELECT count(*) FROM {orders} WHERE id < 10", served) == [[2]]
    con = _duckdb(granted.uri, granted.ann)
    try:
        duck = DuckDBEngine(con)
        assert run(duck, "SELECT count(*) FROM cat.SALES.ORDERS WHERE id < 10", served) == [[2]]
    finally:
        con.close()
    _ddl(granted.server, _grant(_role("MARKETING"), "ann", op="revoke"))
    try:

        def spark_read() -> object:
            ann_spark.sql(f"REFRESH TABLE {orders}")  # Spark's catalog keeps loaded tables
            return ann_spark.sql(f"SELECT count(*) FROM {orders}")

        _eventually_refused(spark_read, "TABLE_OR_VIEW_NOT_FOUND")
        assert run(ann_spark, "SHOW NAMESPACES IN as_ann", served) == []

        def duckdb_read() -> object:
            fresh = _duckdb(granted.uri, granted.ann)
            try:
                return DuckDBEngine(fresh).sql("SELECT count(*) FROM cat.SALES.ORDERS")
            finally:
                fresh.close()

        _eventually_refused(duckdb_read, "Table with name ORDERS does not exist")
    finally:
        _ddl(granted.server, _grant(_role("MARKETING"), "ann"))


# --- an outside provider's groups --------------------------------------------------------


CAMPAIGNS = "service-account-campaigns"
"""The principal the catalog names the Keycloak client ``campaigns`` by."""


@dataclass
class Outside:
    """A catalog server trusting a Keycloak realm, its request log, and the secret of the
    client ``campaigns`` in the group ``marketing``."""

    uri: str
    realm: Realm
    secret: str
    log: RequestLog

    @property
    def credential(self) -> str:
        return f"campaigns:{self.secret}"

    def signed_in_at_keycloak(self, served: Recorder) -> None:
        """Check that the engine asked the catalog, but never for a token (it has no secret)."""
        asked = {e.path for e in self.log.since(served.start)}
        assert "/iceberg/v1/config" in asked, asked
        assert "/iceberg/v1/oauth/tokens" not in asked, asked


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outside]:
    keycloak = Keycloak(tmp_path_factory.mktemp("granted-keycloak"))
    try:
        realm = keycloak.realm("lake", ["etl", "marketing"])
        secret = realm.client("campaigns", ["marketing"])
        server = trusting_server(tmp_path_factory.mktemp("granted-oidc"), realm, "writer=etl")
        log = RequestLog()
        server.app.add_middleware(RecordingMiddleware, log=log)
        server.start()
        try:
            _make_tables(server)
            _ddl(server, *MARKETING)
            yield Outside(f"{server.url}/iceberg", realm, secret, log)
        finally:
            server.stop()
    finally:
        keycloak.stop()


def test_a_provider_group_with_no_cluster_role_holds_its_catalog_roles_grants(
    outside: Outside,
) -> None:
    # The client's group is "marketing": the catalog role MARKETING's grants are its own.
    token_endpoint = outside.realm.token_endpoint
    campaigns = _pyiceberg(outside.uri, outside.credential, token_endpoint, "catalog")
    assert campaigns.list_namespaces() == [("SALES",)]
    assert campaigns.list_tables("SALES") == [("SALES", "ORDERS")]
    orders = campaigns.load_table("SALES.ORDERS")
    assert sorted(orders.scan().to_arrow()["id"].to_pylist()) == [1, 2]
    for ungranted in ("SALES.ITEMS", "HR.PAY"):
        with pytest.raises(NoSuchTableError):
            campaigns.load_table(ungranted)
    with pytest.raises(ForbiddenError) as refused:
        _append(campaigns, 10, "campaigns")
    assert f"{CAMPAIGNS} has the none role" in str(refused.value)
    assert "MODIFY on table SALES.ORDERS" in str(refused.value)
    # The raw answer to an ungranted table: a 404, as for a missing one.
    token = outside.realm.token("campaigns", outside.secret)
    hidden = httpx.get(
        f"{outside.uri}/v1/namespaces/SALES/tables/ITEMS",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    assert hidden.status_code == 404, hidden.text
    assert hidden.json()["error"] == {
        "type": "NoSuchTableException",
        "message": "Table does not exist: SALES.ITEMS",
        "code": 404,
    }


def test_spark_signed_in_at_the_provider_holds_its_groups_catalog_role(
    outside: Outside, spark_engine: SparkShell
) -> None:
    # Spark gets its token from Keycloak: the catalog never sees a secret.
    at_keycloak = {".oauth2-server-uri": outside.realm.token_endpoint, ".scope": "catalog"}
    _spark_catalog(spark_engine, "as_campaigns", outside.uri, outside.credential, at_keycloak)
    served = Recorder(outside.log)
    _spark_holds_marketings_grants(SparkEngine(spark_engine), "as_campaigns", CAMPAIGNS, served)
    outside.signed_in_at_keycloak(served)


def test_duckdb_signed_in_at_the_provider_holds_its_groups_catalog_role(
    outside: Outside,
) -> None:
    served = Recorder(outside.log)
    token_endpoint = outside.realm.token_endpoint
    con = _duckdb_with(outside.uri, outside.credential, token_endpoint, scope="catalog")
    _duckdb_holds_marketings_grants(con, CAMPAIGNS, served)
    outside.signed_in_at_keycloak(served)

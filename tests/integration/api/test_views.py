"""Views through the catalog's SQL and REST: typed, listed, versioned, diffed, evented."""

from __future__ import annotations

import httpx
import pytest

from api.client import CatalogApiError, CatalogClient
from catalog import CatalogEvent
from catalog.column_types import ColumnType
from tests.integration.api.servers import RunningServer
from tests.integration.api.test_cli import run, run_json

pytestmark = pytest.mark.timeout(60)

TABLES = """
CREATE SCHEMA SALES;
CREATE TABLE SALES.ORDERS (ID BIGINT PRIMARY KEY, AMOUNT DECIMAL(10, 2), NOTE VARCHAR(20));
"""


def test_a_view_made_in_sql_is_typed_kept_as_written_and_read_as_of_any_version(
    api_server: RunningServer,
) -> None:
    with CatalogClient(api_server.url) as client:
        client.sql(TABLES)
        created = client.sql(
            "CREATE VIEW sales.big (order_id COMMENT 'the order', amount) AS "
            "SELECT id, amount FROM sales.orders WHERE amount > 100"
        ).version
        view = client.view("SALES", "BIG")
        assert [(c.name, c.type, c.precision, c.doc) for c in view.columns] == [
            ("ORDER_ID", ColumnType.INT64, None, "the order"),
            ("AMOUNT", ColumnType.DECIMAL, 10, None),
        ]
        texts = {r.dialect: r.sql for r in view.current.representations}
        assert texts == dict.fromkeys(
            ("spark", "trino"), "SELECT id, amount FROM sales.orders WHERE amount > 100"
        )
        assert view.current.default_namespace == ("SALES",)

        replaced = client.sql(
            "CREATE OR REPLACE VIEW sales.big AS SELECT count(*) AS n FROM orders"
        ).version
        assert [c.name for c in client.view("SALES", "BIG").columns] == ["N"]
        assert [c.name for c in client.view("SALES", "BIG", version=created).columns] == [
            "ORDER_ID",
            "AMOUNT",
        ]
        assert [v.name for v in client.views(schema="SALES")] == ["BIG"]

        (altered,) = [c for c in client.diff(created, replaced).changes if c.object_type == "view"]
        assert {f.field for f in altered.fields} >= {"current_version_id", "queries"}
        assert {c.change for c in altered.columns} == {"added", "dropped"}

        client.sql("ALTER VIEW sales.big RENAME TO sales.bigger")
        dropped = client.sql("DROP VIEW sales.bigger").version
        assert client.views() == []
        words = [
            phrase
            for v in client.versions(from_version=created).versions
            if created <= v.version <= dropped
            for phrase in v.changes
        ]
        assert words == [
            "created view SALES.BIG, 2 columns",
            "replaced view SALES.BIG",
            "renamed view SALES.BIG to SALES.BIGGER",
            "dropped view SALES.BIGGER",
        ]


def test_view_events_name_the_view(api_server: RunningServer) -> None:
    with CatalogClient(api_server.url) as client:
        client.sql(TABLES)
        start = client.sql("CREATE VIEW sales.v AS SELECT id FROM sales.orders").version
        client.sql("CREATE OR REPLACE VIEW sales.v AS SELECT note FROM sales.orders")
        client.sql("CREATE SCHEMA OTHER; ALTER VIEW sales.v RENAME TO other.w")
        client.sql("DROP VIEW other.w")
        kinds = {CatalogEvent.VIEW_CREATE, CatalogEvent.VIEW_ALTER, CatalogEvent.VIEW_DROP}
        with client.events(start, kinds=kinds) as events:
            got = [next(events) for _ in range(4)]
    assert [(e.event, e.subject.type, e.subject.schema_, e.subject.name) for e in got] == [
        (CatalogEvent.VIEW_CREATE, "view", "SALES", "V"),
        (CatalogEvent.VIEW_ALTER, "view", "SALES", "V"),
        (CatalogEvent.VIEW_ALTER, "view", "OTHER", "W"),
        (CatalogEvent.VIEW_DROP, "view", "OTHER", "W"),
    ]
    assert got[2].subject.previous_name == "SALES.V"


def test_bad_views_are_refused_naming_what_is_wrong_and_nothing_is_written(
    api_server: RunningServer,
) -> None:
    with CatalogClient(api_server.url) as client:
        client.sql(TABLES)
        before = client.versions().latest
        cases = {
            "CREATE VIEW sales.v AS SELECT * FROM sales.missing": "SALES.MISSING, which is no "
            "table or view",
            "CREATE VIEW sales.v AS SELECT nope FROM sales.orders": "NOPE",
            "CREATE VIEW sales.v AS SELECT id + 1 FROM sales.orders": "has no name; name it "
            "with AS",
            "CREATE VIEW sales.v AS SELECT NULL AS x": "cannot type",
            "CREATE VIEW sales.v (a, b) AS SELECT id FROM sales.orders": "names 2 columns but its "
            "query yields 1",
            "CREATE VIEW sales.v AS SELECT id AS a, note AS a FROM sales.orders": "duplicate "
            "column name",
            "CREATE VIEW sales.orders AS SELECT 1 AS a": "table SALES.ORDERS already exists",
            "ALTER VIEW sales.nothing RENAME TO sales.x": "view SALES.NOTHING not found",
        }
        for statement, expected in cases.items():
            with pytest.raises(CatalogApiError) as refused:
                client.sql(statement)
            assert expected in refused.value.detail, (statement, refused.value.detail)
            assert "ValidationError" not in refused.value.detail
        assert client.versions().latest == before

        # a schema holding a view is not empty; CASCADE drops its views with its tables
        client.sql("CREATE VIEW sales.v AS SELECT id FROM sales.orders")
        with pytest.raises(CatalogApiError, match="not empty"):
            client.sql("DROP SCHEMA sales")
        client.sql("DROP SCHEMA sales CASCADE")
        assert client.views() == []


def test_a_view_is_typed_against_the_tables_made_earlier_in_its_script(
    api_server: RunningServer,
) -> None:
    with httpx.Client(base_url=api_server.url, timeout=30) as http:
        script = TABLES + "CREATE VIEW sales.notes AS SELECT note FROM sales.orders;"
        assert http.post("/v1/sql", json={"sql": script}).status_code == 200
        (view,) = http.get("/v1/views").json()["views"]
        assert view["name"] == "NOTES"
        listed = http.get("/v1/catalog").json()
        assert [v["name"] for v in listed["views"]] == ["NOTES"]


def test_the_cli_lists_and_shows_views_at_a_version(
    api_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = api_server.url
    with CatalogClient(url) as client:
        client.sql(TABLES)
        first = client.sql("CREATE VIEW sales.v AS SELECT id FROM sales.orders").version
        client.sql("CREATE OR REPLACE VIEW sales.v AS SELECT id, note FROM sales.orders")
    listed = run_json(capsys, "get", "views", "--url", url, "-o", "json")
    assert [(v["name"], v["current_version_id"]) for v in listed] == [("V", 2)]
    code, out, _ = run(capsys, "get", "views", "--url", url, "-o", "table")
    assert code == 0 and "SALES" in out and "spark, trino" in out
    then = run_json(
        capsys,
        "get",
        "views",
        "V",
        "--schema",
        "SALES",
        "--version",
        str(first),
        "--url",
        url,
        "-o",
        "json",
    )
    assert then["current_version_id"] == 1
    assert [c["name"] for c in then["schemas"][0]["columns"]] == ["ID"]

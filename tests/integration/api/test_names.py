"""Names as people type them, everywhere: unquoted folds to upper case, quoted stays exact.

Through the real server: REST path segments and query parameters, the client's lookups and
the CLI read a name as SQL does; JSON command bodies carry exact names.
"""

from __future__ import annotations

import json

import httpx
import pytest

from api.cli import main
from api.client import CatalogClient, NotFoundError
from catalog import commands as c
from tests.integration.api.servers import RunningServer
from tests.integration.api.support import create_table


@pytest.fixture
def named(api_server: RunningServer) -> RunningServer:
    """A server holding PUBLIC.ORDERS (from SQL) and the exact, lower-case SALES.orders."""
    with CatalogClient(api_server.url) as client:
        client.sql("CREATE TABLE orders (id INT PRIMARY KEY, note VARCHAR(20))")
        client.execute([c.CreateSchema(name="SALES"), create_table("orders", schema="SALES")])
    return api_server


def test_rest_paths_fold_unquoted_names_and_keep_quoted_ones(named: RunningServer) -> None:
    with httpx.Client(base_url=named.url, timeout=20) as http:
        found = http.get("/v1/schemas/public/tables/orders")
        assert found.status_code == 200 and found.json()["table"]["name"] == "ORDERS"
        assert found.json()["schema"] == "PUBLIC"
        exact = http.get('/v1/schemas/sales/tables/"orders"')
        assert exact.status_code == 200 and exact.json()["table"]["name"] == "orders"
        missing = http.get('/v1/schemas/public/tables/"orders"')
        assert missing.status_code == 404 and missing.json()["code"] == "TABLE_NOT_FOUND"
        assert http.get("/v1/schemas/sales/tables/orders").status_code == 404
        assert http.get("/v1/schemas/sales/tables").json() == ["orders"]
        history = http.get('/v1/schemas/Sales/tables/"orders"/schema-versions')
        assert history.status_code == 200
        assert http.get("/v1/schemas/public/indexes/orders_pk").json()["index"]["name"] == (
            "ORDERS_PK"
        )
        assert http.get('/v1/zones/"Default"').status_code == 200
        assert http.get("/v1/zones/default").json()["code"] == "ZONE_NOT_FOUND"


def test_a_badly_quoted_name_is_refused_in_words(named: RunningServer) -> None:
    with httpx.Client(base_url=named.url, timeout=20) as http:
        refused = http.get('/v1/schemas/public/tables/"ord"ers"')
    assert refused.status_code == 422
    problem = refused.json()
    assert problem["code"] == "VALIDATION_ERROR"
    assert "double quotes must enclose the whole name" in problem["detail"]


def test_the_client_reads_names_as_typed(named: RunningServer) -> None:
    with CatalogClient(named.url) as client:
        assert client.table("public", "orders").name == "ORDERS"
        assert client.table("sales", '"orders"').name == "orders"
        with pytest.raises(NotFoundError):
            client.table("sales", "orders")
        assert client.tables("sales") == ["orders"]


def test_the_cli_reads_names_as_typed(
    named: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["get", "table", "orders", "--url", named.url, "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["table"]["name"] == "ORDERS"
    argv = ["get", "table", '"orders"', "--schema", "sales", "--url", named.url, "-o", "json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["table"]["name"] == "orders"
    assert main(["get", "tables", "--schema", "sales", "--url", named.url, "-o", "json"]) == 0
    assert [t["name"] for t in json.loads(capsys.readouterr().out)] == ["orders"]


def test_event_filters_read_names_as_typed(named: RunningServer) -> None:
    with CatalogClient(named.url) as client, client.events(1, table="orders") as events:
        first = next(iter(events))
    assert (first.subject.schema_, first.subject.name) == ("PUBLIC", "ORDERS")

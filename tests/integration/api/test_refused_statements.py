"""A refused batch names its refused statement: number, and line and column in SQL text."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from api.client import AlreadyExistsError, CatalogClient
from tests.integration.api.servers import RunningServer

SCRIPT = "CREATE TABLE A (ID INT PRIMARY KEY);\n\n  CREATE TABLE A (ID INT PRIMARY KEY)"


@pytest.fixture
def http(api_server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_server.url, timeout=20) as client:
        yield client


def test_a_statement_refused_by_the_catalog_is_located(http: httpx.Client) -> None:
    refused = http.post("/v1/sql", json={"sql": SCRIPT})
    assert refused.status_code == 409
    problem = refused.json()
    assert (problem["statement"], problem["line"], problem["column"]) == (2, 3, 3)
    assert problem["detail"] == (
        'statement 2 "CREATE TABLE A (ID INT PRIMARY KEY)": table PUBLIC.A already exists'
    )
    assert http.get("/v1/catalog").json()["tables"] == []  # the batch is all or nothing


def test_a_statement_that_does_not_parse_is_located(http: httpx.Client) -> None:
    refused = http.post(
        "/v1/sql", json={"sql": "CREATE TABLE B (ID INT PRIMARY KEY);\nCREATE TABEL C (ID INT)"}
    )
    assert refused.status_code == 422
    assert {k: refused.json()[k] for k in ("statement", "line", "column")} == {
        "statement": 2,
        "line": 2,
        "column": 1,
    }


def test_a_refused_command_of_a_list_is_numbered(http: httpx.Client) -> None:
    commands = [{"op": "create_schema", "name": "S"}, {"op": "drop_table", "name": "NOPE"}]
    refused = http.post("/v1/ddl", json={"commands": commands})
    assert refused.status_code == 404
    problem = refused.json()
    assert problem["statement"] == 2 and "line" not in problem
    assert problem["detail"] == "statement 2: table PUBLIC.NOPE not found"


def test_the_client_error_carries_the_position(api_server: RunningServer) -> None:
    with CatalogClient(api_server.url) as client, pytest.raises(AlreadyExistsError) as raised:
        client.sql(SCRIPT)
    assert (raised.value.statement, raised.value.line, raised.value.column) == (2, 3, 3)


def test_a_replace_of_a_tables_rows_is_not_a_ddl_command(http: httpx.Client) -> None:
    assert http.post("/v1/sql", json={"sql": "CREATE TABLE R (ID INT PRIMARY KEY)"}).is_success
    column = {"name": "X", "type": "INT32", "nullable": False}
    command = {"op": "add_columns", "table": "R", "columns": [column], "replaces_rows": True}
    refused = http.post("/v1/ddl", json={"commands": [command]})
    assert refused.status_code == 422
    assert "replaces_rows is set only by an Iceberg replace" in refused.json()["detail"]
    (table,) = http.get("/v1/catalog").json()["tables"]
    assert [c["name"] for c in table["versions"][-1]["columns"]] == ["ID"]  # nothing written

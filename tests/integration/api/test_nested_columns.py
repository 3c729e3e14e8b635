"""Nested columns through a real server: SQL with STRUCT, ARRAY and MAP, the table's answers,
nested evolution by path, the history and diffs that follow, refusals, the OpenAPI schema.
"""

from __future__ import annotations

from typing import Any

import httpx

from api.client import CatalogClient
from catalog import ColumnType
from catalog.descriptors.nested import walk
from tests.integration.api.servers import RunningServer

EV = (
    "CREATE TABLE ev (id BIGINT PRIMARY KEY, payload STRUCT<source VARCHAR(10), n INT NOT NULL, "
    "items ARRAY<ROW(price DECIMAL(10, 2))>>, attrs MAP<VARCHAR(8), BIGINT>)"
)


def _fields(column: dict[str, Any], prefix: str = "") -> list[tuple[str, int, str, bool]]:
    """Every nested field of a column in an answer: (path, id, type, nullable), depth first."""
    found = []
    for f in column["fields"]:
        path = f"{prefix or column['name']}.{f['name']}"
        found.append((path, f["id"], f["type"], f["nullable"]))
        found += _fields(f, path)
    return found


def _sql(http: httpx.Client, sql: str) -> int:
    answer = http.post("/v1/sql", json={"sql": sql})
    assert answer.status_code == 200, answer.text
    version: int = answer.json()["version"]
    return version


def test_sql_nested_table_its_answers_and_its_evolution(api_server: RunningServer) -> None:
    with httpx.Client(base_url=api_server.url, timeout=30) as http:
        _evolve(http, api_server.url)


def _evolve(http: httpx.Client, url: str) -> None:
    created = _sql(http, EV)
    table = http.get("/v1/schemas/PUBLIC/tables/EV").json()["table"]
    payload, attrs = table["versions"][-1]["columns"][1:]
    assert (payload["name"], payload["type"], attrs["type"]) == ("PAYLOAD", "STRUCT", "MAP")
    assert _fields(payload) == [
        ("PAYLOAD.SOURCE", 3, "STRING", True),
        ("PAYLOAD.N", 4, "INT32", False),
        ("PAYLOAD.ITEMS", 5, "ARRAY", True),
        ("PAYLOAD.ITEMS.element", 6, "STRUCT", True),
        ("PAYLOAD.ITEMS.element.PRICE", 7, "DECIMAL", True),
    ]
    assert _fields(attrs) == [("ATTRS.key", 8, "STRING", False), ("ATTRS.value", 9, "INT64", True)]
    assert table["next_column_id"] == 10

    # Evolution by path, as Spark spells it: each statement one new schema version.
    evolved = [
        _sql(http, "ALTER TABLE ev ADD COLUMN payload.items.element.qty INT"),
        _sql(http, "ALTER TABLE ev ALTER COLUMN payload.n SET DATA TYPE BIGINT"),
        _sql(http, "ALTER TABLE ev ALTER COLUMN payload.n DROP NOT NULL"),
        _sql(http, "ALTER TABLE ev RENAME COLUMN payload.source TO origin"),
        _sql(http, "ALTER TABLE ev DROP COLUMN payload.items.element.price"),
    ]
    with CatalogClient(url) as client:
        now = client.table("PUBLIC", "EV")
        by_path = {".".join(p): f for p, f in walk(now.columns)}
        assert by_path["PAYLOAD.ORIGIN"].id == 3  # renamed, the same field
        assert (by_path["PAYLOAD.N"].type, by_path["PAYLOAD.N"].nullable) == (
            ColumnType.INT64,
            True,
        )
        assert "PAYLOAD.ITEMS.element.PRICE" not in by_path
        assert by_path["PAYLOAD.ITEMS.element.QTY"].id == 10
        history = client.schema_versions("PUBLIC", "EV")
    assert [v.version for v in history] == [1, 2, 3, 4, 5, 6]

    # The history endpoint holds each schema version's nested fields.
    pages = http.get("/v1/schemas/PUBLIC/tables/EV/schema-versions", params={"limit": 2}).json()
    first = pages["schema_versions"][0]["columns"][1]
    assert [f["name"] for f in first["fields"]] == ["SOURCE", "N", "ITEMS"]
    assert pages["next_schema_version"] == 3

    # Versions say what changed by path; a diff names each nested change by its path.
    versions = http.get("/v1/versions", params={"from_version": evolved[0]}).json()["versions"]
    assert [v["changes"] for v in versions] == [
        ["added column PAYLOAD.ITEMS.element.QTY to PUBLIC.EV"],
        ["altered column PAYLOAD.N of PUBLIC.EV"],
        ["altered column PAYLOAD.N of PUBLIC.EV"],
        ["altered column PAYLOAD.ORIGIN of PUBLIC.EV"],
        ["dropped column PAYLOAD.ITEMS.element.PRICE from PUBLIC.EV"],
    ]
    diff = http.get("/v1/diff", params={"from": created, "to": evolved[-1]}).json()
    (change,) = diff["changes"]
    columns = {c["name"]: c for c in change["columns"]}
    assert set(columns) == {
        "PAYLOAD.ITEMS.element.QTY",
        "PAYLOAD.N",
        "PAYLOAD.ORIGIN",
        "PAYLOAD.ITEMS.element.PRICE",
    }
    assert columns["PAYLOAD.ITEMS.element.QTY"]["change"] == "added"
    assert columns["PAYLOAD.ITEMS.element.PRICE"]["change"] == "dropped"
    assert {f["field"]: f["after"] for f in columns["PAYLOAD.N"]["fields"]} == {
        "type": "INT64",
        "nullable": True,
    }
    assert columns["PAYLOAD.ORIGIN"]["fields"] == [
        {"field": "name", "before": "SOURCE", "after": "ORIGIN"}
    ]


def test_nested_refusals_are_problems_naming_the_statement(api_server: RunningServer) -> None:
    with httpx.Client(base_url=api_server.url, timeout=30) as http:
        _refusals(http)


def _refusals(http: httpx.Client) -> None:
    bad_type = http.post(
        "/v1/sql",
        json={"sql": "CREATE SCHEMA s;\nCREATE TABLE s.t (id INT PRIMARY KEY, m MAP<INT>)"},
    )
    assert bad_type.status_code == 422
    problem = bad_type.json()
    assert problem["code"] == "VALIDATION_ERROR"
    assert (problem["statement"], problem["line"], problem["column"]) == (2, 2, 1)
    assert "column M: a MAP has a key type and a value type" in problem["detail"]

    deep = "ARRAY<" * 16 + "INT" + ">" * 16
    too_deep = http.post("/v1/sql", json={"sql": f"CREATE TABLE t (id INT PRIMARY KEY, a {deep})"})
    assert too_deep.status_code == 422 and too_deep.json()["code"] == "NESTED_TOO_DEEP"
    assert "is nested 17 levels deep; a field sits at most 16" in too_deep.json()["detail"]

    _sql(http, EV)
    not_null = http.post(
        "/v1/sql", json={"sql": "ALTER TABLE ev ADD COLUMN payload.x INT NOT NULL"}
    )
    assert not_null.status_code == 422 and not_null.json()["code"] == "UNSUPPORTED_CHANGE"
    assert "field PAYLOAD.X must be nullable" in not_null.json()["detail"]
    missing = http.post("/v1/sql", json={"sql": "ALTER TABLE ev DROP COLUMN payload.nope"})
    assert missing.status_code == 404 and missing.json()["code"] == "COLUMN_NOT_FOUND"


def test_the_openapi_schema_describes_nested_fields(api_server: RunningServer) -> None:
    schemas = httpx.get(f"{api_server.url}/openapi.json", timeout=30).json()["components"]
    described = schemas["schemas"]
    assert described["ColumnDescriptor"]["properties"]["fields"]["items"] == {
        "$ref": "#/components/schemas/ColumnDescriptor"
    }
    assert described["Column"]["properties"]["fields"]["items"] == {
        "$ref": "#/components/schemas/Column"
    }
    assert {"STRUCT", "ARRAY", "MAP"} <= set(described["ColumnType"]["enum"])
    assert "path" in described["ColumnChangeBody"]["properties"]["name"]["description"]

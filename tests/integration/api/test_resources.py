"""Schemas, zones and indexes as REST resources, at a version or a time, through the real server."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from api.cli import main
from api.client import AsyncCatalogClient, CatalogClient, NotFoundError
from catalog import commands as c
from tests.integration.api.servers import RunningServer
from tests.integration.api.support import create_table


@pytest.fixture
def filled(api_server: RunningServer) -> RunningServer:
    """PUBLIC.T (index T_V) at version 2; SALES with S1 and zone Z at version 3."""
    with CatalogClient(api_server.url) as client:
        client.execute([create_table("T"), c.CreateIndex(table="T", name="T_V", columns=["V"])])
        client.execute(
            [
                c.CreateSchema(name="SALES"),
                c.CreateZone(name="Z", partitions=4),
                create_table("S1", schema="SALES"),
            ]
        )
    return api_server


def test_schemas_and_one_schema_with_its_objects(filled: RunningServer) -> None:
    with httpx.Client(base_url=filled.url, timeout=20) as http:
        body = http.get("/v1/schemas").json()
        assert body["version"] == 3
        assert [s["name"] for s in body["schemas"]] == ["PUBLIC", "SYSTEM", "SALES"]
        at_2 = http.get("/v1/schemas", params={"version": 2}).json()
        assert [s["name"] for s in at_2["schemas"]] == ["PUBLIC", "SYSTEM"]
        public = http.get("/v1/schemas/public").json()
        assert public["schema"]["name"] == "PUBLIC"
        assert (public["tables"], public["indexes"]) == (["T"], ["T_PK", "T_V"])
        missing = http.get("/v1/schemas/sales", params={"version": 2})
        assert missing.status_code == 404 and missing.json()["code"] == "SCHEMA_NOT_FOUND"


def test_zones_name_the_default_one(filled: RunningServer) -> None:
    with httpx.Client(base_url=filled.url, timeout=20) as http:
        body = http.get("/v1/zones").json()
    assert body["default_zone"] == "Default"
    assert sorted(z["name"] for z in body["zones"]) == ["Default", "Z"]


def test_indexes_of_everything_a_schema_or_a_table(filled: RunningServer) -> None:
    with httpx.Client(base_url=filled.url, timeout=20) as http:

        def names(**params: str) -> list[str]:
            answer = http.get("/v1/indexes", params=params)
            assert answer.status_code == 200, answer.text
            return [i["name"] for i in answer.json()["indexes"]]

        assert names() == ["T_PK", "T_V", "S1_PK"]
        assert names(schema="sales") == ["S1_PK"]
        assert names(table="t") == ["T_PK", "T_V"]
        assert names(schema="SALES", table="S1") == ["S1_PK"]
        assert names(version="2") == ["T_PK", "T_V"]
        missing = http.get("/v1/indexes", params={"table": "S1"})  # not in PUBLIC
        assert missing.status_code == 404 and missing.json()["code"] == "TABLE_NOT_FOUND"


def test_the_clients_read_the_same_resources(filled: RunningServer) -> None:
    with CatalogClient(filled.url) as client:
        assert [s.name for s in client.schemas().schemas] == ["PUBLIC", "SYSTEM", "SALES"]
        sales = client.schema("sales")
        assert (sales.schema_.name, sales.tables, sales.indexes) == ("SALES", ["S1"], ["S1_PK"])
        assert [i.name for i in client.indexes(table="T")] == ["T_PK", "T_V"]
        assert client.zones(version=2).default_zone == "Default"
        with pytest.raises(NotFoundError):
            client.schema("NOPE")

    async def read() -> tuple[list[str], list[str]]:
        async with AsyncCatalogClient(filled.url) as client:
            schema = await client.schema("PUBLIC", version=2)
            indexes = await client.indexes(schema="SALES")
            return schema.tables, [i.name for i in indexes]

    assert asyncio.run(read()) == (["T"], ["S1_PK"])


def test_the_cli_shows_one_schema(
    filled: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["get", "schema", "sales", "--url", filled.url, "-o", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["schema"]["name"] == "SALES" and shown["tables"] == ["S1"]

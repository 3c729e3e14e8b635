"""schema_at through a client and through an in-process node, at versions and timestamps."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.client import CatalogClient, NotFoundError
from catalog import ColumnType
from catalog import commands as c
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from spark.schema import schema_at, schema_at_async
from tests.integration.api.servers import RunningServer
from tests.integration.catalog.support import run

STEPS = [
    c.CreateTable(
        name="T",
        columns=[
            c.Column(name="ID", type=ColumnType.INT64, nullable=False),
            c.Column(name="QTY", type=ColumnType.INT32),
        ],
        primary_key=["ID"],
    ),
    c.AddColumns(table="T", columns=[c.Column(name="NOTE", type=ColumnType.STRING, length=8)]),
    c.AlterColumn(table="T", column="QTY", type=ColumnType.INT64),
    c.RenameColumn(table="T", column="NOTE", new_name="REMARK"),
]
EXPECTED = [
    [("ID", "bigint", False), ("QTY", "int", True)],
    [("ID", "bigint", False), ("QTY", "int", True), ("NOTE", "string", True)],
    [("ID", "bigint", False), ("QTY", "bigint", True), ("NOTE", "string", True)],
    [("ID", "bigint", False), ("QTY", "bigint", True), ("REMARK", "string", True)],
]


def _shape(schema: object) -> list[tuple[str, str, bool]]:
    return [(f.name, f.dataType.simpleString(), f.nullable) for f in schema.fields]  # type: ignore[attr-defined]


def test_schema_at_through_the_client(catalog_server: RunningServer) -> None:
    with CatalogClient(catalog_server.url) as client:
        moments, versions = [], []
        for step in STEPS:
            versions.append(client.execute(step).version)
            moments.append(client.now())
        for moment, version, expected in zip(moments, versions, EXPECTED, strict=True):
            assert _shape(schema_at(client, "PUBLIC.T", at=moment)) == expected
            assert _shape(schema_at(client, "T", at=f"version={version}")) == expected
        ids = [f.metadata["column_id"] for f in schema_at(client, "PUBLIC.T").fields]
        assert ids == [0, 1, 2]
        with pytest.raises(NotFoundError) as info:
            schema_at(client, "PUBLIC.NOPE")
        assert info.value.code == "TABLE_NOT_FOUND"


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_schema_at_in_process(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=20, max_clock_skew_ms=10)
        ) as node:
            moments = []
            for step in STEPS:
                await node.manager.execute(step)
                moments.append(node.clock.now())
            for moment, expected in zip(moments, EXPECTED, strict=True):
                assert _shape(await schema_at_async(node, "PUBLIC.T", at=moment)) == expected

    run(scenario())

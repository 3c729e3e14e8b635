"""A batch's precondition holds in the version it commits on top of, or the batch is refused."""

from __future__ import annotations

import asyncio

import pytest

from catalog import Catalog, CatalogError, ColumnType, ErrorCode
from catalog import commands as c
from catalog.errors import ConcurrentUpdateError
from catalog.manager import Precondition
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.catalog.support import create_table, run

OPTIONS = NodeOptions(delay_ms=0, max_clock_skew_ms=0)


def _add(column: str) -> c.AddColumnsCommand:
    return c.AddColumns(
        table="T", columns=[c.Column(name=column, type=ColumnType.INT32, nullable=True)]
    )


def _schema_still(version: int) -> Precondition:
    """Refuse unless table T still has schema version ``version`` (as an optimistic writer)."""

    def check(current: Catalog) -> None:
        found = current.table("PUBLIC", "T").schema_version
        if found != version:
            raise ConcurrentUpdateError(
                f"table T is at schema version {found}, not {version}",
                code=ErrorCode.PRECONDITION_FAILED,
            )

    return check


def test_a_change_on_another_node_since_the_read_refuses_the_batch(store_url: str) -> None:
    async def scenario() -> None:
        async with (
            CatalogNode.open(store_url, "reader", OPTIONS) as reader,
            CatalogNode.open(store_url, "other", OPTIONS) as other,
        ):
            await reader.manager.execute(create_table("T"))
            read = reader.service.latest_catalog().table("PUBLIC", "T").schema_version
            await other.manager.execute(_add("B"))  # lands after the read
            before = await reader.log.latest_version()
            with pytest.raises(CatalogError) as refused:
                await reader.manager.execute(_add("A"), precondition=_schema_still(read))
            assert refused.value.code is ErrorCode.PRECONDITION_FAILED
            assert await reader.log.latest_version() == before  # nothing was written
            table = reader.service.latest_catalog().table("PUBLIC", "T")
            assert [col.name for col in table.columns] == ["ID", "V", "B"]
            # Read again, the same change goes through.
            fresh = _schema_still(table.schema_version)
            done = await reader.manager.execute(_add("A"), precondition=fresh)
            assert done.version == before + 1

    run(scenario())


def test_a_batch_queued_behind_a_change_is_judged_after_it(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", OPTIONS) as node:
            await node.manager.execute(create_table("T"))
            read = node.service.latest_catalog().table("PUBLIC", "T").schema_version
            first = asyncio.create_task(node.manager.execute(_add("B")))
            await asyncio.sleep(0)  # queued (or already in flight) ahead of the next one
            with pytest.raises(CatalogError) as refused:
                await node.manager.execute(_add("A"), precondition=_schema_still(read))
            assert refused.value.code is ErrorCode.PRECONDITION_FAILED
            await first
            table = node.service.latest_catalog().table("PUBLIC", "T")
            assert [col.name for col in table.columns] == ["ID", "V", "B"]

    run(scenario())

"""The Default zone is created by the first table that needs it, once, however many race."""

from __future__ import annotations

import asyncio

from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.catalog.support import create_table, run, settle

_NOW = NodeOptions(delay_ms=0, max_clock_skew_ms=0)


def test_tables_created_at_once_on_two_nodes_share_one_default_zone(store_url: str) -> None:
    async def scenario() -> None:
        async with (
            CatalogNode.open(store_url, "a", _NOW) as a,
            CatalogNode.open(store_url, "b", _NOW) as b,
        ):
            assert a.service.latest_catalog().zones() == []
            await asyncio.gather(
                *(
                    node.manager.execute(create_table(f"{node.node_name.upper()}{i}"))
                    for i in range(6)
                    for node in (a, b)
                )
            )
            latest = await settle([a, b])
            for node in (a, b):
                cat = node.service.catalog(latest)
                (zone,) = cat.zones()
                assert zone.name == "Default" and cat.default_zone() == zone
                assert len(cat.tables()) == 12
                assert {t.zone_id for t in cat.tables()} == {zone.id}
            # The zone came with the first table committed; no later version re-created it.
            first = next(v for v in range(2, latest + 1) if a.service.catalog(v).tables())
            assert a.service.catalog(first).zones() == a.service.catalog(latest).zones()

    run(scenario())


def test_a_node_restarted_after_the_first_table_keeps_the_zone(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "a", _NOW) as a:
            await a.manager.execute(create_table("T"))
            zone = a.service.latest_catalog().default_zone()
        async with CatalogNode.open(store_url, "a", _NOW) as again:
            assert again.service.latest_catalog().default_zone() == zone
            await again.manager.execute(create_table("U"))
            assert again.service.latest_catalog().zones() == [zone]

    run(scenario())

"""Event feeds: each version published after subscribing, with the events of its application."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from catalog import CatalogEvent
from catalog import commands as c
from catalog.event_feed import FeedOverflowError
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.catalog.support import create_table, run

_NOW = NodeOptions(delay_ms=0, max_clock_skew_ms=0)


def test_a_feed_gets_each_version_once_with_the_events_history_gives(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _NOW) as node:
            service = node.service
            feed = service.subscribe()
            assert feed.first_version == service.latest_version + 1
            await node.manager.execute(create_table("T"))
            await node.manager.execute([c.CreateSchema(name="S"), create_table("U", "S")])
            first = await asyncio.wait_for(feed.next(), 5)
            second = await asyncio.wait_for(feed.next(), 5)
            assert [v for v, _ in (first, second)] == [feed.first_version, feed.first_version + 1]
            # The first table creates the Default zone too (entry 2, the next id, fires none).
            assert [(e.event, e.index) for e in first[1]] == [
                (CatalogEvent.ZONE_CREATE, 0),
                (CatalogEvent.SET_DEFAULT_ZONE, 1),
                (CatalogEvent.TABLE_CREATE, 3),
                (CatalogEvent.INDEX_CREATE, 4),
            ]
            for version, events in (first, second):
                replayed = service.events(version)
                assert inspect.isgenerator(replayed)  # computed as taken, one at a time
                assert events == list(replayed)
            table, index = (e.subject for e in second[1][1:3])
            assert (table.type, table.name, table.table, table.schema_) == ("table", "U", None, "S")
            assert (index.type, index.name, index.table, index.schema_) == (
                "index",
                "U_PK",
                "U",
                "S",
            )
            service.unsubscribe(feed)
            await node.manager.execute(create_table("W"))
            assert feed._queue.empty()

    run(scenario())


def test_a_feed_that_falls_behind_is_cut_off_after_what_it_holds(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _NOW) as node:
            feed = node.service.subscribe(limit=2)
            for name in ("A", "B", "C"):
                await node.manager.execute(create_table(name))
            assert feed.overflowed
            versions = [(await feed.next())[0] for _ in range(2)]
            assert versions == [feed.first_version, feed.first_version + 1]
            with pytest.raises(FeedOverflowError):
                await feed.next()

    run(scenario())

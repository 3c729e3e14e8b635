"""Each version records who asked for each of its requests and why; its events say so too."""

from __future__ import annotations

import asyncio

from catalog import CatalogEvent
from catalog.event_feed import CatalogEventParameters
from catalog.origin import UpdateOrigin
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.catalog.support import create_table, run, until


def test_grouped_requests_each_keep_their_origin_and_their_events_name_it(store_url: str) -> None:
    async def scenario() -> None:
        options = NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        async with (
            CatalogNode.open(store_url, "writer", options) as writer,
            CatalogNode.open(store_url, "reader", options) as reader,
        ):
            seen: dict[str, list[tuple[str, str | None]]] = {"writer": [], "reader": []}
            for node in (writer, reader):

                def heard(e: CatalogEventParameters, name: str = node.node_name) -> None:
                    assert e.origin is not None
                    seen[name].append((e.subject.name, e.origin.message))

                node.service.listen(CatalogEvent.TABLE_CREATE, heard)
            start = writer.service.latest_version
            origins = [
                UpdateOrigin(principal=f"user{i}", client="tests", message=f"table T{i}")
                for i in range(12)
            ]
            await asyncio.gather(
                *(
                    writer.manager.execute(create_table(f"T{i}"), origin=origin)
                    for i, origin in enumerate(origins)
                )
            )
            latest = writer.service.latest_version
            await until(lambda: reader.service.latest_version == latest, "the reader caught up")
            recorded: list[UpdateOrigin] = []
            for version in range(start + 1, latest + 1):
                update = reader.service.update(version)
                assert sum(o.entries for o in update.origins) == len(update.entries)
                recorded.extend(update.origins)
            assert latest - start < len(origins), "nothing was committed together"
            assert sorted(o.message or "" for o in recorded) == sorted(
                o.message or "" for o in origins
            )
            # The table, its key index, the next id; the first also creates the Default zone,
            # makes it the default and takes its id.
            assert sorted(o.entries for o in recorded) == [3] * 11 + [6]
            for name in ("writer", "reader"):
                assert sorted(seen[name]) == sorted((f"T{i}", f"table T{i}") for i in range(12))

    run(scenario())


def test_a_request_made_in_process_is_recorded_as_local(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        ) as node:
            result = await node.manager.execute(create_table("T"), request_id="setup-1")
            (origin,) = node.service.update(result.version).origins
            assert origin == UpdateOrigin(
                principal="local", client="in-process", request_id="setup-1", entries=6
            )
            assert node.service.update(1).origins == ()  # version 1 is the catalog's own

    run(scenario())

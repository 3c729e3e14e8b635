"""Large batches on both stores: a 100,000-command batch commits whole (its update is written
as chunks on etcd), one over the hard limit is refused before anything is written, and a batch
too large for the store fails alone, never the requests grouped with it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from catalog import commands as c
from catalog.manager import MAX_BATCH_COMMANDS
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.catalog.support import run
from updatelog import KvUpdateLog, UpdateTooLargeError

OPTIONS: dict[str, Any] = {"delay_ms": 0, "max_clock_skew_ms": 0, "registry_ttl_s": None}


@pytest.mark.slow
def test_a_batch_of_100000_commands_commits_and_reads_back(store_url: str) -> None:
    commands = [c.CreateSchema(name=f"S{i}") for i in range(MAX_BATCH_COMMANDS)]

    async def scenario() -> None:
        async with CatalogNode.open(store_url, "writer", NodeOptions(**OPTIONS)) as writer:
            result = await writer.manager.execute(commands, request_id="the-big-one")
            assert len(result.applied) == MAX_BATCH_COMMANDS
            digest = writer.service.digest(result.version)
            async with CatalogNode.open(store_url, "reader", NodeOptions(**OPTIONS)) as reader:
                assert reader.service.latest_version == result.version
                assert reader.service.digest(result.version) == digest
                assert reader.service.latest_catalog().find_schema("S99999") is not None
            again = await writer.manager.execute(commands, request_id="the-big-one")
            assert again.version == result.version  # answered from the log, not run again

    run(scenario(), timeout_s=600)


def test_a_batch_over_the_hard_limit_is_refused_before_anything_is_written(
    store_url: str,
) -> None:
    commands = [c.CreateSchema(name=f"S{i}") for i in range(MAX_BATCH_COMMANDS + 1)]

    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", NodeOptions(**OPTIONS)) as node:
            before = await node.log.latest_version()
            with pytest.raises(UpdateTooLargeError, match="at most 100,000 commands"):
                await node.manager.execute(commands)
            assert await node.log.latest_version() == before
            assert (await node.manager.execute([c.CreateSchema(name="FITS")])).version

    run(scenario())


def test_a_batch_too_large_for_the_log_fails_alone_not_its_group(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", NodeOptions(**OPTIONS)) as node:
            assert isinstance(node.log, KvUpdateLog)
            node.log.max_update_bytes = 8 * 1024
            big = [c.CreateSchema(name=f"BIG{i}") for i in range(1000)]
            small = [[c.CreateSchema(name=f"SMALL{i}")] for i in range(5)]
            outcomes = await asyncio.gather(
                node.manager.execute(big),
                *(node.manager.execute(batch) for batch in small),
                return_exceptions=True,
            )
            assert isinstance(outcomes[0], UpdateTooLargeError)
            assert all(not isinstance(o, BaseException) for o in outcomes[1:]), outcomes
            catalog = node.service.latest_catalog()
            assert catalog.find_schema("BIG0") is None
            assert all(catalog.find_schema(f"SMALL{i}") for i in range(5))

    run(scenario())

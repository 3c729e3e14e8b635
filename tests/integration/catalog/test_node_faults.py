"""Nodes that restart mid-stream, and watches across etcd revision compaction."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable

from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from deploy.etcd_server import EtcdServer
from tests.integration.catalog.support import create_table, run, settle


async def _ddl_stream(nodes: list[CatalogNode], prefix: str, count: int) -> int:
    """Run ``count`` creates spread over ``nodes`` from 4 tasks; return how many committed."""
    committed = 0

    async def worker(k: int) -> None:
        nonlocal committed
        for i in range(k, count, 4):
            await nodes[i % len(nodes)].manager.execute(create_table(f"{prefix}{i}"))
            committed += 1

    await asyncio.gather(*(worker(k) for k in range(4)))
    return committed


def test_a_node_restarted_mid_stream_converges(store_url: str) -> None:
    async def scenario() -> None:
        def start(name: str) -> Awaitable[CatalogNode]:
            return CatalogNode.start(store_url, name, NodeOptions(delay_ms=5, max_clock_skew_ms=5))

        a, b, c = await start("a"), await start("b"), await start("c")
        try:
            stream = asyncio.create_task(_ddl_stream([a, b], "T", 60))
            await asyncio.sleep(0.2)
            await c.close()  # crash-stop in the middle of the stream
            await asyncio.sleep(0.2)
            c = await start("c")
            assert await stream == 60
            latest = await settle([a, b, c])
            for version in range(1, latest + 1):
                assert len({n.service.digest(version) for n in (a, b, c)}) == 1
            assert len(c.service.latest_catalog().tables()) == 60
        finally:
            await asyncio.gather(a.close(), b.close(), c.close())

    run(scenario())


def test_nodes_follow_the_log_across_etcd_revision_compaction(etcd_server: EtcdServer) -> None:
    async def scenario() -> None:
        url = f"etcd://{etcd_server.endpoint}/compaction-{uuid.uuid4().hex}"
        a = await CatalogNode.start(url, "a", NodeOptions(delay_ms=5, max_clock_skew_ms=5))
        b = await CatalogNode.start(url, "b", NodeOptions(delay_ms=5, max_clock_skew_ms=5))
        try:
            await _ddl_stream([a], "BEFORE", 10)
            stream = asyncio.create_task(_ddl_stream([a], "DURING", 40))
            for _ in range(3):
                await asyncio.sleep(0.1)
                await asyncio.to_thread(etcd_server.members[0].compact)
            await stream
            await _ddl_stream([b], "AFTER", 10)
            latest = await settle([a, b])
            for version in range(1, latest + 1):
                assert a.service.digest(version) == b.service.digest(version)
            assert len(b.service.latest_catalog().tables()) == 60
        finally:
            await asyncio.gather(a.close(), b.close())

    run(scenario())

"""A stopping node gives up what waits on it (Ignite's ``testNoInteractionsAfterStop``)."""

from __future__ import annotations

import asyncio

import pytest

from catalog import CatalogError, ErrorCode
from catalog.errors import NodeStoppingError
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.catalog.support import create_table, run


def test_no_interactions_after_stop(store_url: str) -> None:
    """Waiters for versions not applied fail at stop; commands after it touch no log."""

    async def scenario() -> None:
        options = NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        node = await CatalogNode.start(store_url, "n1", options)
        latest = node.service.latest_version
        waiting = asyncio.ensure_future(node.service.catalog_ready(latest + 1))
        await asyncio.sleep(0.05)
        assert not waiting.done()

        await node.close()
        # Failed by the stop itself: no timeout, no wait for another version.
        done, _ = await asyncio.wait([waiting], timeout=1.0)
        assert done, "a catalog_ready waiter still hangs after the node stopped"
        with pytest.raises(NodeStoppingError) as stopped:
            waiting.result()
        assert stopped.value.code is ErrorCode.NODE_STOPPING
        assert f"applies no catalog version after {latest}" in stopped.value.message

        # Versions it applied stay ready; later ones fail at once.
        await node.service.catalog_ready(latest)
        with pytest.raises(NodeStoppingError):
            await asyncio.wait_for(node.service.catalog_ready(latest + 1), 1.0)

        with pytest.raises(CatalogError) as refused:
            await node.manager.execute(create_table("T"))
        assert refused.value.code is ErrorCode.NODE_STOPPING
        assert "the command was not run" in refused.value.message

        async with CatalogNode.open(store_url, "n2", options) as other:
            assert other.service.latest_version == latest  # nothing was written
            assert other.service.latest_catalog().find_table("PUBLIC", "T") is None

    run(scenario())

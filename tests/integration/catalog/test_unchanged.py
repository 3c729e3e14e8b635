"""A batch that changes nothing writes no version, and its request id still answers once."""

from __future__ import annotations

import pytest

from catalog import CatalogError, ErrorCode
from catalog import commands as c
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.catalog.support import create_table, run


def test_a_no_op_writes_no_version_and_its_id_keeps_that_answer(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        ) as node:
            manager, service = node.manager, node.service
            created = await manager.execute(create_table("T"))
            maybe = create_table("T").model_copy(update={"if_not_exists": True})
            first = await manager.execute(maybe, request_id="noop-1")
            assert (first.version, first.applied) == (created.version, (False,))
            assert service.latest_version == created.version  # nothing was written
            assert await node.log.latest_version() == created.version

            await manager.execute(c.DropTable(name="T"))
            # The retry is the same request: answered as it was, not run again (which would
            # create T now).
            retry = await manager.execute(maybe, request_id="noop-1")
            assert (retry.version, retry.applied) == (created.version, (False,))
            assert service.latest_catalog().find_table("PUBLIC", "T") is None
            with pytest.raises(CatalogError) as reused:
                await manager.execute(create_table("U"), request_id="noop-1")
            assert reused.value.code is ErrorCode.REQUEST_ID_REUSED

    run(scenario())

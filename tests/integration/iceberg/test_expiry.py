"""After a compaction, Iceberg clients see the snapshots still read and the files they need."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.expressions import EqualTo

from catalog.node import CatalogNode
from catalog.node_options import NodeOptions
from tests.integration.api.servers import RunningServer
from tests.integration.catalog.support import create_table
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows

pytestmark = pytest.mark.timeout(60)


async def _compact(server: RunningServer) -> int:
    """Compact the catalog at a new version, deleting files removed before it (no grace)."""
    settings = server.settings
    options = NodeOptions(
        delay_ms=settings.delay_ms,
        max_clock_skew_ms=settings.max_clock_skew_ms,
        registry_ttl_s=None,
    )
    async with CatalogNode.open(settings.store, "compactor", options) as node:
        version = (await node.manager.execute(create_table("MARK"))).version
        assert await node.manager.compact_to(version, file_grace_ms=0)
        return node.manager.expiry.stats["files_deleted"]


def test_snapshots_before_a_compaction_are_expired_with_their_files(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    table.append(rows(table, range(1, 5)))
    table.delete(EqualTo(term="ID", value=1))  # rewrites the first file without row 1
    kept = table.current_snapshot()
    assert kept is not None
    data = Path(table.location().removeprefix("file://")) / "data"
    first_files = sorted(p.name for p in data.glob("*.parquet"))
    assert len(first_files) == 2

    deleted = asyncio.run(_compact(iceberg_server))
    assert deleted == 1  # the file the delete rewrote
    table.append(rows(table, range(10, 12)))

    deadline = time.monotonic() + 10  # the server notices the snapshot within a second
    while True:
        loaded = iceberg.load_table("PUBLIC.EVENTS")
        snapshots = [s.snapshot_id for s in loaded.snapshots()]
        if len(snapshots) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert snapshots[0] == kept.snapshot_id, "the first kept is the one current at compaction"
    assert ids(loaded) == [2, 3, 4, 10, 11]
    assert ids(loaded, kept.snapshot_id) == [2, 3, 4]
    assert loaded.metadata.last_sequence_number == 3

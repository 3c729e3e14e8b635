"""After a compaction, Iceberg clients see the snapshots still read and the files they need."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.expressions import EqualTo

from api.client import CatalogClient
from catalog.manager import CatalogManager
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.api.servers import RunningServer, ServerFactory
from tests.integration.catalog.support import create_table
from tests.integration.iceberg.conftest import rest_catalog
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows
from tests.integration.iceberg.test_spark_commits import spark_commit

pytestmark = pytest.mark.timeout(60)


async def compact_now(
    server: RunningServer, mark: str = "MARK"
) -> tuple[CatalogManager, int | None]:
    """Compact the catalog at a new version (table ``mark`` made), deleting files removed
    before it (no grace); return the compacting node's manager (its ``expiry.stats``, the
    lease that ``held_back`` it) and the version it compacted to (None: none)."""
    settings = server.settings
    options = NodeOptions(
        delay_ms=settings.delay_ms,
        max_clock_skew_ms=settings.max_clock_skew_ms,
        registry_ttl_s=None,
    )
    async with CatalogNode.open(settings.store, "compactor", options) as node:
        version = (await node.manager.execute(create_table(mark))).version
        return node.manager, await node.manager.compact_to(version, file_grace_ms=0)


async def compacted_stats(server: RunningServer) -> dict[str, int]:
    """Compact the catalog at a new version (see ``compact_now``); return what expiry did."""
    manager, compacted = await compact_now(server)
    assert compacted
    return dict(manager.expiry.stats)


def _once_noticed(iceberg: RestCatalog, *, snapshots: int) -> Any:
    """Load the PyIceberg table EVENTS until it lists ``snapshots`` snapshots: the server
    notices a compaction's snapshot within a second (bounded at 10 s; the test's asserts then
    say what is wrong)."""
    deadline = time.monotonic() + 10
    while True:
        loaded = iceberg.load_table("PUBLIC.EVENTS")
        if len(loaded.snapshots()) == snapshots or time.monotonic() > deadline:
            return loaded
        time.sleep(0.2)


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

    stats = asyncio.run(compacted_stats(iceberg_server))
    assert stats["files_deleted"] == 1  # the file the delete rewrote
    assert stats["commits_merged"] == 0  # their request ids still answer
    table.append(rows(table, range(10, 12)))

    loaded = _once_noticed(iceberg, snapshots=2)
    snapshots = [s.snapshot_id for s in loaded.snapshots()]
    assert snapshots[0] == kept.snapshot_id, "the first kept is the one current at compaction"
    assert ids(loaded) == [2, 3, 4, 10, 11]
    assert ids(loaded, kept.snapshot_id) == [2, 3, 4]
    assert loaded.metadata.last_sequence_number == 3


@pytest.fixture
def short_requests_server(tmp_path: Path) -> Iterator[RunningServer]:
    """A server whose request ids answer for 50 ms (so the next compaction merges commits)."""
    factory = ServerFactory()
    try:
        store = f"sqlite:///{tmp_path}/catalog.db?request_ttl=0.05"
        yield factory.start(store, warehouse=str(tmp_path / "warehouse"))
    finally:
        factory.stop_all()


def test_merged_commits_read_the_same_and_take_further_commits(
    short_requests_server: RunningServer,
) -> None:
    """Spark source and PyIceberg commits merged into one: PyIceberg reads the same rows (the
    server writes the merged commit's manifests), sees it as the table's first snapshot, and
    both writers commit on top of it with the sequence numbers going on."""
    server = short_requests_server
    iceberg = rest_catalog(server)
    with CatalogClient(server.url) as client:
        iceberg.create_table("PUBLIC.EVENTS", EVENTS)
        spark_commit(client, server, range(1, 3))
        table = iceberg.load_table("PUBLIC.EVENTS")
        table.append(rows(table, range(3, 5)))
        last = spark_commit(client, server, range(5, 7))
        time.sleep(1.1)  # the request ids expire (a second's allowance)
        assert asyncio.run(compacted_stats(server))["commits_merged"] == 3

        loaded = _once_noticed(iceberg, snapshots=1)
        assert ids(loaded) == [1, 2, 3, 4, 5, 6]
        snapshot = loaded.current_snapshot()
        assert snapshot is not None and loaded.snapshots() == [snapshot]
        assert snapshot.sequence_number == loaded.metadata.last_sequence_number == 3
        assert [c.seq for c in client.data_commits(last.table_id, history=True).commits] == [3]
        loaded.append(rows(loaded, range(7, 9)))
        spark_commit(client, server, range(9, 10))
        again = iceberg.load_table("PUBLIC.EVENTS")
        assert ids(again) == list(range(1, 10))
        assert again.metadata.last_sequence_number == 5
        assert ids(again, snapshot.snapshot_id) == [1, 2, 3, 4, 5, 6]

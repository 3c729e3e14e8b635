"""One and two nodes on each backend: the command path, readiness, events, recovery, errors."""

from __future__ import annotations

import asyncio
import gc
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from catalog import CatalogError, CatalogEvent, ErrorCode, VersionCompactedError
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.event_feed import CatalogEventParameters
from catalog.runtime.blocking import SyncCatalogNode
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from catalog.storage.descriptor_cache import CACHE
from schemasync.clock import ManualClock, describe_ts, physical_of
from schemasync.errors import TimestampTooFarError
from schemasync.service import ensured_activation
from tests.integration.catalog.support import (
    create_table,
    request_ids_in_log,
    run,
    settle,
    until,
)
from updatelog.errors import SettingsMismatchError


def test_first_start_writes_version_1_once(store_url: str) -> None:
    async def scenario() -> None:
        nodes = await asyncio.gather(
            *(
                CatalogNode.start(store_url, f"n{i}", NodeOptions(delay_ms=0, max_clock_skew_ms=0))
                for i in range(3)
            )
        )
        try:
            assert await nodes[0].log.latest_version() == 1
            for node in nodes:
                await node.wait_ready()
                first = node.service.catalog(1)
                # Catalog.initial's objects, each stamped with version 1's activation.
                assert [s.update_ts for s in first.schemas()] == [first.activation_ts] * 2
                unstamped = first.schemas()[0].model_copy(update={"update_ts": 0})
                assert unstamped in Catalog.initial().schemas()
                assert first.digest() == nodes[0].service.catalog(1).digest()
                assert len(first.schemas()) == len(Catalog.initial().schemas())
        finally:
            await asyncio.gather(*(n.close() for n in nodes))

    run(scenario())


def test_execute_waits_for_activation_plus_skew(store_url: str) -> None:
    """With a manual clock, execute returns only once the clock passes activation + skew."""

    async def scenario() -> None:
        clock = ManualClock(start_ms=1_000_000)
        async with CatalogNode.open(
            store_url,
            "n1",
            NodeOptions(delay_ms=500, max_clock_skew_ms=300, clock=clock, safe_time_ticker=False),
        ) as node:
            task = asyncio.create_task(node.manager.execute(create_table("T")))
            await until(lambda: node.service.latest_version == 2, "version 2 applied")
            assert not task.done()  # applied, not yet complete
            activation = node.service.catalog(2).activation_ts
            clock.set(physical_of(ensured_activation(activation, 300)) - 1)
            await asyncio.sleep(0.1)
            assert not task.done()
            clock.advance(1)
            result = await asyncio.wait_for(task, 5)
            assert result.version == 2 and result.applied == (True,)
            assert result.activation_ts == activation
            assert physical_of(activation) >= 1_000_000 + 500

    run(scenario())


def test_request_id_makes_a_retry_return_the_original_result(store_url: str) -> None:
    async def scenario() -> None:
        async with (
            CatalogNode.open(store_url, "a", NodeOptions(delay_ms=0, max_clock_skew_ms=0)) as a,
            CatalogNode.open(store_url, "b", NodeOptions(delay_ms=0, max_clock_skew_ms=0)) as b,
        ):
            batch = [create_table("T"), c.CreateSchema(name="S", if_not_exists=True)]
            first = await a.manager.execute(batch, request_id="r-1")
            # The client timed out and retries on another node, with a batch that would now
            # fail (TABLE_EXISTS): the original result comes back, nothing is appended.
            again = await b.manager.execute(batch, request_id="r-1")
            assert again == first
            assert await a.log.latest_version() == first.version
            assert (await request_ids_in_log(a))["r-1"] == [first.version]

    run(scenario())


def test_concurrent_duplicates_of_one_request_commit_once(store_url: str) -> None:
    async def scenario() -> None:
        async with (
            CatalogNode.open(store_url, "a", NodeOptions(delay_ms=0, max_clock_skew_ms=0)) as a,
            CatalogNode.open(store_url, "b", NodeOptions(delay_ms=0, max_clock_skew_ms=0)) as b,
        ):
            results = await asyncio.gather(
                *(
                    node.manager.execute(create_table("T"), request_id="same")
                    for node in (a, b, a, b, a)
                )
            )
            assert len({r.version for r in results}) == 1
            assert (await request_ids_in_log(a))["same"] == [results[0].version]

    run(scenario())


def test_refused_batch_changes_nothing_and_names_the_code(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        ) as node:
            await node.manager.execute(create_table("T"))
            before = await node.log.latest_version()
            with pytest.raises(CatalogError) as info:
                await node.manager.execute([create_table("U"), create_table("T")], request_id="bad")
            assert info.value.code is ErrorCode.TABLE_EXISTS
            assert await node.log.latest_version() == before
            assert node.service.latest_catalog().find_table("PUBLIC", "U") is None
            assert "bad" not in await request_ids_in_log(node)

    run(scenario())


def test_a_refused_request_id_keeps_its_refusal_on_every_node(store_url: str) -> None:
    async def scenario() -> None:
        async with (
            CatalogNode.open(store_url, "a", NodeOptions(delay_ms=0, max_clock_skew_ms=0)) as a,
            CatalogNode.open(store_url, "b", NodeOptions(delay_ms=0, max_clock_skew_ms=0)) as b,
        ):
            with pytest.raises(CatalogError) as first:
                await a.manager.execute(create_table("T", schema="S"), request_id="r-x")
            assert first.value.code is ErrorCode.SCHEMA_NOT_FOUND
            record = await a.log.request_record("r-x")
            assert record is not None and record.refused
            await a.manager.execute(c.CreateSchema(name="S"))
            before = await a.log.latest_version()
            # The command would now succeed, but this request id was answered: a copy of it
            # (a client retrying on another node) gets the same refusal and appends nothing.
            with pytest.raises(CatalogError) as again:
                await b.manager.execute(create_table("T", schema="S"), request_id="r-x")
            assert (again.value.code, again.value.message) == (
                first.value.code,
                first.value.message,
            )
            assert await a.log.latest_version() == before
            assert "r-x" not in await request_ids_in_log(a)
            await b.manager.execute(create_table("T", schema="S"), request_id="r-y")

    run(scenario())


def test_a_clash_inside_one_group_is_refused_once_the_winner_is_visible(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=300, max_clock_skew_ms=0)
        ) as node:
            results = await asyncio.gather(
                *(node.manager.execute(create_table("T")) for _ in range(2)),
                return_exceptions=True,
            )
            refused = [r for r in results if isinstance(r, CatalogError)]
            assert len(refused) == 1 and refused[0].code is ErrorCode.TABLE_EXISTS
            # Refused against the version holding the winner, once that version is active.
            active = node.service.active_catalog(node.clock.now())
            assert active.find_table("PUBLIC", "T") is not None

    run(scenario())


def test_group_commit_merges_concurrent_commands(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        ) as node:
            start = node.service.latest_version
            commands = [create_table(f"T{i}") for i in range(40)] + [create_table("T0")]
            results = await asyncio.gather(
                *(node.manager.execute(cmd) for cmd in commands), return_exceptions=True
            )
            ok = [r for r in results if not isinstance(r, BaseException)]
            refused = [r for r in results if isinstance(r, CatalogError)]
            assert len(ok) == 40 and len(refused) == 1
            assert refused[0].code is ErrorCode.TABLE_EXISTS
            produced = node.service.latest_version - start
            assert produced <= 5, f"{produced} versions for 41 concurrent commands"
            assert len(node.service.latest_catalog().tables()) == 40

    run(scenario())


def test_events_fire_in_entry_order_and_ready_waits_for_async_listeners(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        ) as node:
            seen: list[tuple[CatalogEvent, int, int, str]] = []
            gate = asyncio.Event()

            async def slow(e: CatalogEventParameters) -> None:
                await gate.wait()
                seen.append((e.event, e.version, e.index, e.subject.name))

            def broken(e: CatalogEventParameters) -> None:
                raise RuntimeError("listener bug")

            node.service.listen(CatalogEvent.TABLE_CREATE, slow)
            node.service.listen(CatalogEvent.INDEX_CREATE, slow)
            node.service.listen(CatalogEvent.TABLE_CREATE, broken)
            task = asyncio.create_task(node.manager.execute(create_table("T")))
            await until(lambda: node.service.latest_version == 2, "version 2 applied")
            assert not task.done()
            ready = asyncio.create_task(node.service.catalog_ready(2))
            await asyncio.sleep(0.05)
            assert not ready.done()
            gate.set()
            await asyncio.wait_for(asyncio.gather(task, ready), 5)
            assert seen == [
                # Entries 0-2 create the Default zone, the first table's.
                (CatalogEvent.TABLE_CREATE, 2, 3, "T"),
                (CatalogEvent.INDEX_CREATE, 2, 4, "T_PK"),
            ]
            # The broken listener did not stop the node.
            await node.manager.execute(create_table("U"))
            assert node.service.latest_catalog().find_table("PUBLIC", "U") is not None

    run(scenario())


def test_broken_listener_is_logged(store_url: str, caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        ) as node:
            node.service.listen(CatalogEvent.SCHEMA_CREATE, lambda e: 1 / 0)  # type: ignore[arg-type,return-value]
            await node.manager.execute(c.CreateSchema(name="S"))

    with caplog.at_level(logging.ERROR):
        run(scenario())
    assert any("listener" in r.message and "failed" in r.message for r in caplog.records)


def test_restart_recovers_every_version_with_equal_activations(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=5, max_clock_skew_ms=5)
        ) as node:
            for i in range(5):
                await node.manager.execute(create_table(f"T{i}"))
            before = {
                v: (node.service.digest(v), node.service.catalog(v).activation_ts)
                for v in range(1, 7)
            }
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=5, max_clock_skew_ms=5)
        ) as node:
            await node.wait_ready()
            after = {
                v: (node.service.digest(v), node.service.catalog(v).activation_ts)
                for v in range(1, 7)
            }
            assert after == before

    run(scenario())


@pytest.mark.parametrize("frozen_before", [False, True])
def test_recovery_collects_only_what_it_built_and_leaves_the_collector_as_it_was(
    store_url: str, frozen_before: bool
) -> None:
    """The collector is paused during recovery and runs once at the end, with what the process
    held before frozen for it; the store's big maps end up untracked; a freeze made by
    someone else stays as it was."""

    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", NodeOptions(delay_ms=0)) as node:
            await node.manager.execute([create_table(f"T{i}") for i in range(50)])
        if frozen_before:
            gc.freeze()
        try:
            async with CatalogNode.open(store_url, "n1", NodeOptions(delay_ms=0)) as node:
                await node.wait_ready()
                assert gc.isenabled()
                # Frozen objects stay frozen (their count drops only as some are freed).
                assert (gc.get_freeze_count() > 0) == frozen_before
                store = node.service.latest_catalog()._store
                assert not gc.is_tracked(store.tables)
                assert len(node.service.latest_catalog().tables()) == 50
        finally:
            gc.unfreeze()

    run(scenario())


def test_compaction_drops_old_versions_everywhere_and_restart_loads_the_snapshot(
    store_url: str,
) -> None:
    async def scenario() -> None:
        a = await CatalogNode.start(
            store_url, "a", NodeOptions(delay_ms=0, max_clock_skew_ms=0, follow_interval_s=0.05)
        )
        b = await CatalogNode.start(
            store_url, "b", NodeOptions(delay_ms=0, max_clock_skew_ms=0, follow_interval_s=0.05)
        )
        try:
            for i in range(4):
                await a.manager.execute(create_table(f"T{i}"))
            await settle([a, b])
            await b.close()  # b is down while a keeps going and compacts
            for i in range(4, 8):
                await a.manager.execute(create_table(f"T{i}"))
            latest = a.service.latest_version
            snapshot = await a.manager.compact(keep_versions=3)
            assert snapshot == latest - 2
            assert a.service.earliest_version == snapshot
            with pytest.raises(VersionCompactedError) as info:
                a.service.catalog(2)
            assert info.value.code is ErrorCode.VERSION_COMPACTED
            b = await CatalogNode.start(
                store_url, "b", NodeOptions(delay_ms=0, max_clock_skew_ms=0, follow_interval_s=0.05)
            )
            await settle([a, b])
            assert b.service.earliest_version == snapshot
            for v in range(snapshot, latest + 1):
                assert a.service.digest(v) == b.service.digest(v)
            # A third node that was up during compaction drops the old versions too.
            c_node = await CatalogNode.start(
                store_url, "c", NodeOptions(delay_ms=0, max_clock_skew_ms=0, follow_interval_s=0.05)
            )
            await c_node.close()
            await a.manager.execute(create_table("AFTER"))
            await settle([a, b])
            assert b.service.latest_catalog().find_table("PUBLIC", "AFTER") is not None
        finally:
            await a.close()
            await b.close()

    run(scenario())


def test_settings_are_fixed_for_the_cluster(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "a", NodeOptions(delay_ms=100, max_clock_skew_ms=50)
        ):
            with pytest.raises(SettingsMismatchError):
                await CatalogNode.start(
                    store_url, "b", NodeOptions(delay_ms=200, max_clock_skew_ms=50)
                )

    run(scenario())


def test_new_tables_record_their_folder_in_the_clusters_warehouse(
    store_url: str, tmp_path: Path
) -> None:
    """The warehouse is fixed with the cluster; each new table records its folder in it."""
    warehouse = tmp_path / "warehouse"

    async def scenario() -> None:
        options = NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        async with CatalogNode.open(
            store_url, "a", replace(options, default_warehouse=str(warehouse))
        ) as a:
            await a.manager.execute(create_table("T"))
            table = a.service.latest_catalog().table("PUBLIC", "T")
            assert table.location == str(warehouse / f"table_{table.id}")
            # A node naming none, or another default, takes the cluster's.
            elsewhere = replace(options, default_warehouse=str(tmp_path / "other"))
            async with CatalogNode.open(store_url, "b", elsewhere) as b:
                assert b.settings.warehouse == str(warehouse)
                await b.manager.execute(create_table("U"))
                created = b.service.latest_catalog().table("PUBLIC", "U")
                assert created.location == str(warehouse / f"table_{created.id}")
            with pytest.raises(SettingsMismatchError) as refused:
                await CatalogNode.start(
                    store_url, "c", replace(options, warehouse=str(tmp_path / "x"))
                )
            assert str(warehouse) in str(refused.value)

    run(scenario())


def test_reads_far_in_the_future_are_refused(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "a", NodeOptions(delay_ms=100, max_clock_skew_ms=50)
        ) as node:
            far = node.clock.now() + (10_000 << 16)
            with pytest.raises(TimestampTooFarError) as refused:
                await node.schema_sync.wait_for_metadata_completeness(far)
            # Times in messages read as RFC 3339, with the hybrid value beside.
            assert f"{describe_ts(far)} is beyond this node's clock" in refused.value.message

    run(scenario())


def test_sync_facade(store_url: str) -> None:
    with SyncCatalogNode.open(
        store_url, "n1", NodeOptions(delay_ms=10, max_clock_skew_ms=10)
    ) as node:
        result = node.execute(create_table("T"))
        cat = node.active_catalog(node.now())
        assert cat.version >= result.version
        assert cat.table("PUBLIC", "T").name == "T"


def test_a_node_publishes_its_own_commit_without_its_watch(store_url: str) -> None:
    """The version a node's own append committed is applied there at once, events and all.

    With the node's watch stopped, execute still returns with its version applied; once the
    watch follows the log again it skips that version and brings other nodes' versions.
    """

    async def scenario() -> None:
        options = NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        async with (
            CatalogNode.open(store_url, "a", options) as a,
            CatalogNode.open(store_url, "b", options) as b,
        ):
            created: list[int] = []
            a.service.listen(CatalogEvent.TABLE_CREATE, lambda p: created.append(p.version))
            await a.service.close()  # a no longer follows the log
            mine = await asyncio.wait_for(a.manager.execute(create_table("MINE")), 10)
            assert a.service.latest_version == mine.version
            assert a.service.latest_catalog().find_table("PUBLIC", "MINE") is not None
            assert created == [mine.version]
            a.service.start()
            theirs = await b.manager.execute(create_table("THEIRS"))
            await asyncio.wait_for(a.service.catalog_ready(theirs.version), 10)
            assert created == [mine.version, theirs.version]
            assert (
                a.service.catalog(mine.version).digest() == b.service.catalog(mine.version).digest()
            )

    run(scenario())


def test_a_node_sizes_the_process_descriptor_cache(store_url: str) -> None:
    """The cache is the process's: the largest size a node asks for holds."""
    capacity = CACHE.capacity
    wanted = capacity + 1000

    async def scenario() -> None:
        fast = NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        async with CatalogNode.open(store_url, "big", replace(fast, descriptor_cache=wanted)):
            assert CACHE.capacity == wanted
        async with CatalogNode.open(store_url, "small", replace(fast, descriptor_cache=10)):
            assert CACHE.capacity == wanted

    try:
        run(scenario())
    finally:
        CACHE.capacity = capacity

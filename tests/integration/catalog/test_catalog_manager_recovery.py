"""Ports of Ignite's ``CatalogManagerRecoveryTest`` and of the rest of ``CatalogManagerSelfTest``.

``test_catalog_manager_self.py`` ports the first four of ``CatalogManagerSelfTest``
(versions 0 and 1, invalid and successive versions) and ``test_node_stop.py`` its
``testNoInteractionsAfterStop``. Ignite's ``TestCommand.ok()`` (one new object id) is a
``CREATE ZONE`` here, ``TestCommand.empty()`` a ``CREATE ... IF NOT EXISTS`` of what exists,
and ``TestCommand.fail()`` a command the catalog refuses. A restart is a close and a new node on
the same store.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from catalog import CatalogError, ErrorCode
from catalog import commands as c
from catalog.entries import ObjectIdGenUpdateEntry
from catalog.marshalling import encode_update
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from catalog.update import VersionedUpdate
from schemasync.clock import HybridClock, ManualClock, physical_of
from schemasync.service import ensured_activation
from tests.integration.catalog.support import create_table, run, until
from updatelog.kv_log import KvUpdateLog
from updatelog.url import open_log

_OPTIONS = NodeOptions(delay_ms=0, max_clock_skew_ms=0)
_DAY_MS = 86_400_000
_YEAR_MS = 365 * _DAY_MS

_zone_names = (f"Z{i}" for i in itertools.count())


def _ok() -> c.CreateZoneCommand:
    """Ignite's ``TestCommand.ok()``: a command that takes one new object id."""
    return c.CreateZone(name=next(_zone_names))


def _empty() -> c.CreateSchemaCommand:
    """Ignite's ``TestCommand.empty()``: a command that changes nothing."""
    return c.CreateSchema(name="PUBLIC", if_not_exists=True)


def _fail() -> c.DropZoneCommand:
    """Ignite's ``TestCommand.fail()``: a command the catalog refuses (ZONE_NOT_FOUND)."""
    return c.DropZone(name="NO_SUCH_ZONE")


def _refused(code: ErrorCode, call: Callable[[], Any]) -> CatalogError:
    with pytest.raises(CatalogError) as info:
        call()
    assert info.value.code is code, str(info.value)
    return info.value


def _manual(delay_ms: int, skew_ms: int) -> tuple[ManualClock, NodeOptions]:
    clock = ManualClock(start_ms=1_000_000)
    options = NodeOptions(
        delay_ms=delay_ms, max_clock_skew_ms=skew_ms, clock=clock, safe_time_ticker=False
    )
    return clock, options


# -- CatalogManagerRecoveryTest --------------------------------------------------------------


def test_recovery_catalog_version_timestamps(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            version0 = (await node.manager.execute(create_table("T"))).version
            index = c.CreateIndex(table="T", name="I", columns=("V",))
            version1 = (await node.manager.execute(index)).version
            assert version1 > version0
            time0 = node.service.catalog(version0).activation_ts
            time1 = node.service.catalog(version1).activation_ts
            assert time1 > time0

        # Restart with the clock a day ahead.
        later = NodeOptions(delay_ms=0, max_clock_skew_ms=0, clock=HybridClock(offset_ms=_DAY_MS))
        async with CatalogNode.open(store_url, "n1", later) as node:
            await node.wait_ready()
            # Recovered from the updates themselves: no snapshot.
            entries = await node.log.read(1)
            assert [e.version for e in entries] == [1, version0, version1]
            assert not any(e.is_snapshot for e in entries)
            assert node.service.earliest_version == 1
            assert node.service.active_catalog_version(time0) == version0
            assert node.service.active_catalog_version(time1) == version1
            assert node.service.active_catalog_version(time1 - 1) == version0

    run(scenario())


def test_recovery_catalog_after_compaction(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            execute = node.manager.execute
            await execute(create_table("T"))
            await execute(c.CreateIndex(table="T", name="I", columns=("V",)))
            await execute(create_table("T2"))
            await execute(c.CreateIndex(table="T", name="I2", columns=("ID", "V")))
            await execute(c.DropTable(name="T2"))
            await execute(c.DropIndex(name="I2"))
            earliest = node.service.latest_version
            earliest_time = node.service.catalog(earliest).activation_ts
            latest = (await execute(create_table("T3"))).version
            latest_time = node.service.catalog(latest).activation_ts

            assert await node.manager.compact_to(earliest) == earliest
            assert node.service.earliest_version == earliest

        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            await node.wait_ready()
            # Recovered from the snapshot and the one update after it.
            entries = await node.log.read(earliest)
            assert [(e.version, e.is_snapshot) for e in entries] == [
                (earliest, True),
                (latest, False),
            ]
            service = node.service
            assert service.earliest_version == earliest
            _refused(ErrorCode.VERSION_COMPACTED, lambda: service.active_catalog_version(0))
            _refused(
                ErrorCode.VERSION_COMPACTED,
                lambda: service.active_catalog_version(earliest_time - 1),
            )
            assert service.active_catalog_version(earliest_time) == earliest
            assert service.active_catalog_version(latest_time) == latest
            recovered = service.latest_catalog()
            assert [t.name for t in recovered.tables()] == ["T", "T3"]
            assert recovered.find_index("PUBLIC", "I") is not None
            assert recovered.find_index("PUBLIC", "I2") is None

    run(scenario())


# -- CatalogManagerSelfTest ------------------------------------------------------------------


def test_operation_will_be_retried_finite_amount_of_times(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer wins every compare-and-set: the manager gives up after its attempts."""

    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            real_append = node.log.append
            attempts: list[int] = []

            async def concurrent_writer_first(
                version: int, payload: bytes, proposal_ts: int, *args: Any
            ) -> Any:
                attempts.append(version)
                interloper = VersionedUpdate(
                    version=version,
                    proposal_ts=node.clock.now(),
                    delay_ms=0,
                    entries=(ObjectIdGenUpdateEntry(delta=1),),
                )
                first = await real_append(
                    version, encode_update(interloper), interloper.proposal_ts
                )
                assert first.committed
                return await real_append(version, payload, proposal_ts, *args)

            before = node.service.latest_catalog()
            monkeypatch.setattr(node.log, "append", concurrent_writer_first)
            with pytest.raises(CatalogError) as info:
                await node.manager.execute(create_table("T"))
            assert info.value.code is ErrorCode.CONCURRENT_UPDATE
            assert "gave up after 16 attempts" in info.value.message
            assert len(attempts) == 16
            assert attempts == list(range(before.version + 1, before.version + 17))
            monkeypatch.undo()

            await node.wait_ready()
            latest = node.service.latest_catalog()
            assert latest.version == before.version + 16
            assert latest.object_id_gen == before.object_id_gen + 16
            assert latest.find_table("PUBLIC", "T") is None

    run(scenario())


def test_catalog_activation_time(store_url: str) -> None:
    async def scenario() -> None:
        clock, options = _manual(delay_ms=_YEAR_MS, skew_ms=0)
        async with CatalogNode.open(store_url, "n1", options) as node:
            service = node.service
            initial = service.latest_catalog()
            task = asyncio.create_task(node.manager.execute(_ok()))
            await until(lambda: service.latest_version == initial.version + 1, "version applied")
            assert not task.done()

            now = clock.now()
            latest_version = service.latest_version
            assert service.active_catalog_version(now) == latest_version - 1
            active = service.catalog(latest_version - 1)
            assert service.active_catalog(now) is active
            assert active.object_id_gen == initial.object_id_gen
            assert active.activation_ts <= now

            latest = service.catalog(latest_version)
            assert latest is not active
            assert latest.activation_ts > now
            assert latest.object_id_gen == initial.object_id_gen + 1

            # Move the clock to the activation time.
            clock.advance(_YEAR_MS + 1)
            assert service.active_catalog(clock.now()) is latest
            result = await asyncio.wait_for(task, 5)
            assert result.version == latest_version

    run(scenario())


def test_always_wait_for_activation_time(store_url: str) -> None:
    async def scenario() -> None:
        clock, options = _manual(delay_ms=_YEAR_MS, skew_ms=200)
        async with CatalogNode.open(store_url, "n1", options) as node:
            service = node.service
            initial_version = service.latest_version
            first = asyncio.create_task(node.manager.execute(_ok()))
            await service.catalog_ready(initial_version + 1)
            assert not first.done()

            # The next command validates against the version not yet active, and waits too.
            second = asyncio.create_task(node.manager.execute(_ok()))
            await until(lambda: service.latest_version == initial_version + 2, "second applied")
            await asyncio.sleep(0.05)
            assert not first.done() and not second.done()

            latest = service.latest_catalog()
            clock.set(physical_of(ensured_activation(latest.activation_ts, 200)))
            results = await asyncio.wait_for(asyncio.gather(first, second), 5)
            assert [r.version for r in results] == [initial_version + 1, initial_version + 2]
            assert service.active_catalog(clock.now()) is latest

    run(scenario())


def test_catalog_service_manages_update_log_lifecycle(store_url: str) -> None:
    """A node opened on a URL opens and closes its log; one given an open log leaves it open."""

    async def scenario() -> None:
        node = await CatalogNode.start(store_url, "n1", _OPTIONS)
        owned = node.log
        assert isinstance(owned, KvUpdateLog) and not owned.is_closed()
        await node.close()
        assert owned.is_closed()

        log = open_log(store_url)
        try:
            async with CatalogNode.open(log, "n2", _OPTIONS) as borrowing:
                assert borrowing.log is log
            assert isinstance(log, KvUpdateLog) and not log.is_closed()
            assert await log.latest_version() == 1
        finally:
            await log.close()

    run(scenario())


def test_user_future_completes_after_cluster_wide_activation_happens(store_url: str) -> None:
    async def scenario() -> None:
        delay_ms, skew_ms = _YEAR_MS, 300
        clock, options = _manual(delay_ms, skew_ms)
        async with CatalogNode.open(store_url, "n1", options) as node:
            start = clock.now()
            task = asyncio.create_task(node.manager.execute(_ok()))
            await until(lambda: node.service.latest_version == 2, "version 2 applied")
            activation = node.service.catalog(2).activation_ts
            cluster_wide = physical_of(ensured_activation(activation, skew_ms))
            assert cluster_wide - physical_of(start) >= delay_ms + skew_ms

            clock.set(cluster_wide - 1)
            await asyncio.sleep(0.05)
            assert not task.done()
            clock.set(cluster_wide)
            assert (await asyncio.wait_for(task, 5)).version == 2

    run(scenario())


def test_latest_catalog_version(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            assert node.service.latest_version == 1
            await node.manager.execute(_ok())
            assert node.service.latest_version == 2
            await node.manager.execute(_ok())
            assert node.service.latest_version == 3

    run(scenario())


def test_bulk_command_either_applied_atomically_or_doesnt_applied_at_all(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            initial = node.service.latest_catalog()
            batch: Sequence[c.CreateZoneCommand | c.DropZoneCommand] = [_ok(), _ok(), _fail()]
            with pytest.raises(CatalogError) as info:
                await node.manager.execute(batch)
            assert info.value.code is ErrorCode.ZONE_NOT_FOUND
            assert node.service.latest_catalog() is initial
            assert await node.log.latest_version() == initial.version

            result = await node.manager.execute(batch[:-1])
            assert result.applied == (True, True)
            updated = node.service.latest_catalog()
            assert updated.object_id_gen == initial.object_id_gen + 2
            assert len(updated.zones()) == len(initial.zones()) + 2

    run(scenario())


def test_bulk_update_increments_version_by_one(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            before = node.service.latest_version
            result = await node.manager.execute([_ok(), _ok()])
            assert result.version == before + 1
            assert node.service.latest_version - before == 1

    run(scenario())


def test_bulk_update_doesnt_increment_version_in_case_of_error(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            before = node.service.latest_version
            with pytest.raises(CatalogError) as info:
                await node.manager.execute([_ok(), _fail()])
            assert info.value.code is ErrorCode.ZONE_NOT_FOUND
            assert node.service.latest_version == before
            assert await node.log.latest_version() == before

    run(scenario())


def test_results_for_few_commands(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            before = node.service.latest_version
            result = await node.manager.execute([_empty(), _ok(), _empty(), _ok(), _empty()])
            assert result.applied == (False, True, False, True, False)
            assert result.version == before + 1
            assert node.service.latest_version == before + 1

    run(scenario())


def test_catalog_compaction(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            service = node.service
            await node.manager.execute(_ok())
            await node.manager.execute(_ok())
            compact_to = service.latest_version
            catalog = service.catalog(service.active_catalog_version(node.clock.now()))
            assert catalog.version == compact_to

            await node.manager.execute(_ok())
            await node.manager.execute(_ok())

            assert await node.manager.compact_to(compact_to) == compact_to
            assert service.earliest_version == catalog.version
            assert await node.log.earliest_version() == catalog.version

            _refused(ErrorCode.VERSION_COMPACTED, lambda: service.catalog(0))
            _refused(ErrorCode.VERSION_COMPACTED, lambda: service.catalog(catalog.version - 1))
            assert service.catalog(catalog.version).digest() == catalog.digest()

            _refused(ErrorCode.VERSION_COMPACTED, lambda: service.active_catalog_version(0))
            _refused(
                ErrorCode.VERSION_COMPACTED,
                lambda: service.active_catalog_version(catalog.activation_ts - 1),
            )
            assert service.active_catalog_version(catalog.activation_ts) == catalog.version

            # Compacting to the same version again does nothing.
            assert await node.manager.compact_to(compact_to) is None
            assert service.earliest_version == catalog.version

    run(scenario())


def test_empty_catalog_compaction(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            service = node.service
            assert service.latest_version == 1
            earliest = service.earliest_version

            assert await node.manager.compact_to(1) is None

            assert service.earliest_version == earliest
            assert await node.log.earliest_version() == 1
            assert service.latest_version == 1
            assert service.catalog(1).version == 1
            assert service.active_catalog_version(0) == 0
            assert service.catalog(0).version == 0  # the empty catalog is still there

    run(scenario())

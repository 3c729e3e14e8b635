"""Large values, definite refusals and bounded history, on both stores (``store_url``).

The stores run with a 64 KiB request limit (see ``conftest``), so every value here above it is
written as chunks and made visible by one guarded transaction.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time

import pytest

from deploy.etcd_server import EtcdServer
from tests.etcd_fixtures import SMALL_REQUEST_BYTES
from tests.integration.updatelog.support import opened, run, take, watching
from updatelog import (
    AppendConflict,
    FormatError,
    KvUpdateLog,
    LogCompactedError,
    LogEntry,
    RequestRecord,
    StoreQuotaExceededError,
    UpdateTooLargeError,
)
from updatelog.envelope import Kind
from updatelog.etcd import EtcdUpdateLog
from updatelog.kv_log import CHUNK_GRACE_MS


def _kv(log: object) -> KvUpdateLog:
    assert isinstance(log, KvUpdateLog)
    return log


def _pieces(value: bytes) -> list[bytes]:
    """Cut ``value`` as an encoder might: uneven pieces, some empty, some across chunk ends."""
    cuts = sorted(
        {0, 1, 7, SMALL_REQUEST_BYTES - 1, SMALL_REQUEST_BYTES, 3 * SMALL_REQUEST_BYTES + 5}
    )
    bounds = [c for c in cuts if c < len(value)] + [len(value)]
    pieces = [value[a:b] for a, b in itertools.pairwise(bounds)]
    return [b"", *pieces[:2], b"", *pieces[2:], b""]


def test_a_large_update_and_snapshot_round_trip_as_chunks(store_url: str) -> None:
    big = os.urandom(5 * SMALL_REQUEST_BYTES + 123)
    bigger = os.urandom(9 * SMALL_REQUEST_BYTES)

    async def scenario() -> None:
        async with opened(store_url) as opened_log, opened(store_url) as other:
            log = _kv(opened_log)
            assert (await log.append(1, b"small", 10)).committed
            async with watching(other, 1) as events:
                assert (await log.append(2, big, 20, ["big-request"])).committed
                got = [e for e in await take(events, 2) if isinstance(e, LogEntry)]
                assert got == [LogEntry(1, b"small"), LogEntry(2, big)]
            assert await other.read(2) == [LogEntry(2, big)]
            assert len(await log.chunks.tags()) == 1
            assert (await log.append(3, b"after", 30)).committed

            assert await log.save_snapshot(3, bigger)
            assert await other.read(3) == [LogEntry(3, bigger, is_snapshot=True)]
            # The update chunks went with the updates they belonged to.
            tags = await log.chunks.tags()
            assert len(tags) == 1 and next(iter(tags)).startswith("s")
            async with watching(other, 3) as events:
                got = [e for e in await take(events, 1) if isinstance(e, LogEntry)]
                assert got == [LogEntry(3, bigger, is_snapshot=True)]

            assert (await log.append(4, b"four", 40)).committed
            assert await log.save_snapshot(4, _pieces(big))
            assert await other.read(4) == [LogEntry(4, big, is_snapshot=True)]
            assert len(await log.chunks.tags()) == 1  # the older snapshot's chunks are gone

            assert (await log.append(5, b"five", 50)).committed
            assert await log.save_snapshot(5, [b"", b"tiny", b"", b" snapshot"])
            assert await other.read(5) == [LogEntry(5, b"tiny snapshot", is_snapshot=True)]
            assert not await log.chunks.tags()

    run(scenario(), timeout=60)


def test_chunks_of_a_writer_that_died_stay_invisible_and_are_collected(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as opened_log:
            log = _kv(opened_log)
            assert (await log.append(1, b"one", 10)).committed
            # A writer wrote every chunk of update 2, then died before its transaction.
            await log.chunks.write("u", 2, [os.urandom(3 * SMALL_REQUEST_BYTES)])
            assert await log.latest_version() == 1
            assert await log.read(1) == [LogEntry(1, b"one")]
            assert len(await log.chunks.tags()) == 1
            # Young chunks may still belong to a live writer: kept.
            assert await log.collect_garbage() == 0
            assert len(await log.chunks.tags()) == 1
            later = int(time.time() * 1000) + CHUNK_GRACE_MS + 1
            assert await log.collect_garbage(later) == 1
            assert await log.chunks.tags() == set()
            # Another writer takes version 2 as if nothing happened.
            assert (await log.append(2, os.urandom(2 * SMALL_REQUEST_BYTES), 20)).committed
            assert len(await log.chunks.tags()) == 1
            assert await log.collect_garbage(later) == 0

    run(scenario(), timeout=60)


def test_a_losing_large_append_leaves_no_chunks(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as opened_log:
            log = _kv(opened_log)
            assert (await log.append(1, b"one", 10)).committed
            lost = await log.append(1, os.urandom(2 * SMALL_REQUEST_BYTES), 20)
            assert lost.conflict is AppendConflict.VERSION
            assert await log.chunks.tags() == set()

    run(scenario())


def test_an_update_over_the_hard_limit_is_refused_before_anything_is_written(
    store_url: str,
) -> None:
    async def scenario() -> None:
        async with opened(store_url) as opened_log:
            log = _kv(opened_log)
            log.max_update_bytes = 4 * SMALL_REQUEST_BYTES
            with pytest.raises(UpdateTooLargeError, match="split the batch"):
                await log.append(1, os.urandom(5 * SMALL_REQUEST_BYTES), 10)
            assert await log.latest_version() == 0
            assert await log.chunks.tags() == set()
            assert (await log.append(1, b"fits", 10)).committed

    run(scenario())


def test_request_records_expire_and_are_collected(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as opened_log:
            log = _kv(opened_log)
            log.request_ttl_ms = 200
            assert (await log.append(1, b"one", 10, ["r"])).committed
            assert await log.request_record("r") == RequestRecord(1)
            again = await log.append(2, b"one again", 20, ["r"])
            assert again.conflict is AppendConflict.REQUEST and again.request_version == 1
            await asyncio.sleep(0.3)
            # Past the window the id names no request: a retry is a new request.
            assert await log.request_record("r") is None
            assert (await log.append(2, b"one again", 20, ["r"])).committed
            assert await log.request_record("r") == RequestRecord(2)
            refused = await log.record_refusal("gone", 2, b"no")
            assert refused.committed
            await asyncio.sleep(0.3)
            assert await log.collect_garbage() == 2
            assert await log.request_record("r") is None
            assert await log.request_record("gone") is None

    run(scenario())


def test_etcd_refusing_a_request_as_too_large_is_a_definite_refusal(
    etcd_small_server: EtcdServer,
) -> None:
    """A client told a larger limit than the server's: etcd refuses; nothing is ambiguous."""

    async def scenario() -> None:
        host, port = etcd_small_server.endpoint.rsplit(":", 1)
        log = EtcdUpdateLog(
            [(host, int(port))],
            prefix=f"too-large-{os.getpid()}-{time.monotonic_ns()}",
            max_request_bytes=16 * SMALL_REQUEST_BYTES,
        )
        try:
            started = time.monotonic()
            with pytest.raises(UpdateTooLargeError, match="too large"):
                await log.append(1, os.urandom(4 * SMALL_REQUEST_BYTES), 10)
            assert time.monotonic() - started < log.timeout_s  # refused, not timed out
            assert await log.latest_version() == 0
            assert (await log.append(1, b"fits", 10)).committed
        finally:
            await log.close()

    run(scenario())


def test_a_full_etcd_is_a_definite_refusal() -> None:
    """Past ``--quota-backend-bytes`` etcd refuses writes: STORE_QUOTA_EXCEEDED, nothing written."""

    async def scenario(server: EtcdServer) -> None:
        host, port = server.endpoint.rsplit(":", 1)
        # A generous timeout: a loaded machine must not turn the refusal into a lost answer.
        log = EtcdUpdateLog([(host, int(port))], prefix="full", timeout_s=30.0)
        try:
            version = 0
            with pytest.raises(StoreQuotaExceededError, match="full"):
                for _ in range(64):  # 64 MiB at most, well past the 16 MiB quota
                    result = await log.append(version + 1, os.urandom(1024 * 1024), version + 10)
                    assert result.committed
                    version += 1
            assert await log.latest_version() == version
            assert await log.read(version, version) != []
        finally:
            await log.close()

    with EtcdServer(unsafe_no_fsync=True, extra_args=["--quota-backend-bytes=16777216"]) as server:
        run(scenario(server), timeout=120)


def test_chunks_a_snapshot_took_are_a_compaction_not_a_corruption(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as opened_log:
            log = _kv(opened_log)
            assert (await log.append(1, b"one", 10)).committed
            assert (await log.append(2, os.urandom(3 * SMALL_REQUEST_BYTES), 20)).committed
            assert (await log.append(3, b"three", 30)).committed
            # A reader got update 2's manifest; then a snapshot took the update and its chunks.
            manifest = (await log.store.range(*log.keys.update_range(2, 2))).kvs[0].value
            assert await log.save_snapshot(3, b"catalog at 3")
            with pytest.raises(LogCompactedError):
                await log.resolve(2, manifest, Kind.UPDATE)
            # Chunks missing while the value is retained are a corruption, said as such.
            assert (await log.append(4, os.urandom(3 * SMALL_REQUEST_BYTES), 40)).committed
            (tag,) = [t for t in await log.chunks.tags() if t.startswith("u")]
            stored = (await log.store.range(*log.keys.update_range(4, 4))).kvs[0].value
            await log.chunks.discard(tag)
            with pytest.raises(FormatError, match="chunks"):
                await log.resolve(4, stored, Kind.UPDATE)

    run(scenario())


def test_chunks_of_a_snapshot_still_being_written_survive_another_snapshot(
    store_url: str,
) -> None:
    async def scenario() -> None:
        async with opened(store_url) as opened_log:
            log = _kv(opened_log)
            for version in range(1, 6):
                assert (await log.append(version, b"u", version * 10)).committed
            # Another node is writing a large snapshot at 5 when this one saves one at 3.
            await log.chunks.write("s", 5, [os.urandom(3 * SMALL_REQUEST_BYTES)])
            assert await log.save_snapshot(3, b"catalog at 3")
            assert len(await log.chunks.tags()) == 1
            later = int(time.time() * 1000) + CHUNK_GRACE_MS + 1
            assert await log.collect_garbage(later) == 1

    run(scenario())

"""One behaviour suite for every ``UpdateLog`` backend (``store_url`` is sqlite or etcd).

Everything here goes through the protocol and ``open_log`` only, so a backend passes exactly
when it keeps the log's promises: contiguous versions, one winner per CAS, the safe-time rule,
idempotent request ids, ordered range reads, a watch that never skips or repeats, snapshots
that compact atomically, durable restarts and fixed cluster settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import select
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.integration.updatelog.support import (
    RaceOutcome,
    append_until_won,
    opened,
    run,
    take,
    versions,
    watching,
    within,
)
from updatelog import (
    AppendConflict,
    AppendResult,
    ClusterSettings,
    KvUpdateLog,
    LogCompactedError,
    LogEntry,
    RequestRecord,
    SafeTimeAdvanced,
    SafeTimeResult,
    SettingsMismatchError,
    SnapshotRequired,
    StorageUnavailableError,
    UpdateLog,
    WatchEvent,
)
from updatelog.keys import prefix_range_end
from updatelog.kv import Put

ROOT = Path(__file__).resolve().parents[3]


async def _append_many(log: UpdateLog, count: int, *, first_ts: int = 100) -> None:
    start = await log.latest_version()
    for i in range(1, count + 1):
        v = start + i
        result = await log.append(v, f"update {v}".encode(), first_ts + v)
        assert result == AppendResult(True, v, first_ts + v)


def test_empty_log(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            assert await log.latest_version() == 0
            assert await log.earliest_version() == 0
            assert await log.safe_time() == 0
            assert await log.read(1) == []
            assert await log.request_record("nobody") is None

    run(scenario())


def test_contiguous_appends_and_range_reads(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            await _append_many(log, 5)
            assert await log.latest_version() == 5
            assert await log.earliest_version() == 1
            assert await log.safe_time() == 105
            assert await log.read(1) == [LogEntry(v, f"update {v}".encode()) for v in range(1, 6)]
            assert versions(list(await log.read(2, 4))) == [2, 3, 4]
            assert versions(list(await log.read(4, 99))) == [4, 5]
            assert await log.read(6) == []
            assert await log.read(3, 2) == []

    run(scenario())


def test_append_refuses_a_stale_or_future_version(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            assert await log.append(2, b"gap", 10) == AppendResult(
                False, 0, 0, AppendConflict.VERSION
            )
            assert (await log.append(1, b"one", 10)).committed
            assert await log.append(1, b"again", 11) == AppendResult(
                False, 1, 10, AppendConflict.VERSION
            )
            assert await log.append(3, b"gap", 11) == AppendResult(
                False, 1, 10, AppendConflict.VERSION
            )
            assert await log.read(1) == [LogEntry(1, b"one")]

    run(scenario())


def test_append_at_or_below_safe_time_fails(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            assert (await log.append(1, b"one", 100)).committed
            for ts in (100, 50):
                assert await log.append(2, b"late", ts) == AppendResult(
                    False, 1, 100, AppendConflict.SAFE_TIME
                )
            assert await log.append(2, b"two", 101) == AppendResult(True, 2, 101)
            assert versions(list(await log.read(1))) == [1, 2]

    run(scenario())


def test_raise_safe_time_never_lowers_it(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            await _append_many(log, 2)
            assert await log.raise_safe_time(500) == SafeTimeResult(500, 2)
            assert await log.raise_safe_time(300) == SafeTimeResult(500, 2)
            assert await log.raise_safe_time(500) == SafeTimeResult(500, 2)
            assert await log.safe_time() == 500
            assert (await log.append(3, b"x", 500)).conflict is AppendConflict.SAFE_TIME
            assert await log.append(3, b"x", 501) == AppendResult(True, 3, 501)
            assert await log.raise_safe_time(501) == SafeTimeResult(501, 3)

    run(scenario())


def test_request_ids_are_recorded_once(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            assert (await log.append(1, b"one", 10, ["req-a", "req-b"])).committed
            assert await log.request_record("req-a") == RequestRecord(1)
            assert await log.request_record("req-b") == RequestRecord(1)

            # A retry on top of the latest version learns which version committed it.
            retry = await log.append(2, b"one again", 20, ["req-a"])
            assert retry == AppendResult(
                False, 1, 10, AppendConflict.REQUEST, request_version=1, request_id="req-a"
            )
            # So does a blind retry of the same version: the request wins over the version.
            stale = await log.append(1, b"one again", 20, ["req-b"])
            assert stale.conflict is AppendConflict.REQUEST
            assert (stale.request_version, stale.request_id) == (1, "req-b")

            # One recorded id fails the whole append: the new id is not recorded either.
            mixed = await log.append(2, b"two", 20, ["req-new", "req-a"])
            assert (mixed.committed, mixed.conflict) == (False, AppendConflict.REQUEST)
            assert await log.request_record("req-new") is None
            assert await log.latest_version() == 1

            assert (await log.append(2, b"two", 20, ["req-new"])).committed
            assert await log.request_record("req-new") == RequestRecord(2)

    run(scenario())


def test_a_refusal_is_the_one_outcome_of_its_request_id(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            assert (await log.append(1, b"one", 10, ["req-ok"])).committed
            # Judged against a version that is no longer the latest: judge again there.
            stale = await log.record_refusal("req-no", 2, b"why")
            assert (stale.committed, stale.conflict, stale.version) == (
                False,
                AppendConflict.VERSION,
                1,
            )
            assert await log.request_record("req-no") is None

            refused = await log.record_refusal("req-no", 1, b"why")
            assert refused == AppendResult(True, 1, 10)
            assert await log.request_record("req-no") == RequestRecord(1, b"why")
            assert await log.latest_version() == 1  # no new version

            # A copy of the request still in flight cannot commit it any more ...
            late = await log.append(2, b"late copy", 20, ["req-no"])
            assert (late.committed, late.conflict) == (False, AppendConflict.REQUEST)
            assert late.request == RequestRecord(1, b"why")
            # ... nor refuse it differently, and a committed id cannot be refused.
            again = await log.record_refusal("req-no", 1, b"other reason")
            assert again.request == RequestRecord(1, b"why")
            committed = await log.record_refusal("req-ok", 1, b"why")
            assert (committed.conflict, committed.request) == (
                AppendConflict.REQUEST,
                RequestRecord(1),
            )
            assert await log.latest_version() == 1

    run(scenario())


def test_a_request_that_changed_nothing_is_recorded_without_a_version(store_url: str) -> None:
    digest = b"\x03" * 32

    async def scenario() -> None:
        async with opened(store_url) as log:
            assert (await log.append(1, b"one", 10)).committed
            stale = await log.record_unchanged("req-noop", 2, digest)
            assert (stale.committed, stale.conflict, stale.version) == (
                False,
                AppendConflict.VERSION,
                1,
            )
            assert (await log.record_unchanged("req-noop", 1, digest)) == AppendResult(True, 1, 10)
            record = await log.request_record("req-noop")
            assert record == RequestRecord(1) and record.same_request(digest)
            assert await log.latest_version() == 1  # no new version
            # A copy in flight is answered from the record; the id cannot be reused.
            late = await log.append(2, b"late copy", 20, {"req-noop": digest})
            assert (late.conflict, late.request) == (AppendConflict.REQUEST, RequestRecord(1))
            again = await log.record_unchanged("req-noop", 1, digest)
            assert again.request == RequestRecord(1)

    run(scenario())


def test_request_records_keep_the_digest_of_their_request(store_url: str) -> None:
    first, second = b"\x01" * 32, b"\x02" * 32

    async def scenario() -> None:
        async with opened(store_url) as log:
            assert (await log.append(1, b"one", 10, {"req-a": first, "req-b": b""})).committed
            assert (await log.request_record("req-a")).digest == first  # type: ignore[union-attr]
            assert (await log.request_record("req-b")).digest == b""  # type: ignore[union-attr]
            retry = await log.append(2, b"again", 20, {"req-a": second})
            assert retry.conflict is AppendConflict.REQUEST
            assert retry.request is not None and retry.request.digest == first
            assert not retry.request.same_request(second) and retry.request.same_request(first)

            assert (await log.record_refusal("req-no", 1, b"why", second)).committed
            copy = await log.append(2, b"late copy", 20, {"req-no": first})
            assert copy.request == RequestRecord(1, b"why")
            assert copy.request is not None and copy.request.digest == second

    run(scenario())


def test_watch_from_the_middle_then_live(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log, opened(store_url) as writer:
            await _append_many(log, 5)
            async with watching(log, 3) as events:
                first = await take(events, 3)
                assert [e for e in first if isinstance(e, LogEntry)] == [
                    LogEntry(v, f"update {v}".encode()) for v in (3, 4, 5)
                ]
                await _append_many(writer, 2)
                assert versions(await take(events, 2)) == [6, 7]

    run(scenario())


def test_watch_ahead_of_the_log_waits_without_skipping(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            await _append_many(log, 1)
            async with watching(log, 4) as events:
                pending = asyncio.ensure_future(take(events, 1))
                await _append_many(log, 4)
                assert versions(await pending) == [4]
                assert versions(await take(events, 1)) == [5]

    run(scenario())


def test_watch_reports_safe_time_after_the_versions_it_covers(store_url: str) -> None:
    async def scenario() -> None:
        async with (
            opened(store_url) as log,
            opened(store_url) as other,
            watching(log, 1) as events,
        ):
            await _append_many(other, 2)
            await other.raise_safe_time(1_000)
            seen: list[WatchEvent] = []
            while SafeTimeAdvanced(1_000) not in seen:
                seen.append(await anext(events))
            # Every version committed before the safe time was raised came first.
            position = seen.index(SafeTimeAdvanced(1_000))
            assert versions(seen[:position]) == [1, 2]
            times = [e.safe_time for e in seen if isinstance(e, SafeTimeAdvanced)]
            assert times == sorted(times)

    run(scenario())


def test_snapshot_compacts_older_versions(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            await _append_many(log, 6)
            assert await log.save_snapshot(4, b"catalog at 4")
            assert await log.earliest_version() == 4
            assert await log.latest_version() == 6
            assert await log.read(4) == [
                LogEntry(4, b"catalog at 4", is_snapshot=True),
                LogEntry(5, b"update 5"),
                LogEntry(6, b"update 6"),
            ]
            for first, last in ((1, None), (3, 3), (1, 6)):
                with pytest.raises(LogCompactedError) as raised:
                    await log.read(first, last)
                assert raised.value.earliest_version == 4
                assert raised.value.code == "VERSION_COMPACTED"

            # Backwards, in place, or past the latest version: refused, nothing changes.
            for version in (3, 4, 7):
                assert await log.save_snapshot(version, b"nope") is False
            assert (await log.read(4))[0] == LogEntry(4, b"catalog at 4", is_snapshot=True)

            assert (await log.append(7, b"update 7", 1_000)).committed
            assert await log.save_snapshot(6, b"catalog at 6")
            assert await log.read(6) == [
                LogEntry(6, b"catalog at 6", is_snapshot=True),
                LogEntry(7, b"update 7"),
            ]

    run(scenario())


def test_watch_from_before_the_snapshot_requires_a_reload(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            await _append_many(log, 6)
            assert await log.save_snapshot(4, b"catalog at 4")
            for start in (1, 3):
                async with watching(log, start) as events:
                    assert await take(events, 1) == [SnapshotRequired(4)]
                    with pytest.raises(StopAsyncIteration):
                        await anext(events)

            # The reload path: read the snapshot, then watch on from the version after it.
            async with watching(log, 4) as events:
                delivered = [e for e in await take(events, 3) if isinstance(e, LogEntry)]
                assert delivered == [
                    LogEntry(4, b"catalog at 4", is_snapshot=True),
                    LogEntry(5, b"update 5"),
                    LogEntry(6, b"update 6"),
                ]

    run(scenario())


def test_a_lagging_watch_never_skips_across_compaction(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log, opened(store_url) as writer:
            await _append_many(writer, 2)
            async with watching(log, 1) as events:
                delivered = versions(await take(events, 2))
                await _append_many(writer, 4)
                assert await writer.save_snapshot(5, b"catalog at 5")
                tail = await take(events, 4)
                if isinstance(tail[-1], SnapshotRequired):
                    # The watch was told, having delivered only versions before the snapshot.
                    assert tail[-1] == SnapshotRequired(5)
                    delivered += versions(tail)
                    assert delivered == list(range(1, len(delivered) + 1))
                    assert len(delivered) < 5
                else:
                    # It read versions 3..6 before the compaction: all of them, in order.
                    assert delivered + versions(tail) == [1, 2, 3, 4, 5, 6]

    run(scenario())


def test_restart_keeps_everything(store_url: str) -> None:
    settings = ClusterSettings(delay_ms=500, max_clock_skew_ms=250)

    async def write() -> None:
        async with opened(store_url) as log:
            await log.init_settings(settings)
            await _append_many(log, 4)
            assert (await log.append(5, b"update 5", 200, ["req-5"])).committed
            assert await log.save_snapshot(3, b"catalog at 3")
            await log.raise_safe_time(777)

    async def reopen() -> None:
        async with opened(store_url) as log:
            assert await log.latest_version() == 5
            assert await log.earliest_version() == 3
            assert await log.safe_time() == 777
            assert await log.request_record("req-5") == RequestRecord(5)
            assert await log.init_settings(settings) == settings
            assert await log.read(3) == [
                LogEntry(3, b"catalog at 3", is_snapshot=True),
                LogEntry(4, b"update 4"),
                LogEntry(5, b"update 5"),
            ]
            assert (await log.append(6, b"update 6", 778)).committed

    run(write())
    run(reopen())


def test_cluster_settings_are_fixed(store_url: str) -> None:
    settings = ClusterSettings(delay_ms=500, max_clock_skew_ms=250)

    async def scenario() -> None:
        async with opened(store_url) as first, opened(store_url) as second:
            assert await first.init_settings(settings) == settings
            assert await second.init_settings(settings) == settings
            for other in (
                ClusterSettings(delay_ms=100, max_clock_skew_ms=250),
                ClusterSettings(delay_ms=500, max_clock_skew_ms=50),
                ClusterSettings(delay_ms=500, max_clock_skew_ms=250, format_version=2),
            ):
                with pytest.raises(SettingsMismatchError) as raised:
                    await second.init_settings(other)
                assert raised.value.code == "SETTINGS_MISMATCH"
            assert await first.init_settings(settings) == settings

    run(scenario())


def test_the_warehouse_is_the_clusters(store_url: str) -> None:
    """The first warehouse named is kept; a cluster created without one takes the next named."""
    bare = ClusterSettings(delay_ms=500, max_clock_skew_ms=250)
    named = dataclasses.replace(bare, warehouse="/data/warehouse")

    async def scenario() -> None:
        async with opened(store_url) as first, opened(store_url) as second:
            assert await first.init_settings(bare) == bare
            assert await second.init_settings(bare) == bare
            assert await second.init_settings(named) == named
            other = dataclasses.replace(bare, warehouse="/elsewhere")
            assert await first.init_settings(other) == named
            assert await first.init_settings(bare) == named
            with pytest.raises(SettingsMismatchError):
                await first.init_settings(dataclasses.replace(other, delay_ms=1))
            assert await second.init_settings(bare) == named

    run(scenario())


def test_close_is_idempotent(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:  # leaving the block closes it a third time
            await _append_many(log, 1)
            await log.close()
            await log.close()
            with pytest.raises(StorageUnavailableError, match="closed"):
                await log.latest_version()

    run(scenario())


def test_keys_are_listed_in_order_at_most_a_limit(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            assert isinstance(log, KvUpdateLog)
            names = [f"{log.keys.subspace('data')}k{i}" for i in range(5)]
            await log.store.txn([], [Put(n, b"v") for n in reversed(names)])
            end = prefix_range_end(log.keys.subspace("data"))
            assert await log.store.keys(names[0], end) == names
            assert await log.store.keys(names[0], end, limit=2) == names[:2]
            assert await log.store.keys(names[3], end, limit=9) == names[3:]

    run(scenario())


THREADS = 4
WINS = 5


def _start_worker(url: str, name: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.integration.updatelog.race_worker", url, name, str(WINS)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    line = proc.stdout.readline() if ready else ""
    if line.strip() != "ready":
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"race worker {name} did not start: {line!r} {err}")
    return proc


def _process_worker(proc: subprocess.Popen[str], ready: threading.Barrier) -> RaceOutcome:
    ready.wait(30)
    try:
        out, err = proc.communicate(input="go\n", timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=10)
        raise
    assert proc.returncode == 0, err
    return RaceOutcome.from_json(out.strip().splitlines()[-1])


def _thread_worker(url: str, name: str, ready: threading.Barrier) -> RaceOutcome:
    async def race() -> RaceOutcome:
        async with opened(url) as log:
            await log.latest_version()
            await asyncio.to_thread(ready.wait, 30)
            return await append_until_won(log, name, WINS)

    return run(race(), timeout=60)


def test_concurrent_appenders_have_one_winner_per_version(store_url: str) -> None:
    """Threads (each with its own loop and log) and another process race on every version."""
    proc = _start_worker(store_url, "process")
    total = THREADS * WINS + WINS
    try:

        async def scenario() -> list[RaceOutcome]:
            # Every racer has its log open before any of them starts, the process included.
            ready = threading.Barrier(THREADS + 1)
            loop = asyncio.get_running_loop()
            async with opened(store_url) as watcher_log, watching(watcher_log, 1) as events:
                watched = asyncio.ensure_future(take(events, total))
                # Own threads, so the racers never starve the watcher of executor threads.
                pool = ThreadPoolExecutor(max_workers=THREADS + 2, thread_name_prefix="racer")
                try:
                    racing = asyncio.gather(
                        *(
                            loop.run_in_executor(
                                pool, _thread_worker, store_url, f"thread-{i}", ready
                            )
                            for i in range(THREADS)
                        ),
                        loop.run_in_executor(pool, _process_worker, proc, ready),
                    )
                    outcomes = await within(racing, 60)
                    delivered = versions(await within(watched, 30))
                finally:
                    ready.abort()
                    pool.shutdown(wait=False, cancel_futures=True)
                    watched.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await watched
                # The watcher saw every version once, in order, including the other process's.
                assert delivered == list(range(1, total + 1))
                owners: dict[int, tuple[str, int]] = {}
                for outcome in outcomes:
                    for version, ts in outcome.won.items():
                        assert version not in owners, f"version {version} won twice"
                        owners[version] = (outcome.worker, ts)
                assert sorted(owners) == list(range(1, total + 1))
                proposals = []
                for entry in await watcher_log.read(1):
                    # The stored payload is the one its claimed winner wrote.
                    written = json.loads(entry.payload)
                    assert (written["worker"], written["ts"]) == owners[entry.version]
                    proposals.append(written["ts"])
                # The safe-time CAS makes proposals strictly increase with the version.
                assert proposals == sorted(set(proposals))
                assert await watcher_log.safe_time() == proposals[-1]
                return outcomes

        outcomes = run(scenario(), timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    assert {o.worker for o in outcomes} == {"process", *(f"thread-{i}" for i in range(THREADS))}
    assert all(len(o.won) == WINS for o in outcomes)

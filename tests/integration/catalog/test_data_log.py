"""The data-commit log on both stores (``store_url``): numbered per table, under safe time."""

from __future__ import annotations

import asyncio

from catalog.data.log import DataCommitLog
from tests.integration.updatelog.support import opened, run
from updatelog import AppendConflict, AppendResult, LogEntry


def test_commits_are_numbered_per_table_under_the_safe_time_rule(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            commits = DataCommitLog(log)
            assert await commits.read(7) == []
            first = await commits.commit(7, 1, b"files a", 100, "job-1")
            assert first == AppendResult(True, 1, 100)
            assert await log.safe_time() == 100
            # Another table numbers its own commits, but shares the safe time.
            assert (await commits.commit(8, 1, b"files b", 101, "job-2")).committed
            late = await commits.commit(7, 2, b"too late", 101, "job-3")
            assert (late.conflict, late.safe_time) == (AppendConflict.SAFE_TIME, 101)
            stale = await commits.commit(7, 1, b"files c", 200, "job-3")
            assert (stale.conflict, stale.version) == (AppendConflict.VERSION, 1)
            again = await commits.commit(7, 2, b"files a", 200, "job-1")
            assert (again.conflict, again.request_version) == (AppendConflict.REQUEST, 1)
            assert (await commits.commit(7, 2, b"files c", 200, "job-3")).committed
            assert await commits.read(7) == [LogEntry(1, b"files a"), LogEntry(2, b"files c")]
            assert await commits.read(8) == [LogEntry(1, b"files b")]
            # A catalog append must now propose above the data commit's timestamp.
            assert (await log.append(1, b"one", 150)).conflict is AppendConflict.SAFE_TIME
            assert await log.latest_version() == 0

    run(scenario())


def test_tables_with_commits_are_listed_and_dropped_whole(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            commits = DataCommitLog(log)
            assert await commits.tables() == []
            for table_id, ts in ((12, 10), (3, 11), (12, 12)):
                seq = len(await commits.read(table_id)) + 1
                assert (await commits.commit(table_id, seq, b"f", ts, f"r{ts}")).committed
            assert await commits.tables() == [3, 12]
            await commits.drop(12)
            assert await commits.tables() == [3]
            assert await commits.read(12) == []
            assert await commits.read(3) == [LogEntry(1, b"f")]
            # A dropped table's numbering starts over (its id is never reused by the catalog).
            assert (await commits.commit(12, 1, b"g", 13, "r13")).committed

    run(scenario())


def test_request_records_of_data_commits_expire_and_are_collected(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            log.request_ttl_ms = 300
            commits = DataCommitLog(log)
            assert (await commits.commit(5, 1, b"a", 10, "job")).committed
            again = await commits.commit(5, 2, b"a", 20, "job")
            assert (again.conflict, again.request_version) == (AppendConflict.REQUEST, 1)
            await asyncio.sleep(0.4)
            # Past the window the id names no commit: the retry is a new commit.
            assert (await commits.commit(5, 2, b"a again", 20, "job")).committed
            replaced = await commits.commit(5, 3, b"a", 30, "job")
            assert (replaced.conflict, replaced.request_version) == (AppendConflict.REQUEST, 2)
            assert (await commits.commit(5, 3, b"b", 30, "other")).committed
            await asyncio.sleep(0.4)
            assert await log.collect_garbage() == 2  # type: ignore[attr-defined]
            keys = await log.store.keys(
                commits.keys.request_prefix, commits.keys.request_prefix + "~"
            )
            assert keys == []
            assert await commits.read(5) == [
                LogEntry(1, b"a"),
                LogEntry(2, b"a again"),
                LogEntry(3, b"b"),
            ]

    run(scenario())

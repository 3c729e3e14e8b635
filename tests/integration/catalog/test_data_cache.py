"""A node's data commits per table, read from the log incrementally and forgotten by age."""

from __future__ import annotations

import asyncio

import pytest

from catalog import CatalogError, ErrorCode
from catalog.data.cache import DataCommitCache
from catalog.data.files import (
    DataCommit,
    DataFile,
    decode_data_commit,
    encode_data_commit,
)
from catalog.data.log import DataCommitLog
from catalog.data.merge import merged
from tests.integration.updatelog.support import opened, run
from updatelog.log import LogEntry, UpdateLog


class _CountingLog(DataCommitLog):
    """The real data commit log, noting from which commit on each read asked."""

    def __init__(self, log: UpdateLog) -> None:
        super().__init__(log)
        self.reads: list[tuple[int, int]] = []

    async def read(self, table_id: int, after: int = 0) -> list[LogEntry]:
        self.reads.append((table_id, after))
        return await super().read(table_id, after)


def _commit(table_id: int, seq: int, ts: int, files: int = 1) -> DataCommit:
    return DataCommit(
        table_id=table_id,
        seq=seq,
        commit_ts=ts,
        schema_version=1,
        mode="append",
        files=tuple(
            DataFile(path=f"f{seq}-{i}.parquet", partition=0, rows=1, size=10) for i in range(files)
        ),
        request_id=f"r{table_id}-{seq}",
    )


async def _write(log: DataCommitLog, commit: DataCommit) -> None:
    payload = encode_data_commit(commit)
    result = await log.commit(
        commit.table_id, commit.seq, payload, commit.commit_ts, commit.request_id
    )
    assert result.committed


def test_a_read_asks_the_log_only_for_commits_after_those_it_holds(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as updates:
            log = _CountingLog(updates)
            cache = DataCommitCache(log)
            for seq in (1, 2, 3):
                await _write(log, _commit(5, seq, 100 + seq))
            assert [c.seq for c in await cache.recorded(5)] == [1, 2, 3]
            await _write(log, _commit(5, 4, 200))
            assert [c.seq for c in await cache.recorded(5)] == [1, 2, 3, 4]
            assert [c.seq for c in await cache.recorded(5)] == [1, 2, 3, 4]
            assert log.reads == [(5, 0), (5, 3), (5, 4)]
            assert await log.latest(5) == 4
            assert await log.latest(6) == 0

    run(scenario())


def test_commits_up_to_a_timestamp_are_the_prefix_at_or_before_it(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as updates:
            log = DataCommitLog(updates)
            cache = DataCommitCache(log)
            for seq, ts in ((1, 10), (2, 20), (3, 30)):
                await _write(log, _commit(9, seq, ts))
            assert [c.seq for c in await cache.up_to(9, 5)] == []
            assert [c.seq for c in await cache.up_to(9, 20)] == [1, 2]
            assert [c.seq for c in await cache.up_to(9, 29)] == [1, 2]
            assert [c.seq for c in await cache.up_to(9, 10**6)] == [1, 2, 3]

    run(scenario())


def test_tables_read_least_recently_are_forgotten_past_the_budget(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as updates:
            log = _CountingLog(updates)
            cache = DataCommitCache(log, max_weight=5)
            await _write(log, _commit(1, 1, 10, files=2))
            await _write(log, _commit(2, 1, 11, files=2))
            await cache.recorded(1)
            await cache.recorded(2)  # 2 x (1 + 2 files) > 5: table 1 goes, table 2 stays
            await cache.recorded(2)
            again = await cache.recorded(1)  # read whole again, and now table 2 goes
            assert [len(c.files) for c in again] == [2]
            assert log.reads == [(1, 0), (2, 0), (2, 1), (1, 0)]
            # A table larger than the budget on its own is still held while it is read.
            await _write(log, _commit(1, 2, 12, files=5))
            assert [c.seq for c in await cache.recorded(1)] == [1, 2]
            assert log.reads[-1] == (1, 1)
            # Tables without commits weigh nothing and are not kept: any id can be asked for.
            for table_id in range(100, 200):
                assert await cache.recorded(table_id) == []
            assert [c.seq for c in await cache.recorded(1)] == [1, 2]
            assert log.reads[-1] == (1, 2), "table 1 was kept"
            assert await cache.recorded(150) == [] and log.reads[-1] == (150, 0)

    run(scenario())


def test_reads_of_one_table_at_once_each_get_every_commit_once(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as updates:
            log = _CountingLog(updates)
            cache = DataCommitCache(log)
            for seq in (1, 2, 3):
                await _write(log, _commit(4, seq, 10 * seq, files=2))
            reads = await asyncio.gather(*(cache.recorded(4) for _ in range(3)))
            assert [[c.seq for c in r] for r in reads] == [[1, 2, 3]] * 3
            await _write(log, _commit(4, 4, 40, files=2))
            assert [c.seq for c in await cache.recorded(4)] == [1, 2, 3, 4]
            assert log.reads[-1] == (4, 3)

    run(scenario())


def test_a_merged_commit_replaces_what_a_cache_held_before_it(store_url: str) -> None:
    """Caches that held one, two or all of the commits merged: the first two now hold the
    merged one alone (as a cache that never read the table), the third keeps its own, which
    read the same; a concurrent merge of the same commits writes nothing."""

    async def scenario() -> None:
        async with opened(store_url) as updates:
            log = DataCommitLog(updates)
            caches = [DataCommitCache(log) for _ in range(3)]
            for seq in (1, 2, 3):
                await _write(log, _commit(5, seq, 100 + seq))
                await caches[seq - 1].recorded(5)
            read = await log.read(5)
            base = merged([decode_data_commit(entry.payload) for entry in read])
            assert await log.merge(5, 3, read[-1].payload, encode_data_commit(base))
            assert not await log.merge(5, 3, read[-1].payload, encode_data_commit(base))
            await _write(log, _commit(5, 4, 200))
            for cache in (*caches[:2], DataCommitCache(log)):
                assert await cache.recorded(5) == [base, _commit(5, 4, 200)]
            assert [c.seq for c in await caches[2].recorded(5)] == [1, 2, 3, 4]
            assert [f.path for c in await caches[2].up_to(5, 200) for f in c.files] == [
                f.path for f in base.files
            ] + ["f4-0.parquet"]
            # Before the merged commit only a cache that still holds the originals can answer.
            assert [c.seq for c in await caches[2].up_to(5, 102)] == [1, 2]
            with pytest.raises(CatalogError) as merged_away:
                await caches[0].up_to(5, 102)
            assert merged_away.value.code is ErrorCode.VERSION_COMPACTED

    run(scenario())

"""The SQLite store's revision: read off the revision index, never moving back.

A commit that only puts writes no counter of its own: the store's revision is its newest row's
``mod_rev``, unless a deletion removed that row, in which case ``meta`` keeps it. These tests
delete the newest row in each way the store can (a ``Delete``, a range delete, an expired
lease's key removed by the next write) and check that revisions and watches go on from there.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from updatelog import SqliteUpdateLog
from updatelog.keys import KeyLayout, prefix_range_end
from updatelog.kv import Delete, Get, Put, WatchChanges, equals
from updatelog.kv_sqlite import SCHEMA_VERSION, SqliteKvStore

T = TypeVar("T")
KEYS = KeyLayout()


def run(fn: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(fn(), 20)

    return asyncio.run(bounded())


@contextlib.asynccontextmanager
async def _store(db: Path) -> AsyncIterator[SqliteKvStore]:
    log = SqliteUpdateLog(db)
    try:
        assert isinstance(log.store, SqliteKvStore)
        yield log.store
    finally:
        await log.close()


def _meta_revision(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT value FROM meta WHERE name = 'revision'").fetchone()[0])


async def _revision(store: SqliteKvStore) -> int:
    return (await store.txn([], [Get(KEYS.version)])).revision


async def _first_change(store: SqliteKvStore, from_revision: int) -> WatchChanges:
    watch = store.watch(
        KEYS.subspace("nodes"), prefix_range_end(KEYS.subspace("nodes")), from_revision
    )
    async for item in watch:
        if isinstance(item, WatchChanges) and item.changes:
            return item
    raise AssertionError("the watch ended")


def test_a_put_writes_no_counter_and_a_delete_of_the_newest_row_keeps_its_revision(
    tmp_path: Path,
) -> None:
    db = tmp_path / "c.db"

    async def scenario() -> None:
        async with _store(db) as store:
            start = await _revision(store)
            put_a = await store.txn([], [Put(KEYS.subspace("nodes") + "a", b"a")])
            put_b = await store.txn([], [Put(KEYS.subspace("nodes") + "b", b"b")])
            assert (put_a.revision, put_b.revision) == (start + 1, start + 2)
            assert _meta_revision(db) == 1  # puts alone never touch the counter row
            gone = await store.txn([], [Delete(KEYS.subspace("nodes") + "b")])
            assert gone.revision == start + 3 == await _revision(store)
            ranged = await store.txn(
                [], [Delete(KEYS.subspace("nodes"), prefix_range_end(KEYS.subspace("nodes")))]
            )
            assert ranged.revision == start + 4 == await _revision(store)
            again = await store.txn([], [Put(KEYS.subspace("nodes") + "c", b"c")])
            assert again.revision == start + 5
            # A watch from after the deletions sees the new key at its own revision.
            seen = await _first_change(store, start + 5)
            assert [(k, v, r) for k, v, r in seen.changes] == [
                (KEYS.subspace("nodes") + "c", b"c", start + 5)
            ]

    run(scenario)


def test_an_expired_lease_removed_by_a_write_keeps_the_revision_of_its_key(
    tmp_path: Path,
) -> None:
    db = tmp_path / "c.db"

    async def scenario() -> None:
        async with _store(db) as store:
            lease = await store.grant_lease(60)
            newest = (
                await store.txn([], [Put(KEYS.subspace("nodes") + "n1", b"info", lease)])
            ).revision
            with sqlite3.connect(db) as conn:  # the lease runs out
                conn.execute("UPDATE kv_lease SET expires_ms = 0 WHERE id = ?", (lease,))
            # A write whose compare fails changes no key, but removes the expired one: the
            # revision stays, it does not fall back to the row before.
            failed = await store.txn(
                [equals(KEYS.version, b"never stored")],
                [Put(KEYS.subspace("nodes") + "x", b"x")],
                [Get(KEYS.version)],
            )
            assert not failed.succeeded and failed.revision == newest
            with sqlite3.connect(db) as conn:
                assert conn.execute("SELECT count(*) FROM kv").fetchone()[0] == 0
            assert await _revision(store) == newest
            assert (
                await store.txn([], [Put(KEYS.subspace("nodes") + "n2", b"i")])
            ).revision == newest + 1

    run(scenario)


def test_a_file_that_counted_every_commit_opens_at_its_revision(tmp_path: Path) -> None:
    db = tmp_path / "c.db"

    async def write_some() -> None:
        log = SqliteUpdateLog(db)
        try:
            for i in range(3):
                await log.store.txn([], [Put(KEYS.subspace("nodes") + f"n{i}", b"i")])
        finally:
            await log.close()

    run(write_some)
    # As layout 2 left a file: the counter moved on every commit, past the newest row (the
    # last commits deleted what they wrote).
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = 40 WHERE name = 'revision'")
        conn.execute("PRAGMA user_version = 2")

    async def reopen() -> None:
        log = SqliteUpdateLog(db)
        try:
            assert (
                await log.store.txn([], [Put(KEYS.subspace("nodes") + "n9", b"i")])
            ).revision == 41
        finally:
            await log.close()

    run(reopen)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3

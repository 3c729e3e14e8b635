"""Short SQLite transactions on the caller's thread, and what still goes to the store's thread."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from updatelog import SqliteUpdateLog
from updatelog.kv import Delete, Put
from updatelog.kv_sqlite import SqliteKvStore
from updatelog.sqlite_connection import SqliteConnection
from updatelog.sqlite_direct import DECLINED, DirectConnection


def _ready_file(path: Path) -> str:
    SqliteUpdateLog(path)  # creates the layout in WAL mode
    return str(path)


def _thread_of_run(db: sqlite3.Connection) -> str:
    return threading.current_thread().name


def test_a_small_transaction_runs_on_the_callers_thread(tmp_path: Path) -> None:
    direct = DirectConnection(_ready_file(tmp_path / "d.db"))
    try:
        assert direct.run(_thread_of_run, write=True) == threading.current_thread().name
    finally:
        direct.close()
    assert direct.run(_thread_of_run, write=False) is DECLINED  # closed


def test_a_large_write_is_declined(tmp_path: Path) -> None:
    direct = DirectConnection(_ready_file(tmp_path / "d.db"), max_bytes=100)
    try:
        assert direct.run(_thread_of_run, write=True, size=101) is DECLINED
        assert direct.run(_thread_of_run, write=True, size=100) != DECLINED
    finally:
        direct.close()


def test_a_transaction_that_would_wait_for_a_lock_is_declined_and_rolled_back(
    tmp_path: Path,
) -> None:
    path = _ready_file(tmp_path / "d.db")
    direct = DirectConnection(path)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        assert direct.run(_thread_of_run, write=True) is DECLINED
        assert time.monotonic() - started < 0.5  # declined at once, not after a busy wait
        holder.execute("ROLLBACK")
        assert direct.run(_thread_of_run, write=True) != DECLINED
    finally:
        holder.close()
        direct.close()


def test_a_slow_commit_sends_the_next_transactions_to_the_thread(tmp_path: Path) -> None:
    direct = DirectConnection(_ready_file(tmp_path / "d.db"), slow_s=0.01, pause_s=0.3)

    def slow(db: sqlite3.Connection) -> str:
        time.sleep(0.02)
        return "done"

    try:
        assert direct.run(slow, write=True) == "done"
        assert direct.run(_thread_of_run, write=True) is DECLINED
        time.sleep(0.35)
        assert direct.run(_thread_of_run, write=True) != DECLINED
    finally:
        direct.close()


@pytest.mark.parametrize("large", ["a large value", "a range deletion"])
def test_a_large_write_sends_small_transactions_to_the_thread_until_a_while_after(
    tmp_path: Path, large: str
) -> None:
    """A range deletion may free any amount (a snapshot's older updates): it is large too."""

    async def scenario() -> None:
        store = SqliteKvStore(tmp_path / "c.db")
        direct = store._direct  # what the store's hot path would use
        direct.pause_s = 0.3
        try:
            assert direct.run(_thread_of_run, write=True) != DECLINED
            if large == "a range deletion":
                await store.txn([], [Delete("catalog.update.", "catalog.update/")])
            else:
                await store.txn([], [Put("chunk", os.urandom(direct.max_bytes + 1))])
            assert direct.run(_thread_of_run, write=True) is DECLINED  # the disk is busy
            await asyncio.sleep(0.35)
            assert direct.run(_thread_of_run, write=True) != DECLINED
        finally:
            await store.close()

    asyncio.run(scenario())


def test_an_urgent_call_goes_ahead_of_queued_ones(tmp_path: Path) -> None:
    conn = SqliteConnection(_ready_file(tmp_path / "d.db"), 5.0)
    order: list[str] = []
    release = threading.Event()

    def blocking(db: sqlite3.Connection) -> None:
        release.wait(5)

    def note(name: str) -> Callable[[sqlite3.Connection], None]:
        return lambda db: order.append(name)

    async def scenario() -> None:
        running = asyncio.create_task(conn.call(blocking))
        await asyncio.sleep(0.05)  # the thread is inside ``blocking``
        queued = [asyncio.create_task(conn.call(note(f"large {i}"))) for i in range(3)]
        await asyncio.sleep(0.01)
        urgent = asyncio.create_task(conn.call(note("small"), urgent=True))
        await asyncio.sleep(0.01)
        release.set()
        await asyncio.gather(running, *queued, urgent)

    try:
        asyncio.run(scenario())
    finally:
        conn.close().result(5)
    assert order == ["small", "large 0", "large 1", "large 2"]


def test_a_locked_file_does_not_hold_the_event_loop(tmp_path: Path) -> None:
    db = tmp_path / "c.db"

    async def scenario() -> None:
        log = SqliteUpdateLog(db, busy_timeout_s=5)
        holder = sqlite3.connect(db, isolation_level=None)
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticking = asyncio.create_task(ticker())
        try:
            holder.execute("BEGIN IMMEDIATE")
            append = asyncio.create_task(log.append(1, b"one", 10))
            await asyncio.sleep(0.3)
            assert not append.done()  # waiting for the lock on the store's thread...
            assert ticks >= 10  # ...while the loop goes on
            holder.execute("COMMIT")
            assert (await asyncio.wait_for(append, 5)).committed
        finally:
            ticking.cancel()
            holder.close()
            await log.close()

    asyncio.run(scenario())


def test_the_write_ahead_log_is_checkpointed_and_stays_bounded(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    payload = os.urandom(1024)

    async def scenario() -> None:
        log = SqliteUpdateLog(db)
        try:
            for version in range(1, 1501):
                assert (await log.append(version, payload, version)).committed
            # Left unchecked, 1,500 appends of ~7 pages each would make a ~40 MB log.
            assert os.path.getsize(f"{db}-wal") < 8 * 1024 * 1024
        finally:
            await log.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("write", [True, False])
def test_errors_inside_a_direct_transaction_roll_it_back(tmp_path: Path, write: bool) -> None:
    path = _ready_file(tmp_path / "d.db")
    direct = DirectConnection(path)

    def failing(db: sqlite3.Connection) -> None:
        db.execute("UPDATE meta SET value = value + 100 WHERE name = 'revision'")
        raise ValueError("the body failed")

    try:
        with pytest.raises(ValueError, match="the body failed"):
            direct.run(failing, write=write)
        with sqlite3.connect(path) as check:
            (revision,) = check.execute("SELECT value FROM meta WHERE name = 'revision'").fetchone()
        assert revision == 1
    finally:
        direct.close()

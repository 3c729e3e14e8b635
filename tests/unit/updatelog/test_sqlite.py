"""SQLite-specific behaviour: the file format, bounded locks, corruption, notifications.

The shared behaviour suite (tests/integration/updatelog) covers the protocol itself; these
tests cover what only the embedded backend has: a file that other programs may touch.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from tests.integration.updatelog.support import watching
from updatelog import (
    FormatError,
    LogEntry,
    RequestRecord,
    SafeTimeAdvanced,
    SqliteUpdateLog,
    StorageUnavailableError,
    WatchEvent,
    envelope,
    requests,
)
from updatelog.envelope import Kind
from updatelog.keys import KeyLayout, prefix_range_end
from updatelog.kv import LeaseExpiredError, Put, Read
from updatelog.kv_sqlite import APPLICATION_ID, CHANGES_SINCE, SCHEMA_VERSION

T = TypeVar("T")


def run(fn: Callable[[], Awaitable[T]], timeout: float = 20) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(fn(), timeout)

    return asyncio.run(bounded())


async def next_entry(events: AsyncIterator[WatchEvent]) -> LogEntry:
    while True:
        event = await anext(events)
        if isinstance(event, LogEntry):
            return event


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None, timeout=5)


def test_the_file_holds_exactly_the_layout_keys(tmp_path: Path) -> None:
    db = tmp_path / "c.db"

    async def scenario() -> None:
        log = SqliteUpdateLog(db, prefix="tenant")
        try:
            assert (await log.append(1, b"one", 10, ["r"])).committed
            await log.init_settings(envelope.decode_settings(_settings_value()))
        finally:
            await log.close()

    run(scenario)
    keys = KeyLayout("tenant")
    with raw(db) as conn:
        rows = dict(conn.execute("SELECT key, value FROM kv"))
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert set(rows) == {
        keys.version,
        keys.safe_time,
        keys.update(1),
        keys.request("r"),
        keys.settings,
    }
    assert envelope.decode_int(rows[keys.version], Kind.VERSION) == 1
    assert envelope.decode_int(rows[keys.safe_time], Kind.SAFE_TIME) == 10
    assert requests.decode_record(rows[keys.request("r")]).version == 1
    assert envelope.decode_as(rows[keys.update(1)], Kind.UPDATE).body == b"one"


def _settings_value() -> bytes:
    from updatelog import ClusterSettings

    return envelope.encode_settings(ClusterSettings(delay_ms=500, max_clock_skew_ms=500))


def test_prefixes_share_a_file_independently(tmp_path: Path) -> None:
    async def scenario() -> None:
        a = SqliteUpdateLog(tmp_path / "c.db", prefix="a")
        b = SqliteUpdateLog(tmp_path / "c.db", prefix="b")
        try:
            assert (await a.append(1, b"a1", 10)).committed
            assert (await a.append(2, b"a2", 11)).committed
            assert (await b.append(1, b"b1", 5)).committed
            assert await a.read(1) == [LogEntry(1, b"a1"), LogEntry(2, b"a2")]
            assert await b.read(1) == [LogEntry(1, b"b1")]
            assert await a.save_snapshot(2, b"snap")
            assert await b.earliest_version() == 1
        finally:
            await a.close()
            await b.close()

    run(scenario)


def test_a_held_write_lock_is_a_bounded_storage_error(tmp_path: Path) -> None:
    db = tmp_path / "c.db"

    async def scenario() -> None:
        log = SqliteUpdateLog(db, busy_timeout_s=0.2)
        holder = raw(db)
        try:
            holder.execute("BEGIN IMMEDIATE")
            started = time.monotonic()
            with pytest.raises(StorageUnavailableError, match="locked") as raised:
                await log.append(1, b"one", 10)
            assert 0.15 <= time.monotonic() - started < 5
            assert raised.value.code == "STORAGE_UNAVAILABLE"
            # Readers are not blocked by a writer in WAL mode.
            assert await log.latest_version() == 0
            holder.execute("ROLLBACK")
            assert (await log.append(1, b"one", 10)).committed
        finally:
            holder.close()
            await log.close()

    run(scenario)


def test_opening_a_file_locked_exclusively_is_a_bounded_storage_error(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    holder = raw(db)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("CREATE TABLE hold (x)")
        started = time.monotonic()
        with pytest.raises(StorageUnavailableError):
            SqliteUpdateLog(db, busy_timeout_s=0.2)
        assert time.monotonic() - started < 5
    finally:
        holder.close()


def test_a_foreign_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    with raw(db) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
    with pytest.raises(FormatError, match="not a catalog store"):
        SqliteUpdateLog(db)


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "notes.db"
    db.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(FormatError, match="not a readable database"):
        SqliteUpdateLog(db)


def test_a_store_from_a_newer_release_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    run(lambda: SqliteUpdateLog(db).close())
    with raw(db) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(FormatError, match="upgrade"):
        SqliteUpdateLog(db)


def test_a_missing_directory_is_a_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageUnavailableError):
        SqliteUpdateLog(tmp_path / "missing" / "c.db")


@pytest.mark.parametrize(
    "stored",
    [
        b"garbage",
        envelope.encode(Kind.SETTINGS, b"\x80"),
        b"UL\x02\x01payload\x00\x00\x00\x00",
    ],
    ids=["garbage", "wrong-kind", "newer-format"],
)
def test_a_corrupted_update_is_a_format_error_and_never_delivered(
    tmp_path: Path, stored: bytes
) -> None:
    db = tmp_path / "c.db"

    async def scenario() -> None:
        log = SqliteUpdateLog(db)
        try:
            for v in (1, 2, 3):
                assert (await log.append(v, b"ok", 10 + v)).committed
            with raw(db) as conn:
                conn.execute("UPDATE kv SET value = ? WHERE key = ?", (stored, log.keys.update(2)))
            with pytest.raises(FormatError):
                await log.read(1)
            assert await log.read(3) == [LogEntry(3, b"ok")]
            async with watching(log, 1) as events:
                with pytest.raises(FormatError):
                    while True:
                        event = await anext(events)
                        assert not (isinstance(event, LogEntry) and event.version >= 2)
        finally:
            await log.close()

    run(scenario)


def test_a_missing_version_is_a_format_error_not_a_skip(tmp_path: Path) -> None:
    db = tmp_path / "c.db"

    async def scenario() -> None:
        log = SqliteUpdateLog(db)
        try:
            for v in (1, 2, 3):
                assert (await log.append(v, b"ok", 10 + v)).committed
            with raw(db) as conn:
                conn.execute("DELETE FROM kv WHERE key = ?", (log.keys.update(2),))
            with pytest.raises(FormatError, match="version 2 is missing"):
                await log.read(1)
        finally:
            await log.close()

    run(scenario)


def test_same_process_watchers_are_woken_without_polling(tmp_path: Path) -> None:
    db = tmp_path / "c.db"

    async def scenario() -> None:
        # A poll interval longer than the test's timeout: only the in-process bus can deliver.
        watcher = SqliteUpdateLog(db, poll_interval_s=600)
        writer = SqliteUpdateLog(db)
        try:
            async with watching(watcher, 1) as events:
                first = asyncio.ensure_future(next_entry(events))
                await asyncio.sleep(0.05)
                assert (await writer.append(1, b"one", 10)).committed
                assert await asyncio.wait_for(first, 5) == LogEntry(1, b"one")
                await writer.raise_safe_time(99)
                while (event := await asyncio.wait_for(anext(events), 5)) != SafeTimeAdvanced(99):
                    assert isinstance(event, SafeTimeAdvanced)
        finally:
            await writer.close()
            await watcher.close()

    run(scenario)


def test_watches_read_changes_through_the_revision_index(tmp_path: Path) -> None:
    """A watch's read costs what changed, not the size of the log: it searches the revision
    index rather than walking every key under the prefix."""
    db = tmp_path / "c.db"

    async def scenario() -> None:
        log = SqliteUpdateLog(db)
        try:
            for version in range(1, 301):
                assert (await log.append(version, b"x" * 2000, version)).committed
        finally:
            await log.close()

    run(scenario)
    with raw(db) as conn:
        plan = conn.execute(f"EXPLAIN QUERY PLAN {CHANGES_SINCE}", (300, "", "~", 10)).fetchall()
    assert [row[3] for row in plan] == ["SEARCH kv USING INDEX kv_by_revision (mod_rev>?)"]


def test_commits_by_other_connections_are_found_by_polling(tmp_path: Path) -> None:
    db = tmp_path / "c.db"

    async def scenario() -> None:
        log = SqliteUpdateLog(db, poll_interval_s=0.01)
        keys = log.keys
        try:
            async with watching(log, 1) as events:
                pending = asyncio.ensure_future(next_entry(events))
                await asyncio.sleep(0.05)
                # Another program's commit: the in-process bus never hears of it.
                with raw(db) as conn:
                    conn.executemany(
                        "INSERT INTO kv (key, value) VALUES (?, ?)",
                        [
                            (keys.update(1), envelope.encode(Kind.UPDATE, b"external")),
                            (keys.version, envelope.encode_int(Kind.VERSION, 1)),
                            (keys.safe_time, envelope.encode_int(Kind.SAFE_TIME, 7)),
                        ],
                    )
                assert await asyncio.wait_for(pending, 5) == LogEntry(1, b"external")
        finally:
            await log.close()

    run(scenario)


def test_close_ends_watches_and_refuses_further_calls(tmp_path: Path) -> None:
    async def scenario() -> None:
        log = SqliteUpdateLog(tmp_path / "c.db")
        events = log.watch(1)
        pending = asyncio.ensure_future(anext(events))
        await asyncio.sleep(0.05)
        await log.close()
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(pending, 5)
        await log.close()
        with pytest.raises(StorageUnavailableError, match="closed"):
            await log.latest_version()
        with pytest.raises(StorageUnavailableError, match="closed"):
            await anext(log.watch(1))

    run(scenario)


def test_concurrent_appends_on_one_instance_have_one_winner_per_version(tmp_path: Path) -> None:
    async def scenario() -> None:
        log = SqliteUpdateLog(tmp_path / "c.db")
        try:

            async def writer(name: str) -> list[int]:
                won: list[int] = []
                version, ts = 1, 1
                while len(won) < 5:
                    result = await log.append(version, name.encode(), ts)
                    if result.committed:
                        won.append(version)
                    version, ts = result.version + 1, result.safe_time + 1
                return won

            results = await asyncio.gather(*(writer(f"w{i}") for i in range(8)))
            everything = sorted(v for won in results for v in won)
            assert everything == list(range(1, 41))
            entries = await log.read(1)
            for name, won in zip((f"w{i}" for i in range(8)), results, strict=True):
                assert all(entries[v - 1].payload == name.encode() for v in won)
        finally:
            await log.close()

    run(scenario)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda log: log.append(0, b"x", 1), "version"),
        (lambda log: log.append(1, b"x", 0), "proposal_ts"),
        (lambda log: log.append(1, b"x", 2**64), "proposal_ts"),
        (lambda log: log.append(1, b"x", 1, [""]), "request id"),
        (lambda log: log.read(0), "from_version"),
        (lambda log: log.raise_safe_time(-1), "ts"),
        (lambda log: log.save_snapshot(0, b"x"), "version"),
    ],
)
def test_out_of_range_arguments_are_value_errors(
    tmp_path: Path, call: Callable[[SqliteUpdateLog], Awaitable[object]], message: str
) -> None:
    async def scenario() -> None:
        log = SqliteUpdateLog(tmp_path / "c.db")
        try:
            with pytest.raises(ValueError, match=message):
                await call(log)
        finally:
            await log.close()

    run(scenario)


def test_leased_keys_expire_by_time_and_are_removed_by_the_next_write(
    tmp_path: Path,
) -> None:
    db = tmp_path / "c.db"
    keys = KeyLayout()

    async def scenario() -> None:
        log = SqliteUpdateLog(db)
        try:
            store = log.store
            short, long = await store.grant_lease(1), await store.grant_lease(60)
            await store.txn(
                [],
                [
                    Put(keys.subspace("nodes") + "old", b"old", short),
                    Put(keys.subspace("nodes") + "live", b"live", long),
                ],
            )
            await asyncio.sleep(1.1)
            # Expired: absent from reads at once, still in the file until a write.
            nodes = keys.subspace("nodes")
            found = await store.range(nodes, prefix_range_end(nodes))
            assert [kv.key for kv in found.kvs] == [keys.subspace("nodes") + "live"]
            with raw(db) as conn:
                assert conn.execute("SELECT count(*) FROM kv_lease").fetchone()[0] == 2
            assert await store.keep_alive(long) and not await store.keep_alive(short)
            await store.txn([], [Put(keys.subspace("nodes") + "live", b"again", long)])
            with raw(db) as conn:
                assert {k for (k,) in conn.execute("SELECT key FROM kv")} == {
                    keys.subspace("nodes") + "live"
                }
                assert conn.execute("SELECT count(*) FROM kv_lease").fetchone()[0] == 1
            with pytest.raises(LeaseExpiredError):
                await store.txn([], [Put(keys.subspace("nodes") + "old", b"again", short)])
        finally:
            await log.close()

    run(scenario)


def test_a_file_of_the_first_layout_is_upgraded_in_place(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    keys = KeyLayout()
    # The first layout, as its release wrote it: no revisions, registry expiry in ``lease``.
    with raw(db) as conn:
        conn.execute("CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID")
        conn.execute(
            "CREATE TABLE lease (key TEXT PRIMARY KEY, expires_ms INTEGER NOT NULL) WITHOUT ROWID"
        )
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("PRAGMA user_version = 1")
        conn.executemany(
            "INSERT INTO kv VALUES (?, ?)",
            [
                (keys.version, envelope.encode_int(Kind.VERSION, 1)),
                (keys.safe_time, envelope.encode_int(Kind.SAFE_TIME, 10)),
                (keys.update(1), envelope.encode(Kind.UPDATE, b"one")),
                (keys.request("r"), envelope.encode_int(Kind.REQUEST, 1)),
                (keys.subspace("nodes") + "gone", envelope.encode(Kind.NODE, b"info")),
            ],
        )
        conn.execute("INSERT INTO lease VALUES (?, ?)", (keys.subspace("nodes") + "gone", 1))
        conn.commit()

    async def reopen() -> None:
        log = SqliteUpdateLog(db)
        try:
            assert await log.latest_version() == 1
            assert await log.read(1) == [LogEntry(1, b"one")]
            assert await log.request_record("r") == RequestRecord(1)
            nodes = (keys.subspace("nodes"), prefix_range_end(keys.subspace("nodes")))
            assert (await log.store.range(*nodes)).kvs == []
            assert (await log.append(2, b"two", 20)).committed
            lease = await log.store.grant_lease(60)
            await log.store.txn([], [Put(keys.subspace("nodes") + "n1", b"info", lease)])
            assert [kv.value for kv in (await log.store.range(*nodes)).kvs] == [b"info"]
        finally:
            await log.close()

    run(reopen)


def test_a_snapshot_of_the_first_layout_still_loads_and_is_replaced(tmp_path: Path) -> None:
    """Releases before chunked values kept the snapshot at its update key; it still reads."""
    keys = KeyLayout()

    async def scenario() -> None:
        log = SqliteUpdateLog(tmp_path / "c.db")
        try:
            await log.store.txn(
                [],
                [
                    Put(keys.version, envelope.encode_int(Kind.VERSION, 4)),
                    Put(keys.snapshot_version, envelope.encode_int(Kind.VERSION, 3)),
                    Put(keys.safe_time, envelope.encode_int(Kind.SAFE_TIME, 40)),
                    Put(keys.update(3), envelope.encode(Kind.SNAPSHOT, b"catalog at 3")),
                    Put(keys.update(4), envelope.encode(Kind.UPDATE, b"update 4")),
                ],
            )
            expected = [LogEntry(3, b"catalog at 3", is_snapshot=True), LogEntry(4, b"update 4")]
            assert await log.read(3) == expected
            async with watching(log, 3) as events:
                got = [await anext(events), await anext(events)]
                assert got == expected
            assert await log.save_snapshot(4, b"catalog at 4")
            assert await log.read(4) == [LogEntry(4, b"catalog at 4", is_snapshot=True)]
            assert await log.store.range(*keys.update_range(0, 3)) == Read([])
        finally:
            await log.close()

    run(scenario)


def test_deleting_the_updates_a_snapshot_replaced_does_not_write_them_again(
    tmp_path: Path,
) -> None:
    """Freed pages are not zeroed one by one (some builds of SQLite do so by default)."""
    db = tmp_path / "c.db"
    big = bytes(range(256)) * 800  # 200 KiB, on overflow pages

    async def scenario() -> int:
        log = SqliteUpdateLog(db)
        try:
            for version in range(1, 6):
                assert (await log.append(version, big, version * 10)).committed
            with raw(db) as other:
                other.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            assert await log.save_snapshot(5, b"snapshot")
            assert [e.version for e in await log.read(5)] == [5]
        finally:
            await log.close()
        return (tmp_path / "c.db-wal").stat().st_size

    # Four updates of 200 KiB went; zeroing them would write 800 KiB to the write-ahead log.
    assert run(scenario) < 200 * 1024

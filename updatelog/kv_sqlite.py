"""``SqliteKvStore``: the key-value seam on one durable SQLite file, with etcd's semantics.

One ``kv`` table holds the keys with the store revision of their last change and their lease;
every write transaction is one ``BEGIN IMMEDIATE`` transaction that raises the revision by one,
so a watch reads "every key changed at revision R or later" through an index. The file runs in
WAL mode with ``synchronous=FULL``: a commit is on disk when ``txn`` returns. SQLite keeps no
history of overwritten values, so ``compact`` has nothing to drop; the pages of deleted and
overwritten rows are reused by later writes, so the file stops growing once the log is compacted.

Several stores (nodes in one process) and several processes may share a file; SQLite's file
locks serialize the writers, and a bounded busy timeout turns a lock held too long into
``StorageUnavailableError``. A small transaction (``txn``: an append, a safe-time raise, a read
of a few keys) runs on the caller's thread when it needs no wait (``DirectConnection``); every
other call, and any transaction that would wait for a lock, runs on a connection with its own
thread (``SqliteConnection``), so the event loop never waits for another writer. A watch's
thread waits for commits: commits made in this process wake it at once (an in-process bus), and
commits of other processes show up when it polls ``PRAGMA data_version``, which changes
whenever another connection commits.

Leases are rows of ``kv_lease`` with an expiry in wall-clock milliseconds (every process sharing
the file shares the machine's clock). Keys on an expired lease read as absent and are deleted by
the next write.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TypeVar, cast

from updatelog import kv
from updatelog.errors import FormatError, StorageUnavailableError
from updatelog.sqlite_connection import CommitBus, SqliteConnection, in_transaction
from updatelog.sqlite_direct import DECLINED, DirectConnection

T = TypeVar("T")

APPLICATION_ID = 0x55504C47
"""``PRAGMA application_id`` of a catalog store (ASCII "UPLG"), so a foreign file is refused."""
SCHEMA_VERSION = 3
"""``PRAGMA user_version`` of the table layout this release writes (1: no revisions; 2: the
revision counted in ``meta`` on every commit, where 3 reads it off the revision index)."""
DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024
"""Values above this (minus the log's margin) are written as chunks, as on etcd: a commit that
waits for the write lock waits for one chunk's transaction at most."""

_WATCH_PAGE = 1000
# A watch reads what changed since a revision through the revision index: left to itself the
# planner may walk the prefix by key instead, reading every row of the log on every commit.
CHANGES_SINCE = (
    "SELECT key, value, mod_rev FROM kv INDEXED BY kv_by_revision "
    "WHERE mod_rev >= ? AND key >= ? AND key < ? ORDER BY mod_rev LIMIT ?"
)
_CURRENT_REVISION = (
    "SELECT max((SELECT value FROM meta WHERE name = 'revision'), "
    "coalesce((SELECT max(mod_rev) FROM kv), 0))"
)
_LIVE = "(kv.lease = 0 OR kv.lease IN (SELECT id FROM kv_lease WHERE expires_ms > ?))"

_BUS = CommitBus()


class SqliteKvStore:
    """The ``KvStore`` on one SQLite file (see the module doc).

    Args:
        path: the database file; its directory must exist. Created if missing.
        busy_timeout_s: how long one operation waits for another writer's lock before it
            raises ``StorageUnavailableError``.
        poll_interval_s: how often a watch checks for commits made by other processes.
        max_request_bytes: the largest value the log writes unchunked.

    Raises:
        StorageUnavailableError: the file cannot be opened or stays locked.
        FormatError: the file is not a catalog store, or was written by a newer release.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout_s: float = 5.0,
        poll_interval_s: float = 0.015,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ) -> None:
        if busy_timeout_s <= 0 or poll_interval_s <= 0 or max_request_bytes <= 0:
            raise ValueError("busy_timeout_s, poll_interval_s, max_request_bytes must be positive")
        self.path = Path(path)
        self.timeout_s = busy_timeout_s
        self.max_request_bytes = max_request_bytes
        self._poll_interval_s = poll_interval_s
        self._bus_key = os.path.realpath(self.path)
        self._closed = False
        self._watchers: set[threading.Event] = set()
        self._db = SqliteConnection(str(self.path), busy_timeout_s)
        try:
            self._init_schema()
        except BaseException:
            self._db.close()
            raise
        self._direct = DirectConnection(str(self.path))

    def __repr__(self) -> str:
        return f"SqliteKvStore({str(self.path)!r})"

    def __str__(self) -> str:
        return f"SQLite store {self.path}"

    def _init_schema(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                self._db.call_sync(_enable_wal)
                self._db.call_sync(functools.partial(in_transaction, _create_or_upgrade, True))
                return
            except StorageUnavailableError as e:
                # Switching a brand-new file to WAL takes an exclusive lock that SQLite does
                # not wait for, so racing first opens retry here, bounded by the busy timeout.
                busy = "locked" in e.message or "busy" in e.message
                if not busy or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)

    async def _run(
        self, fn: Callable[[sqlite3.Connection], T], *, write: bool = False, urgent: bool = False
    ) -> T:
        if self._closed:
            raise StorageUnavailableError(f"SQLite store {self.path}: the store is closed")
        return await self._db.transaction(fn, write=write, urgent=urgent)

    # -- KvStore ----------------------------------------------------------------------------

    async def txn(
        self,
        compares: Sequence[kv.Compare],
        success: Sequence[kv.Op],
        failure: Sequence[kv.Op] = (),
    ) -> kv.TxnResult:
        """Run ``success`` if every compare holds, else ``failure``, in one transaction.

        SQLite commits are atomic and answer for sure, so this never raises
        ``UnknownOutcomeError``.

        Raises:
            StorageUnavailableError: the file stayed locked past the busy timeout.
            StoreQuotaExceededError: the disk is full; nothing was written.
        """
        writes = any(not isinstance(op, kv.Get) for op in (*success, *failure))

        def body(db: sqlite3.Connection) -> tuple[kv.TxnResult, bool]:
            now = _wall_ms()
            revision = _revision(db)
            if writes and _purge_expired(db, now):
                _keep_revision(db, revision)
            ok = all(_holds(db, c, now) for c in compares)
            ops = success if ok else failure
            changed = any(not isinstance(op, kv.Get) for op in ops)
            if changed:
                revision += 1
                if any(isinstance(op, kv.Delete) for op in ops):
                    _keep_revision(db, revision)
            reads = [_apply(db, op, revision, now) for op in ops]
            return kv.TxnResult(ok, revision, [r for r in reads if r is not None]), changed

        size = _written_bytes((*success, *failure), self._direct.max_bytes + 1)
        done = self._direct.run(body, write=writes, size=size)
        if done is DECLINED:
            # A small transaction (a commit that found the lock taken) goes ahead of queued
            # large writes, such as a snapshot's chunks; while those run, and for a while
            # after, small ones take the thread too (see ``DirectConnection``).
            small = size <= self._direct.max_bytes
            if not small:
                self._direct.pause()
            try:
                result, changed = await self._run(body, write=writes, urgent=small)
            finally:
                if not small:
                    self._direct.pause()
        else:
            result, changed = cast(tuple[kv.TxnResult, bool], done)
        if changed:
            _BUS.publish(self._bus_key)
        return result

    async def range(self, start: str, end: str, *, limit: int = 0) -> kv.Read:
        """Read the live keys of ``[start, end)`` in order, at most ``limit`` (0: all)."""
        return await self._run(lambda db: _range(db, start, end, limit, _wall_ms()))

    async def keys(self, start: str, end: str, *, limit: int = 0) -> list[str]:
        """Return the live keys of ``[start, end)`` in order, at most ``limit`` (0: all)."""

        def body(db: sqlite3.Connection) -> list[str]:
            rows = db.execute(
                f"SELECT key FROM kv WHERE key >= ? AND key < ? AND {_LIVE} ORDER BY key LIMIT ?",
                (start, end, _wall_ms(), limit if limit > 0 else -1),
            )
            return [key for (key,) in rows]

        return await self._run(body)

    async def watch(self, start: str, end: str, from_revision: int) -> AsyncIterator[kv.WatchItem]:
        """Yield the keys of ``[start, end)`` changed at ``from_revision`` or later, then live.

        Several changes of one key between two reads come as its latest value; deletions are
        not reported. The iterator ends when the store is closed.
        """
        if self._closed:
            raise StorageUnavailableError(f"SQLite store {self.path}: the store is closed")
        conn = await asyncio.to_thread(SqliteConnection, str(self.path), self.timeout_s)
        wake = threading.Event()  # set by commits in this process and by close()
        _BUS.subscribe(self._bus_key, wake)
        self._watchers.add(wake)
        try:
            next_revision = from_revision
            while not self._closed:
                wake.clear()
                read = functools.partial(_changes_since, start, end, next_revision)
                changes, revision, more, seen = await conn.transaction(read, write=False)
                if changes or revision >= next_revision:
                    yield kv.WatchChanges(changes, revision)
                next_revision = revision + 1
                if more:
                    continue
                wait = functools.partial(_wait_for_commit, wake, seen, self._poll_interval_s)
                await conn.call(wait)
        finally:
            wake.set()
            self._watchers.discard(wake)
            _BUS.unsubscribe(self._bus_key, wake)
            conn.close()

    async def grant_lease(self, ttl_s: int) -> int:
        """Grant a lease of ``ttl_s`` seconds and return its id."""
        ttl_ms = max(1, int(ttl_s * 1000))

        def body(db: sqlite3.Connection) -> int:
            cursor = db.execute(
                "INSERT INTO kv_lease (ttl_ms, expires_ms) VALUES (?, ?)",
                (ttl_ms, _wall_ms() + ttl_ms),
            )
            return int(cursor.lastrowid or 0)

        return await self._run(body, write=True)

    async def keep_alive(self, lease: int) -> bool:
        """Renew ``lease`` for its ttl; False when it has already expired."""

        def body(db: sqlite3.Connection) -> bool:
            now = _wall_ms()
            cursor = db.execute(
                "UPDATE kv_lease SET expires_ms = ? + ttl_ms WHERE id = ? AND expires_ms > ?",
                (now, lease, now),
            )
            return cursor.rowcount == 1

        return await self._run(body, write=True)

    async def compact(self, revision: int) -> None:
        """Do nothing: SQLite keeps no history of changes (see the module doc)."""

    async def close(self) -> None:
        """Release the connection and end every watch of this store. Idempotent."""
        if self._closed:
            return
        self._closed = True
        for wake in list(self._watchers):
            wake.set()
        self._direct.close()
        await asyncio.wrap_future(self._db.close())


def _written_bytes(ops: Sequence[kv.Op], large: int) -> int:
    """Return about how many bytes ``ops`` write, or ``large`` for a range deletion.

    A range deletion may free any amount (the updates a snapshot replaced, a snapshot's
    chunks): it is a large write, never run on the caller's thread.
    """
    size = 0
    for op in ops:
        if isinstance(op, kv.Put):
            size += len(op.key) + len(op.value)
        elif isinstance(op, kv.Delete) and op.end is not None:
            return large
    return size


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def _revision(db: sqlite3.Connection) -> int:
    """Return the store's revision: the newest row's, or the last deletion's if newer.

    A transaction that only puts stamps its rows with the next revision and writes nothing
    else: the revision index already holds the newest one, so a commit costs no page of its
    own for the counter. A deletion may remove the newest row, so it keeps its revision in
    ``meta`` (``_keep_revision``) and the revision never goes back.
    """
    return int(db.execute(_CURRENT_REVISION).fetchone()[0])


def _keep_revision(db: sqlite3.Connection, revision: int) -> None:
    db.execute("UPDATE meta SET value = max(value, ?) WHERE name = 'revision'", (revision,))


def _purge_expired(db: sqlite3.Connection, now: int) -> bool:
    """Delete the keys of expired leases and the leases; True when any lease had expired."""
    expired = [i for (i,) in db.execute("SELECT id FROM kv_lease WHERE expires_ms <= ?", (now,))]
    if expired:
        marks = ",".join("?" * len(expired))
        db.execute(f"DELETE FROM kv WHERE lease IN ({marks})", expired)
        db.execute(f"DELETE FROM kv_lease WHERE id IN ({marks})", expired)
    return bool(expired)


def _value(db: sqlite3.Connection, key: str, now: int) -> bytes | None:
    row = db.execute(f"SELECT value FROM kv WHERE key = ? AND {_LIVE}", (key, now)).fetchone()
    return None if row is None else bytes(row[0])


def _holds(db: sqlite3.Connection, compare: kv.Compare, now: int) -> bool:
    stored = _value(db, compare.key, now)
    if compare.value is None:
        return stored is None
    if stored is None:
        return compare.or_absent
    if compare.op is kv.CompareOp.EQUAL:
        return stored == compare.value
    if compare.op is kv.CompareOp.LESS:
        return stored < compare.value
    return stored > compare.value


def _range(db: sqlite3.Connection, start: str, end: str, limit: int, now: int) -> kv.Read:
    sql = f"SELECT key, value, mod_rev FROM kv WHERE key >= ? AND key < ? AND {_LIVE} ORDER BY key"
    if limit:
        rows = db.execute(sql + " LIMIT ?", (start, end, now, limit + 1)).fetchall()
        more = len(rows) > limit
        rows = rows[:limit]
    else:
        rows, more = db.execute(sql, (start, end, now)).fetchall(), False
    return kv.Read([kv.KeyValue(k, bytes(v), r) for k, v, r in rows], more)


def _apply(db: sqlite3.Connection, op: kv.Op, revision: int, now: int) -> kv.Read | None:
    if isinstance(op, kv.Get):
        return _range(db, op.key, op.key + "\x00" if op.end is None else op.end, op.limit, now)
    if isinstance(op, kv.Put):
        if (
            op.lease
            and not db.execute(
                "SELECT 1 FROM kv_lease WHERE id = ? AND expires_ms > ?", (op.lease, now)
            ).fetchone()
        ):
            raise kv.LeaseExpiredError(f"lease {op.lease} expired")
        db.execute(
            "INSERT OR REPLACE INTO kv (key, value, mod_rev, lease) VALUES (?, ?, ?, ?)",
            (op.key, op.value, revision, op.lease),
        )
    elif op.end is None:
        db.execute("DELETE FROM kv WHERE key = ?", (op.key,))
    else:
        db.execute("DELETE FROM kv WHERE key >= ? AND key < ?", (op.key, op.end))
    return None


def _changes_since(
    start: str, end: str, revision: int, db: sqlite3.Connection
) -> tuple[list[tuple[str, bytes | None, int]], int, bool, int]:
    """Read one page of changes: (changes, revision covered, more to read, data_version)."""
    rows = db.execute(CHANGES_SINCE, (revision, start, end, _WATCH_PAGE + 1)).fetchall()
    current = _revision(db)
    more = len(rows) > _WATCH_PAGE
    if more:
        last = rows[_WATCH_PAGE][2]
        kept = [row for row in rows if row[2] < last]
        if kept:
            rows, current = kept, last - 1
        else:  # one revision larger than a page: read all of it
            rows = db.execute(
                "SELECT key, value, mod_rev FROM kv INDEXED BY kv_by_revision "
                "WHERE mod_rev = ? AND key >= ? AND key < ? ORDER BY key",
                (last, start, end),
            ).fetchall()
            current = last
    changes: list[tuple[str, bytes | None, int]] = [(k, bytes(v), r) for k, v, r in rows]
    return changes, current, more, _data_version(db)


def _wait_for_commit(
    wake: threading.Event, seen: int, poll_interval_s: float, db: sqlite3.Connection
) -> None:
    """Block until a commit in this process wakes us or another connection's commit shows."""
    while not wake.wait(poll_interval_s):
        if _data_version(db) != seen:
            return


def _data_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA data_version").fetchone()[0])


def _enable_wal(db: sqlite3.Connection) -> None:
    mode = str(db.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
    if mode != "wal":
        raise StorageUnavailableError(
            f"SQLite refused WAL mode (journal_mode is {mode!r}); the store needs a local disk"
        )


def _create_or_upgrade(db: sqlite3.Connection) -> None:
    app_id = int(db.execute("PRAGMA application_id").fetchone()[0])
    schema = int(db.execute("PRAGMA user_version").fetchone()[0])
    if app_id == 0 and schema == 0:
        if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise FormatError("the SQLite file already holds other tables; not a catalog store")
        db.execute(
            "CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL, "
            "mod_rev INTEGER NOT NULL DEFAULT 0, lease INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID"
        )
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        schema = 1
    elif app_id != APPLICATION_ID:
        raise FormatError(f"the SQLite file has application_id {app_id:#x}; not a catalog store")
    elif schema > SCHEMA_VERSION:
        raise FormatError(
            f"the catalog store has schema version {schema}, this release reads up to "
            f"{SCHEMA_VERSION}; upgrade it to open this file"
        )
    elif schema == 1:
        # A file of the first layout: keys had no revisions, registry entries an expiry table.
        # Registry entries are ephemeral (nodes write them again within seconds), so go.
        db.execute("ALTER TABLE kv ADD COLUMN mod_rev INTEGER NOT NULL DEFAULT 0")
        db.execute("ALTER TABLE kv ADD COLUMN lease INTEGER NOT NULL DEFAULT 0")
        if db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'lease'").fetchone()[0]:
            db.execute("DELETE FROM kv WHERE key IN (SELECT key FROM lease)")
            db.execute("DROP TABLE lease")
    if schema < 2:
        db.execute("CREATE INDEX kv_by_revision ON kv (mod_rev)")
        db.execute("CREATE INDEX kv_by_lease ON kv (lease) WHERE lease != 0")
        db.execute(
            "CREATE TABLE kv_lease (id INTEGER PRIMARY KEY AUTOINCREMENT, "
            "ttl_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL)"
        )
        db.execute("CREATE INDEX kv_lease_by_expiry ON kv_lease (expires_ms)")
        db.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)")
        db.execute("INSERT INTO meta (name, value) VALUES ('revision', 1)")
    if schema < SCHEMA_VERSION:
        # 2 -> 3 keeps every table: ``meta`` holds at least the newest row's revision, which
        # is what the revision is read as now. Releases that read 2 would count from ``meta``
        # alone, which no longer moves on every commit: they must refuse this file.
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

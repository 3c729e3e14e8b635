"""``SqliteUpdateLog``: the embedded backend, one durable SQLite file with etcd's semantics.

The file holds one key-value table with exactly the keys of ``updatelog.keys`` and values in
``updatelog.envelope`` envelopes, so it reads like an etcd dump. Every write is one
``BEGIN IMMEDIATE`` transaction that checks the same conditions etcd's ``Txn`` compares, so the
two backends pass one behaviour suite. The file runs in WAL mode with ``synchronous=FULL``: a
commit is on disk when ``append`` returns.

Several ``SqliteUpdateLog`` instances (nodes in one process) and several processes may share a
file; SQLite's file locks serialize the writers, and a bounded busy timeout turns a lock held
too long into ``StorageUnavailableError``. Every connection lives on its own thread, which runs
the blocking SQLite calls; the event loop never blocks. A watcher's thread waits for commits:
commits made in this process wake it at once (an in-process bus), and commits made by other
processes show up when it polls ``PRAGMA data_version``, which changes whenever another
connection commits and costs no I/O. Only a change comes back to the event loop.

The node registry (``catalog.nodes.<name>``) lives in the same ``kv`` table; where etcd
attaches such a key to a lease, a ``lease`` table holds the key's expiry (wall-clock
milliseconds; every process sharing the file shares the machine's clock). Expired entries read
as absent and are deleted by the next registry write.
"""

from __future__ import annotations

import asyncio
import functools
import math
import os
import sqlite3
import threading
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from updatelog import envelope, requests
from updatelog.envelope import Kind
from updatelog.errors import (
    FormatError,
    LogCompactedError,
    SettingsMismatchError,
    StorageUnavailableError,
)
from updatelog.keys import U64_MAX, VERSION_DIGITS, KeyLayout, prefix_range_end
from updatelog.log import (
    AppendConflict,
    AppendResult,
    ClusterSettings,
    LogEntry,
    RequestRecord,
    SafeTimeAdvanced,
    SafeTimeResult,
    SnapshotRequired,
    WatchEvent,
)
from updatelog.sqlite_connection import CommitBus, SqliteConnection, in_transaction

T = TypeVar("T")

APPLICATION_ID = 0x55504C47
"""``PRAGMA application_id`` of a catalog store (ASCII "UPLG"), so a foreign file is refused."""
SCHEMA_VERSION = 1
"""``PRAGMA user_version`` of the table layout this release writes."""

_WATCH_BATCH = 256


_BUS = CommitBus()


@dataclass(frozen=True, slots=True)
class _WatchBatch:
    snapshot_version: int
    safe_time: int
    entries: list[LogEntry]
    more: bool
    data_version: int


def _check_int(name: str, value: int, low: int) -> None:
    if type(value) is not int or not low <= value <= U64_MAX:
        raise ValueError(f"{name} must be an integer in {low}..{U64_MAX}, got {value!r}")


class SqliteUpdateLog:
    """The embedded ``UpdateLog``: one durable SQLite file, safe to share between processes.

    Args:
        path: the database file; its directory must exist. Created if missing.
        prefix: key prefix, so several catalogs can share one file.
        busy_timeout_s: how long one operation waits for another writer's lock before it
            raises ``StorageUnavailableError``.
        poll_interval_s: how often a watcher checks for commits made by other processes.

    Raises:
        StorageUnavailableError: the file cannot be opened or stays locked.
        FormatError: the file is not a catalog store, or was written by a newer release.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        prefix: str = "",
        busy_timeout_s: float = 5.0,
        poll_interval_s: float = 0.015,
    ) -> None:
        if busy_timeout_s <= 0 or poll_interval_s <= 0:
            raise ValueError("busy_timeout_s and poll_interval_s must be positive")
        self.path = Path(path)
        self.keys = KeyLayout(prefix)
        self._busy_timeout_s = busy_timeout_s
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

    def __repr__(self) -> str:
        return f"SqliteUpdateLog({str(self.path)!r}, prefix={self.keys.prefix!r})"

    def _init_schema(self) -> None:
        deadline = time.monotonic() + self._busy_timeout_s
        while True:
            try:
                self._db.call_sync(_enable_wal)
                self._db.call_sync(functools.partial(in_transaction, _create_or_check_schema, True))
                return
            except StorageUnavailableError as e:
                # Switching a brand-new file to WAL takes an exclusive lock that SQLite does
                # not wait for, so racing first opens retry here, bounded by the busy timeout.
                busy = "locked" in e.message or "busy" in e.message
                if not busy or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)

    async def _run(self, fn: Callable[[sqlite3.Connection], T], *, write: bool = False) -> T:
        if self._closed:
            raise StorageUnavailableError(f"SQLite store {self.path}: the log is closed")
        return await self._db.transaction(fn, write=write)

    async def _write(self, fn: Callable[[sqlite3.Connection], tuple[T, bool]]) -> T:
        result, changed = await self._run(fn, write=True)
        if changed:
            _BUS.publish(self._bus_key)
        return result

    def _get(self, db: sqlite3.Connection, *keys: str) -> dict[str, bytes]:
        marks = ",".join("?" * len(keys))
        rows = db.execute(f"SELECT key, value FROM kv WHERE key IN ({marks})", keys)
        return {key: bytes(value) for key, value in rows}

    def _int(self, rows: dict[str, bytes], key: str, kind: Kind) -> int:
        value = rows.get(key)
        return 0 if value is None else envelope.decode_int(value, kind)

    async def append(
        self,
        version: int,
        payload: bytes,
        proposal_ts: int,
        request_ids: Sequence[str] = (),
    ) -> AppendResult:
        """Append ``payload`` as ``version`` if the version and safe-time conditions hold.

        Conflicts are reported in this order: a recorded request id (so a retried request
        learns that it already committed), then the version, then the safe time.

        Args:
            version: the version to write; the log must be at ``version - 1``.
            payload: the opaque update.
            proposal_ts: the writer's HLC proposal; must exceed the stored safe time.
            request_ids: idempotency keys to record with this version.

        Returns:
            Success, or the conflicting state.

        Raises:
            StorageUnavailableError: the file stayed locked past the busy timeout.
            ValueError: an argument is out of range.
        """
        _check_int("version", version, 1)
        _check_int("proposal_ts", proposal_ts, 1)
        value = envelope.encode(Kind.UPDATE, payload)
        request_keys = {self.keys.request(rid): rid for rid in request_ids}
        keys = self.keys

        def txn(db: sqlite3.Connection) -> tuple[AppendResult, bool]:
            rows = self._get(db, keys.version, keys.safe_time, *request_keys)
            current = self._int(rows, keys.version, Kind.VERSION)
            safe = self._int(rows, keys.safe_time, Kind.SAFE_TIME)
            for key, rid in request_keys.items():
                if key in rows:
                    return requests.request_conflict(
                        current, safe, rid, requests.decode_record(rows[key])
                    ), False
            if current != version - 1:
                return AppendResult(False, current, safe, AppendConflict.VERSION), False
            if safe >= proposal_ts:
                return AppendResult(False, current, safe, AppendConflict.SAFE_TIME), False
            recorded = requests.encode_committed(version)
            db.executemany(
                "INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)",
                [
                    (keys.update(version), value),
                    (keys.version, envelope.encode_int(Kind.VERSION, version)),
                    (keys.safe_time, envelope.encode_int(Kind.SAFE_TIME, proposal_ts)),
                    *((key, recorded) for key in request_keys),
                ],
            )
            return AppendResult(True, version, proposal_ts), True

        return await self._write(txn)

    async def read(self, from_version: int, to_version: int | None = None) -> list[LogEntry]:
        """Read versions ``from_version..to_version`` (inclusive; default: latest) in one range.

        Args:
            from_version: the first version, at least 1.
            to_version: the last version; None or beyond the latest means the latest.

        Returns:
            The entries in version order; the one at the snapshot version is the snapshot.

        Raises:
            LogCompactedError: ``from_version`` is older than the snapshot version.
            FormatError: a stored value is corrupted or of an unknown format.
        """
        _check_int("from_version", from_version, 1)
        if to_version is not None:
            _check_int("to_version", to_version, 0)

        def txn(db: sqlite3.Connection) -> list[LogEntry]:
            latest, snapshot = self._bounds(db)
            if from_version < snapshot:
                raise LogCompactedError(
                    f"version {from_version} was compacted into the snapshot at {snapshot}",
                    earliest_version=snapshot,
                )
            last = latest if to_version is None else min(to_version, latest)
            return self._range(db, from_version, last)

        return await self._run(txn)

    def _bounds(self, db: sqlite3.Connection) -> tuple[int, int]:
        rows = self._get(db, self.keys.version, self.keys.snapshot_version)
        latest = self._int(rows, self.keys.version, Kind.VERSION)
        return latest, self._int(rows, self.keys.snapshot_version, Kind.VERSION)

    def _range(self, db: sqlite3.Connection, first: int, last: int) -> list[LogEntry]:
        if last < first:
            return []
        start, end = self.keys.update_range(first, last)
        rows = db.execute(
            "SELECT key, value FROM kv WHERE key >= ? AND key < ? ORDER BY key", (start, end)
        )
        entries: list[LogEntry] = []
        for expected, (key, value) in enumerate(rows, start=first):
            version = self.keys.version_of_update(key)
            if version != expected:
                raise FormatError(f"the log has a gap: version {expected} is missing")
            env = envelope.decode_as(bytes(value), Kind.UPDATE, Kind.SNAPSHOT)
            entries.append(LogEntry(version, env.body, env.kind is Kind.SNAPSHOT))
        if len(entries) != last - first + 1:
            raise FormatError(f"the log has a gap: version {first + len(entries)} is missing")
        return entries

    async def latest_version(self) -> int:
        """Return ``catalog.version``, or 0 for an empty log."""
        return (await self._run(self._bounds))[0]

    async def earliest_version(self) -> int:
        """Return the snapshot version, 1 when no snapshot was saved, or 0 for an empty log."""
        latest, snapshot = await self._run(self._bounds)
        return snapshot or min(latest, 1)

    async def safe_time(self) -> int:
        """Return ``catalog.safe_time``, or 0 if never set."""
        key = self.keys.safe_time
        return await self._run(lambda db: self._int(self._get(db, key), key, Kind.SAFE_TIME))

    async def raise_safe_time(self, ts: int) -> SafeTimeResult:
        """Raise ``catalog.safe_time`` to ``ts`` by compare-and-set; never lower it.

        Args:
            ts: the wanted safe time.

        Returns:
            The resulting safe time (``>= ts``) and the latest version.

        Raises:
            StorageUnavailableError: the file stayed locked past the busy timeout.
        """
        _check_int("ts", ts, 0)
        keys = self.keys

        def txn(db: sqlite3.Connection) -> tuple[SafeTimeResult, bool]:
            rows = self._get(db, keys.version, keys.safe_time)
            latest = self._int(rows, keys.version, Kind.VERSION)
            safe = self._int(rows, keys.safe_time, Kind.SAFE_TIME)
            if ts <= safe:
                return SafeTimeResult(safe, latest), False
            db.execute(
                "INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)",
                (keys.safe_time, envelope.encode_int(Kind.SAFE_TIME, ts)),
            )
            return SafeTimeResult(ts, latest), True

        return await self._write(txn)

    async def request_record(self, request_id: str) -> RequestRecord | None:
        """Return the recorded outcome of ``request_id``, or None if it is unknown."""
        key = self.keys.request(request_id)

        def txn(db: sqlite3.Connection) -> RequestRecord | None:
            value = self._get(db, key).get(key)
            return None if value is None else requests.decode_record(value)

        return await self._run(txn)

    async def record_refusal(self, request_id: str, version: int, refusal: bytes) -> AppendResult:
        """Record that ``request_id`` was refused with the log at ``version`` (see UpdateLog)."""
        _check_int("version", version, 1)
        key, keys = self.keys.request(request_id), self.keys

        def txn(db: sqlite3.Connection) -> tuple[AppendResult, bool]:
            rows = self._get(db, keys.version, keys.safe_time, key)
            current = self._int(rows, keys.version, Kind.VERSION)
            safe = self._int(rows, keys.safe_time, Kind.SAFE_TIME)
            if key in rows:
                return requests.request_conflict(
                    current, safe, request_id, requests.decode_record(rows[key])
                ), False
            if current != version:
                return AppendResult(False, current, safe, AppendConflict.VERSION), False
            db.execute(
                "INSERT INTO kv (key, value) VALUES (?, ?)",
                (key, requests.encode_refused(version, refusal)),
            )
            return AppendResult(True, current, safe), False  # no version for watchers

        return await self._write(txn)

    async def commit_data(
        self, table_id: int, seq: int, payload: bytes, commit_ts: int, request_id: str
    ) -> AppendResult:
        """Record data commit ``seq`` of a table under the safe-time rule (see UpdateLog)."""
        _check_int("seq", seq, 1)
        _check_int("commit_ts", commit_ts, 1)
        keys = self.keys
        seq_key, request_key = keys.data_seq(table_id), keys.data_request(request_id)
        value = envelope.encode(Kind.UPDATE, payload)

        def txn(db: sqlite3.Connection) -> tuple[AppendResult, bool]:
            rows = self._get(db, seq_key, keys.safe_time, request_key)
            current = self._int(rows, seq_key, Kind.VERSION)
            safe = self._int(rows, keys.safe_time, Kind.SAFE_TIME)
            if request_key in rows:
                recorded = envelope.decode_int(rows[request_key], Kind.REQUEST)
                conflict = AppendConflict.REQUEST
                return AppendResult(False, current, safe, conflict, recorded, request_id), False
            if current != seq - 1:
                return AppendResult(False, current, safe, AppendConflict.VERSION), False
            if safe >= commit_ts:
                return AppendResult(False, current, safe, AppendConflict.SAFE_TIME), False
            db.executemany(
                "INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)",
                [
                    (keys.data_commit(table_id, seq), value),
                    (seq_key, envelope.encode_int(Kind.VERSION, seq)),
                    (keys.safe_time, envelope.encode_int(Kind.SAFE_TIME, commit_ts)),
                    (request_key, envelope.encode_int(Kind.REQUEST, seq)),
                ],
            )
            return AppendResult(True, seq, commit_ts), True

        return await self._write(txn)

    async def read_data(self, table_id: int) -> list[LogEntry]:
        """Return every data commit of a table in order (see UpdateLog)."""
        start, end = self.keys.data_commit_range(table_id)
        prefix = len(start) - VERSION_DIGITS

        def txn(db: sqlite3.Connection) -> list[LogEntry]:
            rows = db.execute(
                "SELECT key, value FROM kv WHERE key >= ? AND key < ? ORDER BY key", (start, end)
            )
            return [
                LogEntry(int(key[prefix:]), envelope.decode_as(bytes(value), Kind.UPDATE).body)
                for key, value in rows
            ]

        return await self._run(txn)

    async def auth_keys(self) -> bytes | None:
        """Return the stored token-signing keys, or None (see UpdateLog)."""
        key = self.keys.auth_keys

        def txn(db: sqlite3.Connection) -> bytes | None:
            value = self._get(db, key).get(key)
            return None if value is None else envelope.decode_as(value, Kind.AUTH_KEYS).body

        return await self._run(txn)

    async def swap_auth_keys(self, expected: bytes | None, keys: bytes) -> bool:
        """Store ``keys`` if the stored ones are still ``expected`` (see UpdateLog)."""
        key = self.keys.auth_keys
        value = envelope.encode(Kind.AUTH_KEYS, keys)

        def txn(db: sqlite3.Connection) -> tuple[bool, bool]:
            stored = self._get(db, key).get(key)
            current = None if stored is None else envelope.decode_as(stored, Kind.AUTH_KEYS).body
            if current != expected:
                return False, False
            db.execute("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", (key, value))
            return True, False

        return await self._write(txn)

    async def save_snapshot(self, version: int, payload: bytes) -> bool:
        """Overwrite ``version`` with a snapshot and delete older versions, atomically.

        Args:
            version: the snapshot version; must be newer than the current snapshot and not
                newer than the latest version.
            payload: the full catalog at ``version``.

        Returns:
            True if saved; False (nothing changed) if it would not move the snapshot forward or
            ``version`` is not in the log.
        """
        _check_int("version", version, 1)
        value = envelope.encode(Kind.SNAPSHOT, payload)
        keys = self.keys

        def txn(db: sqlite3.Connection) -> tuple[bool, bool]:
            latest, snapshot = self._bounds(db)
            if version <= snapshot or version > latest:
                return False, False
            db.executemany(
                "INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)",
                [
                    (keys.update(version), value),
                    (keys.snapshot_version, envelope.encode_int(Kind.VERSION, version)),
                ],
            )
            db.execute(
                "DELETE FROM kv WHERE key >= ? AND key < ?",
                keys.update_range(0, version - 1),
            )
            return True, True

        return await self._write(txn)

    async def init_settings(self, settings: ClusterSettings) -> ClusterSettings:
        """Store ``settings`` if none are stored yet, and return the stored ones.

        Args:
            settings: this node's configuration.

        Returns:
            The cluster's settings (equal to ``settings``).

        Raises:
            SettingsMismatchError: the stored settings differ from ``settings``.
        """
        value = envelope.encode_settings(settings)
        key = self.keys.settings

        def txn(db: sqlite3.Connection) -> tuple[ClusterSettings, bool]:
            stored = self._get(db, key).get(key)
            if stored is None:
                db.execute("INSERT INTO kv (key, value) VALUES (?, ?)", (key, value))
                return settings, True
            return envelope.decode_settings(stored), False

        stored = await self._write(txn)
        if stored != settings:
            raise SettingsMismatchError(
                f"this node is configured with {settings}, but the cluster in {self.path} "
                f"was initialised with {stored}; cluster settings never change"
            )
        return stored

    async def register_node(self, name: str, info: bytes, ttl_s: float) -> None:
        """Create or refresh node ``name``'s registry entry, expiring ``ttl_s`` from now.

        Args:
            name: the node's name.
            info: the opaque entry.
            ttl_s: how long the entry lives without a refresh, in seconds.

        Raises:
            StorageUnavailableError: the file stayed locked past the busy timeout.
            ValueError: an empty or malformed name, or a ttl that is not positive.
        """
        key = self.keys.node(name)
        ttl_ms = _ttl_ms(ttl_s)
        value = envelope.encode(Kind.NODE, info)

        def txn(db: sqlite3.Connection) -> None:
            now = _wall_ms()
            self._purge_expired_nodes(db, now)
            db.execute("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", (key, value))
            db.execute(
                "INSERT OR REPLACE INTO lease (key, expires_ms) VALUES (?, ?)",
                (key, now + ttl_ms),
            )

        # No commit-bus wake-up: watchers follow updates and safe time, not the registry.
        await self._run(txn, write=True)

    async def list_nodes(self) -> dict[str, bytes]:
        """Return every registry entry that has not expired, by node name.

        Raises:
            FormatError: a stored entry is corrupted or of an unknown format.
            StorageUnavailableError: the file stayed locked past the busy timeout.
        """
        prefix = self.keys.nodes_prefix

        def txn(db: sqlite3.Connection) -> dict[str, bytes]:
            rows = db.execute(
                "SELECT kv.key, kv.value FROM kv JOIN lease ON lease.key = kv.key "
                "WHERE kv.key >= ? AND kv.key < ? AND lease.expires_ms > ? ORDER BY kv.key",
                (prefix, prefix_range_end(prefix), _wall_ms()),
            )
            return {
                key[len(prefix) :]: envelope.decode_as(bytes(value), Kind.NODE).body
                for key, value in rows
            }

        return await self._run(txn)

    async def deregister_node(self, name: str) -> None:
        """Remove node ``name``'s registry entry (and any expired ones).

        Raises:
            StorageUnavailableError: the file stayed locked past the busy timeout.
        """
        key = self.keys.node(name)

        def txn(db: sqlite3.Connection) -> None:
            self._purge_expired_nodes(db, _wall_ms())
            db.execute("DELETE FROM kv WHERE key = ?", (key,))
            db.execute("DELETE FROM lease WHERE key = ?", (key,))

        await self._run(txn, write=True)

    def _purge_expired_nodes(self, db: sqlite3.Connection, now_ms: int) -> None:
        prefix = self.keys.nodes_prefix
        bounds = (prefix, prefix_range_end(prefix), now_ms)
        expired = "SELECT key FROM lease WHERE key >= ? AND key < ? AND expires_ms <= ?"
        db.execute(f"DELETE FROM kv WHERE key IN ({expired})", bounds)
        db.execute(f"DELETE FROM lease WHERE key IN ({expired})", bounds)

    async def watch(self, from_version: int) -> AsyncGenerator[WatchEvent, None]:
        """Yield every version from ``from_version`` on, in order, then live ones.

        Safe-time changes are yielded once every version committed before them was yielded.
        The iterator ends after ``SnapshotRequired``, or when the log is closed.

        Args:
            from_version: the first version to deliver, at least 1.

        Yields:
            ``LogEntry`` per version, ``SafeTimeAdvanced`` and at most one ``SnapshotRequired``.

        Raises:
            FormatError: a stored value is corrupted; the watch never skips it.
            StorageUnavailableError: the file stayed locked past the busy timeout.
        """
        _check_int("from_version", from_version, 1)
        if self._closed:
            raise StorageUnavailableError(f"SQLite store {self.path}: the log is closed")
        conn = await asyncio.to_thread(SqliteConnection, str(self.path), self._busy_timeout_s)
        # Set by commits in this process (the bus), by close(), and when this watch ends.
        wake = threading.Event()
        _BUS.subscribe(self._bus_key, wake)
        self._watchers.add(wake)
        try:
            next_version, sent_safe_time = from_version, 0
            while not self._closed:
                wake.clear()
                batch = await conn.transaction(self._batch(next_version), write=False)
                if batch.snapshot_version > next_version:
                    yield SnapshotRequired(batch.snapshot_version)
                    return
                for entry in batch.entries:
                    yield entry
                    next_version = entry.version + 1
                if batch.more:
                    continue
                if batch.safe_time > sent_safe_time:
                    sent_safe_time = batch.safe_time
                    yield SafeTimeAdvanced(batch.safe_time)
                await conn.call(
                    functools.partial(
                        _wait_for_commit, wake, batch.data_version, self._poll_interval_s
                    )
                )
        finally:
            wake.set()
            self._watchers.discard(wake)
            _BUS.unsubscribe(self._bus_key, wake)
            conn.close()

    def _batch(self, next_version: int) -> Callable[[sqlite3.Connection], _WatchBatch]:
        def txn(db: sqlite3.Connection) -> _WatchBatch:
            rows = self._get(db, self.keys.version, self.keys.snapshot_version, self.keys.safe_time)
            latest = self._int(rows, self.keys.version, Kind.VERSION)
            snapshot = self._int(rows, self.keys.snapshot_version, Kind.VERSION)
            safe = self._int(rows, self.keys.safe_time, Kind.SAFE_TIME)
            last = min(latest, next_version + _WATCH_BATCH - 1)
            entries = [] if snapshot > next_version else self._range(db, next_version, last)
            return _WatchBatch(snapshot, safe, entries, last < latest, _data_version(db))

        return txn

    async def close(self) -> None:
        """Release the connection and end every watch of this instance. Idempotent."""
        if self._closed:
            return
        self._closed = True
        for wake in list(self._watchers):
            wake.set()
        await asyncio.wrap_future(self._db.close())


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def _ttl_ms(ttl_s: float) -> int:
    if not (isinstance(ttl_s, int | float) and math.isfinite(ttl_s) and ttl_s > 0):
        raise ValueError(f"ttl_s must be a positive number of seconds, got {ttl_s!r}")
    return max(1, math.ceil(ttl_s * 1000))


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


def _create_or_check_schema(db: sqlite3.Connection) -> None:
    app_id = int(db.execute("PRAGMA application_id").fetchone()[0])
    schema = int(db.execute("PRAGMA user_version").fetchone()[0])
    if app_id == 0 and schema == 0:
        if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise FormatError("the SQLite file already holds other tables; not a catalog store")
        db.execute("CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID")
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    elif app_id != APPLICATION_ID:
        raise FormatError(f"the SQLite file has application_id {app_id:#x}; not a catalog store")
    elif schema > SCHEMA_VERSION:
        raise FormatError(
            f"the catalog store has schema version {schema}, this release reads up to "
            f"{SCHEMA_VERSION}; upgrade it to open this file"
        )
    # The registry's expiry table came after schema version 1 without changing ``kv``: a file
    # of an earlier release gains it here, and such a release still opens the file (it never
    # reads this table).
    db.execute(
        "CREATE TABLE IF NOT EXISTS lease "
        "(key TEXT PRIMARY KEY, expires_ms INTEGER NOT NULL) WITHOUT ROWID"
    )

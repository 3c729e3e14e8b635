"""SQLite update log: appends/s through ``SqliteUpdateLog.append`` vs a raw sqlite3 loop.

Both sides write one ~1 KiB value per durable commit to a WAL-mode file with
``synchronous=FULL`` in the same temporary directory, so the ratio shows what the log costs on
top of the fsync: its checks (version and safe-time compare-and-set, envelope) and its layout
(three keys per append, the revision index a watch reads). An append runs on the caller's
thread like the raw loop; the raw loop through ``asyncio.to_thread`` is in ``extra`` for scale.

A third side, in ``extra`` as ``layout_floor_ratio``, runs the statements an append runs (the
revision, the lease check, the two compare reads, the three puts) in a bare sqlite3 loop on a
file of the log's own layout, with no Python of the log around them: what the layout alone
costs against the raw commit, the most any code over this layout can reach.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from bench.harness import Figure, Sample, alternate, progress
from updatelog import envelope
from updatelog.envelope import Kind
from updatelog.keys import KeyLayout
from updatelog.sqlite import SqliteUpdateLog

PAYLOAD = os.urandom(1024)


class _LogSide:
    """Appends to one log across repeats, continuing from the version it reached."""

    def __init__(self, path: Path, count: int) -> None:
        self.path = path
        self.count = count

    def run(self) -> float:
        return asyncio.run(self._appends())

    async def _appends(self) -> float:
        log = SqliteUpdateLog(self.path)
        try:
            version = await log.latest_version()
            ts = await log.safe_time()
            start = time.perf_counter()
            for _ in range(self.count):
                version, ts = version + 1, ts + 1
                result = await log.append(version, PAYLOAD, ts)
                if not result.committed:
                    raise RuntimeError(f"benchmark append lost a CAS: {result}")
            return self.count / (time.perf_counter() - start)
        finally:
            await log.close()


class _RawSide:
    """The baseline: one INSERT per BEGIN/COMMIT on a plain sqlite3 connection.

    With ``hop`` each commit runs through ``asyncio.to_thread`` instead, as any async caller
    must: that variant is reported beside the figure to show what the thread hop alone costs.
    """

    def __init__(self, path: Path, count: int, *, hop: bool = False) -> None:
        self.path = path
        self.count = count
        self.hop = hop
        self.next_id = 1

    def _commit(self, db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO t (id, payload) VALUES (?, ?)", (self.next_id, PAYLOAD))
        db.execute("COMMIT")
        self.next_id += 1

    def _prepare(self, db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, payload BLOB)")

    def run(self) -> float:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA synchronous=FULL")
            self._prepare(db)
            if self.hop:
                return asyncio.run(self._hopping(db))
            start = time.perf_counter()
            for _ in range(self.count):
                self._commit(db)
            return self.count / (time.perf_counter() - start)
        finally:
            db.close()

    async def _hopping(self, db: sqlite3.Connection) -> float:
        start = time.perf_counter()
        for _ in range(self.count):
            await asyncio.to_thread(self._commit, db)
        return self.count / (time.perf_counter() - start)


class _LayoutSide(_RawSide):
    """The floor: an append's statements on the log's layout, from a bare sqlite3 loop."""

    _READS = (
        "SELECT max((SELECT value FROM meta WHERE name = 'revision'), "
        "coalesce((SELECT max(mod_rev) FROM kv), 0))",
        "SELECT id FROM kv_lease WHERE expires_ms <= ?",
        "SELECT value FROM kv WHERE key = ? AND lease = 0",
        "SELECT value FROM kv WHERE key = ? AND lease = 0",
    )
    _PUT = "INSERT OR REPLACE INTO kv (key, value, mod_rev, lease) VALUES (?, ?, ?, 0)"

    def __init__(self, path: Path, count: int) -> None:
        super().__init__(path, count)
        self.keys = KeyLayout()
        asyncio.run(SqliteUpdateLog(path).close())  # creates the file in the log's layout

    def _prepare(self, db: sqlite3.Connection) -> None:
        """Nothing: the log made the file, in WAL mode."""

    def _commit(self, db: sqlite3.Connection) -> None:
        version, keys = self.next_id, self.keys
        self.next_id += 1
        db.execute("BEGIN IMMEDIATE")
        revision = db.execute(self._READS[0]).fetchone()[0] + 1
        db.execute(self._READS[1], (time.time_ns() // 1_000_000,)).fetchall()
        db.execute(self._READS[2], (keys.version,)).fetchone()
        db.execute(self._READS[3], (keys.safe_time,)).fetchone()
        db.execute(self._PUT, (keys.update(version), PAYLOAD, revision))
        db.execute(self._PUT, (keys.version, envelope.encode_int(Kind.VERSION, version), revision))
        db.execute(
            self._PUT, (keys.safe_time, envelope.encode_int(Kind.SAFE_TIME, version), revision)
        )
        db.execute("COMMIT")


def run(quick: bool) -> list[Figure]:
    count, repeats = (1_000, 9) if quick else (3_000, 15)
    workdir = Path(tempfile.mkdtemp(prefix="bench-updatelog-sqlite-"))
    try:
        log_side = _LogSide(workdir / "log.db", count)
        raw_side = _RawSide(workdir / "raw.db", count)
        hop_side = _RawSide(workdir / "hop.db", count, hop=True)
        layout_side = _LayoutSide(workdir / "layout.db", count)
        progress(
            f"warm-up, then {repeats} x (raw commit, raw commit via thread, append, the "
            f"append's bare statements) x{count}"
        )
        raw_rates, hop_rates, log_rates, layout_rates = alternate(
            [raw_side.run, hop_side.run, log_side.run, layout_side.run], repeats=repeats
        )
        baseline = Sample.of(raw_rates, "commits/s")
        value = Sample.of(log_rates, "appends/s")
        hop = statistics.median(hop_rates)
        layout = statistics.median(layout_rates)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return [
        Figure(
            key="UL-S1",
            title="SqliteUpdateLog.append/s ÷ raw sqlite3 commit/s (1 KiB, FULL)",
            value=value,
            baseline=baseline,
            goal=">= 0.8",
            extra={
                "appends_per_repeat": count,
                "repeats": repeats,
                "payload_bytes": 1024,
                "raw_commits_per_s_via_to_thread": hop,
                "ratio_vs_raw_via_to_thread": value.median / hop,
                "layout_floor_per_s": layout,
                "layout_floor_ratio": layout / baseline.median,
            },
        )
    ]

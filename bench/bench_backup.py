"""B1: a backup of 100,000 tables ÷ the snapshot write of the same catalog; restore ÷ backup.

A SQLite store holds 100,000 tables (made 1,000 per version by an in-process node). Each round:

- the snapshot write: the catalog compacted at a new version (one small DDL first), as the
  compaction policy or ``catalog compact`` does it (encode, then ``save_snapshot``);
- the backup of the log that leaves, a snapshot alone (``take_backup``: read it, take its
  version and digest from its own bytes, write the file);
- the restore of that file into a fresh store (read and check the file and the snapshot's
  SHA-256, write the log);
- then 100 small DDL versions after the snapshot, and a backup of that log (B1u): the catalog
  is rebuilt from the snapshot and the updates and digested, as a backup between compactions
  does; and its restore (B1ru), which writes the snapshot and the updates back as they are
  (checking each update follows the one before) without rebuilding the catalog.

They take turns, so each ratio compares measurements made under the same conditions.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from bench.harness import Figure, Sample, progress
from bench.tables import create_command

PER_VERSION = 1000
UPDATES_AFTER = 100


async def _build(store: str, tables: int) -> None:
    from catalog.runtime.node import CatalogNode
    from catalog.runtime.options import NodeOptions

    options = NodeOptions(delay_ms=0, max_clock_skew_ms=0, registry_ttl_s=None)
    async with CatalogNode.open(store, "bench-backup", options) as node:
        for first in range(0, tables, PER_VERSION):
            commands = [create_command(f"T{i}") for i in range(first, first + PER_VERSION)]
            await node.manager.execute(commands)
            if first % 20_000 == 0:
                progress(f"B1: {first + PER_VERSION} tables")
        await node.manager.compact_to(node.service.latest_version)


async def _snapshot_write(store: str, round_: int) -> float:
    from catalog.runtime.node import CatalogNode
    from catalog.runtime.options import NodeOptions

    options = NodeOptions(
        delay_ms=0, max_clock_skew_ms=0, registry_ttl_s=None, safe_time_ticker=False
    )
    async with CatalogNode.open(store, "bench-backup", options) as node:
        await node.manager.execute([create_command(f"EXTRA{round_}")])
        start = time.perf_counter()
        await node.manager.compact_to(node.service.latest_version)
        return time.perf_counter() - start


async def _more_versions(store: str, round_: int, versions: int) -> None:
    from catalog import commands as c
    from catalog.runtime.node import CatalogNode
    from catalog.runtime.options import NodeOptions

    options = NodeOptions(
        delay_ms=0, max_clock_skew_ms=0, registry_ttl_s=None, safe_time_ticker=False
    )
    async with CatalogNode.open(store, "bench-backup", options) as node:
        for n in range(versions):
            fraction = 0.1 + (round_ * versions + n) % 800 / 1000
            command = c.AlterTableProperties(table=f"T{n}", stale_rows_fraction=fraction)
            await node.manager.execute([command])


async def _backup(store: str, path: Path) -> float:
    from catalog.backup.take import take_backup
    from updatelog.url import open_log

    log = open_log(store)
    try:
        start = time.perf_counter()
        await take_backup(log, path)
        return time.perf_counter() - start
    finally:
        await log.close()


async def _restore(path: Path, store: str) -> float:
    from catalog.backup.restore import restore_backup
    from updatelog.kv_log import KvUpdateLog
    from updatelog.url import open_log

    log = open_log(store)
    assert isinstance(log, KvUpdateLog)
    try:
        start = time.perf_counter()
        await restore_backup(path, log)
        return time.perf_counter() - start
    finally:
        await log.close()


def run(quick: bool) -> list[Figure]:
    """Measure B1."""
    tables = 20_000 if quick else 100_000
    repeats = 2 if quick else 3
    snapshots: list[float] = []
    backups: list[float] = []
    restores: list[float] = []
    rebuilt: list[float] = []
    rebuilt_restores: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-backup-") as tmp:
        store = f"sqlite:///{tmp}/source.db"
        started = time.monotonic()
        asyncio.run(_build(store, tables))
        progress(f"B1: {tables} tables built in {time.monotonic() - started:.0f} s")
        for round_ in range(repeats):
            snapshots.append(asyncio.run(_snapshot_write(store, round_)))
            path = Path(tmp) / f"b{round_}.backup"
            backups.append(asyncio.run(_backup(store, path)))
            restores.append(asyncio.run(_restore(path, f"sqlite:///{tmp}/restored{round_}.db")))
            asyncio.run(_more_versions(store, round_, UPDATES_AFTER))
            rebuilt.append(asyncio.run(_backup(store, path)))
            target = f"sqlite:///{tmp}/restored-updates{round_}.db"
            rebuilt_restores.append(asyncio.run(_restore(path, target)))
            progress(
                f"B1 round {round_ + 1}: snapshot {snapshots[-1]:.2f} s, backup "
                f"{backups[-1]:.2f} s, restore {restores[-1]:.2f} s, backup with "
                f"{UPDATES_AFTER} updates after the snapshot {rebuilt[-1]:.2f} s, its restore "
                f"{rebuilt_restores[-1]:.2f} s"
            )
            path.unlink()
    return [
        Figure(
            "B1",
            f"a backup of {tables:,} tables ÷ the snapshot write of the same catalog",
            Sample.of(backups, "s"),
            Sample.of(snapshots, "s"),
            "<= 1.5",
            {"tables": tables},
        ),
        Figure(
            "B1u",
            f"a backup of {tables:,} tables and {UPDATES_AFTER} updates after their snapshot ÷ "
            "the snapshot write",
            Sample.of(rebuilt, "s"),
            Sample.of(snapshots, "s"),
            "<= 1.5",
            {"tables": tables, "updates": UPDATES_AFTER},
        ),
        Figure(
            "B1r",
            f"a restore of {tables:,} tables ÷ their backup",
            Sample.of(restores, "s"),
            Sample.of(backups, "s"),
            "<= 1.5",
            {"tables": tables},
        ),
        Figure(
            "B1ru",
            f"a restore of {tables:,} tables and {UPDATES_AFTER} updates ÷ their backup",
            Sample.of(rebuilt_restores, "s"),
            Sample.of(rebuilt, "s"),
            "<= 1.5",
            {"tables": tables, "updates": UPDATES_AFTER},
        ),
    ]

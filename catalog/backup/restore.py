"""``restore_backup``: a new cluster, in an empty store, holding exactly what a backup holds.

The backup is read and checked whole first (``catalog.backup.file``: the SHA-256 of the whole
file, and of the snapshot's bytes against the one its header recorded); only then is anything
written. The store gets the backup's versions as they are: the snapshot's bytes and each
update's bytes, the same numbers, activation times and content, so the catalog at each version
is the source's by construction, without being rebuilt here. What is checked of them is cheap:
the snapshot's version and activation time (read off its first fields), and each update read
and following the one before, up to the version and activation time the header recorded. A
backup of format 1 (no snapshot digest), of another catalog wire format, or whose snapshot is
of an older stored format is rebuilt instead and compared with the digest it recorded.

The store then gets the data commits, the settings and a new cluster id: the restored catalog
is a new cluster, which nodes of the old one refuse to follow (``STORE_REGRESSED``) and new
nodes join. Data files are not copied: the warehouse the backup names must hold them, and the
restore lists the files the kept data commits name that it does not find.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from catalog.backup.file import Backup, BackupFileError, read_backup
from catalog.backup.take import described, rebuild
from catalog.data.files import decode_data_commit
from catalog.data.keys import DataKeys
from catalog.data.warehouse import data_folder
from catalog.marshalling import decode_update
from catalog.wire import FORMAT_VERSION
from schemasync.clock import HybridClock
from updatelog import envelope
from updatelog.cluster import new_cluster_id
from updatelog.envelope import Kind
from updatelog.errors import FormatError
from updatelog.kv import Op, Put
from updatelog.kv_log import KvUpdateLog
from updatelog.log import ClusterSettings, LogEntry
from updatelog.seed import OPS_PER_TXN, check_empty, seed_log

SHOWN_MISSING = 20
"""How many missing files a restore names (it counts them all)."""


@dataclass(frozen=True, slots=True)
class RestoreSummary:
    """What a restore wrote, and which data files it did not find."""

    cluster_id: str
    version: int
    earliest: int
    digest: str
    data_commits: int
    missing_files: list[str]
    missing_count: int


def _entries(backup: Backup) -> list[LogEntry]:
    entries = []
    if backup.snapshot is not None:
        entries.append(LogEntry(backup.snapshot[0], backup.snapshot[1], is_snapshot=True))
    entries += [LogEntry(version, body) for version, body in backup.updates]
    return entries


async def restore_backup(
    path: Path, log: KvUpdateLog, *, warehouse: str | None = None
) -> RestoreSummary:
    """Restore the backup at ``path`` into the empty store of ``log``.

    Args:
        path: the backup file.
        log: the target's update log; its store must hold nothing of this catalog.
        warehouse: the warehouse the restored cluster names (None: the backup's).

    Raises:
        BackupFileError: the file is not a whole, unaltered backup of a format read here, or
            its versions do not make the version, activation and digest it recorded.
        StoreNotEmptyError: the store holds a catalog.
        StorageUnavailableError: the store could not be reached.
    """
    backup = await asyncio.to_thread(read_backup, path)
    header = backup.header
    entries = _entries(backup)
    await asyncio.to_thread(_check, backup, entries, path)
    settings = ClusterSettings(
        delay_ms=header.delay_ms,
        max_clock_skew_ms=header.max_clock_skew_ms,
        format_version=header.settings_format,
        warehouse=warehouse or header.warehouse,
    )
    await check_empty(log)
    cluster_id = new_cluster_id()
    # Safe time past every version's proposal and every data commit: nothing restored can be
    # followed by a change or commit at or before it.
    safe_time = max(header.at_ts, header.activation_ts, HybridClock().now())
    await _write_data(log, backup)
    snapshot = entries[0] if entries[0].is_snapshot else None
    await seed_log(
        log,
        settings=settings,
        cluster_id=cluster_id,
        snapshot=snapshot,
        updates=entries[1:] if snapshot is not None else entries,
        safe_time=safe_time,
    )
    missing = await asyncio.to_thread(_missing_files, backup, entries, settings.warehouse)
    return RestoreSummary(
        cluster_id,
        header.version,
        header.earliest,
        header.digest,
        len(backup.data),
        missing[:SHOWN_MISSING],
        len(missing),
    )


def _check(backup: Backup, entries: list[LogEntry], path: Path) -> None:
    """Check the versions make what the header recorded (see the module doc).

    Raises:
        BackupFileError: they do not.
    """
    header = backup.header
    stored = backup.snapshot_stored
    verbatim = header.format >= 2 and header.catalog_format == FORMAT_VERSION
    if not verbatim or (backup.snapshot is not None and stored is None):
        found = described(entries)
        if found.version != header.version or found.digest != header.digest:
            raise BackupFileError(
                f"{path}: its catalog rebuilds to version {found.version} with digest "
                f"{found.digest[:12]}..., not the version {header.version} and digest "
                f"{header.digest[:12]}... it recorded"
            )
        return
    version, activation_ts = 0, 0  # the empty catalog version 1 follows
    if stored is not None:
        if stored.version != header.earliest:
            raise BackupFileError(
                f"{path}: its snapshot is of version {stored.version}, not {header.earliest}"
            )
        if not backup.updates and stored.digest != header.digest:
            raise BackupFileError(f"{path}: its snapshot is not the catalog it recorded")
        version, activation_ts = stored.version, stored.activation_ts
    for number, body in backup.updates:
        try:
            update = decode_update(body)
        except FormatError as e:
            raise BackupFileError(f"{path}: update {number} cannot be read ({e})") from None
        if update.version != number or number != version + 1:
            raise BackupFileError(f"{path}: update {number} holds version {update.version}")
        version, activation_ts = number, update.activation_ts(activation_ts)
    if (version, activation_ts) != (header.version, header.activation_ts):
        raise BackupFileError(
            f"{path}: its versions end at version {version}, active from {activation_ts}, not "
            f"at the version {header.version}, active from {header.activation_ts}, it recorded"
        )


async def _write_data(log: KvUpdateLog, backup: Backup) -> None:
    """Write the data commits and each table's latest commit number."""
    keys = DataKeys(log.keys)
    latest: dict[int, int] = {}
    puts: list[Op] = []
    for table_id, seq, body in backup.data:
        puts.append(Put(keys.commit(table_id, seq), envelope.encode(Kind.UPDATE, body)))
        latest[table_id] = max(seq, latest.get(table_id, 0))
        if len(puts) >= OPS_PER_TXN:
            await log.store.txn([], puts)
            puts = []
    for table_id, seq in latest.items():
        puts.append(Put(keys.seq(table_id), envelope.encode_int(Kind.VERSION, seq)))
        if len(puts) >= OPS_PER_TXN:
            await log.store.txn([], puts)
            puts = []
    if puts:
        await log.store.txn([], puts)


def _missing_files(backup: Backup, entries: list[LogEntry], warehouse: str | None) -> list[str]:
    """Return the data files the restored data commits of live tables name that are not there.

    A file is looked for in its table's folder (``data_folder``); tables dropped by the
    backup's version are left out (their files go with the catalog's data expiry).
    """
    if not backup.data:
        return []
    cat = rebuild(entries)
    missing = set()
    for table_id, _, body in backup.data:
        table = cat.find_table_by_id(table_id)
        if table is None:
            continue
        folder = data_folder(table, warehouse)
        for file in decode_data_commit(body).files:
            path = os.path.join(folder, file.path)
            if not os.path.isfile(path):
                missing.add(path)
    return sorted(missing)

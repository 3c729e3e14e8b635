"""``take_backup``: a consistent copy of a catalog and its data commits, while it takes changes.

The backup is of a moment T: now (the latest catalog), the activation of a version asked for,
or a time asked for. The store's safe time is raised to T first, so no change and no data
commit can still come at or before T; then the retained versions up to the one active at T
(the latest, for now) and every data commit up to T are read. Versions and data commits are
never rewritten in place (a compaction removes old ones; an expiry merges old data commits
into a later one, which reads the same), so reading them one after another is as good as one
read: a compaction racing the backup only makes it start again from the new snapshot.

The backup records the digest of the catalog at its version and the SHA-256 of its snapshot's
bytes. A log that is a snapshot alone says both itself (its bytes are the catalog's canonical
encoding); otherwise the catalog is rebuilt from what was read and digested. A restore writes
the snapshot and the updates back as they are, so the catalog at every version is the
source's by construction.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from catalog.backup.file import FORMAT, BackupHeader, BackupWriter
from catalog.catalog import Catalog
from catalog.collector import collector_paused
from catalog.data.files import decode_data_commit
from catalog.data.log import DataCommitLog
from catalog.errors import ErrorCode, NotFoundError, ValidationError
from catalog.marshalling import decode_update
from catalog.snapshot_format import stored_snapshot
from catalog.snapshots import decode_snapshot
from catalog.wire import FORMAT_VERSION
from schemasync.clock import HybridClock, physical_of
from updatelog import envelope
from updatelog.cluster import store_position
from updatelog.envelope import CURRENT_FORMAT
from updatelog.errors import LogCompactedError
from updatelog.kv import Get
from updatelog.log import ClusterSettings, LogEntry, UpdateLog

ATTEMPTS = 5
"""How many times a backup starts again when compactions keep overtaking it."""


@dataclass(frozen=True, slots=True)
class BackupSummary:
    """What a backup holds."""

    path: Path
    version: int
    earliest: int
    at_ts: int
    digest: str
    data_commits: int
    size_bytes: int


def rebuild(entries: list[LogEntry]) -> Catalog:
    """Return the catalog ``entries`` (a snapshot or version 1, then updates) make."""
    cat = Catalog()
    for entry in entries:
        if entry.is_snapshot:
            cat = decode_snapshot(entry.payload)
        else:
            cat = decode_update(entry.payload).apply_to(cat)
    return cat


@dataclass(frozen=True, slots=True)
class Described:
    """What a backup says of the catalog its entries make."""

    version: int
    activation_ts: int
    digest: str
    """The digest of the catalog at ``version``."""
    snapshot_sha256: str | None
    """The SHA-256 of the snapshot's bytes (None when the entries start at version 1)."""


def described(entries: list[LogEntry]) -> Described:
    """Return the version, activation time and digest of the catalog ``entries`` make.

    A lone snapshot of the current format says them itself (``stored_snapshot``); otherwise
    the catalog is rebuilt, while another thread hashes the snapshot's bytes.
    """
    snapshot = entries[0].payload if entries[0].is_snapshot else None
    if len(entries) == 1 and snapshot is not None:
        stored = stored_snapshot(snapshot)
        if stored is not None:
            return Described(stored.version, stored.activation_ts, stored.digest, stored.digest)
    with ThreadPoolExecutor(1, thread_name_prefix="backup-snapshot-hash") as pool:
        hashed = None if snapshot is None else pool.submit(_sha256, snapshot)
        # What the rebuild builds dies with it: the collector has nothing to find in it.
        with collector_paused():
            cat = rebuild(entries)
            digest = cat.digest()
        sha = None if hashed is None else hashed.result()
    return Described(cat.version, cat.activation_ts, digest, sha)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def stored_settings(log: UpdateLog) -> ClusterSettings:
    """Return the cluster settings the store holds.

    Raises:
        NotFoundError: the store holds no catalog.
    """
    read = await log.store.txn([], [Get(log.keys.settings)])
    value = read.reads[0].value
    if value is None:
        raise NotFoundError(f"{log} holds no catalog", code=ErrorCode.VERSION_NOT_FOUND)
    return envelope.decode_settings(value)


async def take_backup(
    log: UpdateLog, path: Path, *, version: int | None = None, at_ts: int | None = None
) -> BackupSummary:
    """Write a backup of the catalog in ``log`` to ``path``.

    Args:
        log: the source's update log (any node may keep running on it).
        path: the file to write (replaced when the backup is whole).
        version: back up the catalog at this retained version (its data as of its activation).
        at_ts: back up the catalog and data as of this hybrid time (not both).

    Raises:
        NotFoundError: no catalog, or a version or moment not in the retained history.
        ValidationError: both ``version`` and ``at_ts``, or a moment ahead of the clock.
        StorageUnavailableError: the store could not be reached.
    """
    if version is not None and at_ts is not None:
        raise ValidationError("give a version or a moment to back up, not both")
    settings = await stored_settings(log)
    position = await store_position(log)
    for attempt in range(ATTEMPTS):
        try:
            entries, moment = await _entries(log, settings, version, at_ts)
            break
        except LogCompactedError:
            if attempt == ATTEMPTS - 1:
                raise
    about = await asyncio.to_thread(described, entries)
    header = BackupHeader(
        format=FORMAT,
        cluster_id=position.cluster_id,
        prefix=log.keys.prefix,
        version=about.version,
        earliest=entries[0].version,
        activation_ts=about.activation_ts,
        at_ts=moment,
        digest=about.digest,
        snapshot_sha256=about.snapshot_sha256,
        delay_ms=settings.delay_ms,
        max_clock_skew_ms=settings.max_clock_skew_ms,
        settings_format=settings.format_version,
        warehouse=settings.warehouse,
        log_format=CURRENT_FORMAT,
        catalog_format=FORMAT_VERSION,
        made_ms=time.time_ns() // 1_000_000,
    )
    writer = BackupWriter(path, header)
    try:
        for entry in entries:
            if entry.is_snapshot:
                writer.snapshot(entry.version, entry.payload)
            else:
                writer.update(entry.version, entry.payload)
        data = await _data_commits(log, moment, writer)
        size = writer.finish()
    except BaseException:
        writer.abandon()
        raise
    return BackupSummary(path, about.version, header.earliest, moment, about.digest, data, size)


async def _entries(
    log: UpdateLog, settings: ClusterSettings, version: int | None, at_ts: int | None
) -> tuple[list[LogEntry], int]:
    """Return the retained entries up to the backup's version, and the backup's moment."""
    earliest = await log.earliest_version()
    if earliest == 0:
        raise NotFoundError(f"{log} holds no catalog", code=ErrorCode.VERSION_NOT_FOUND)
    now = HybridClock().now()
    if version is None and at_ts is None:
        latest = (await log.raise_safe_time(now)).version
        return await log.read(earliest, latest), now
    if at_ts is not None:
        skew = settings.max_clock_skew_ms
        if physical_of(at_ts) > physical_of(now) + skew:
            raise ValidationError(
                f"the moment {at_ts} is ahead of this clock by more than the clock-skew bound "
                f"({skew} ms): back up a moment that has come"
            )
        latest = (await log.raise_safe_time(at_ts)).version
        entries = await log.read(earliest, latest)
        return _up_to(entries, await asyncio.to_thread(activations, entries), at_ts, log), at_ts
    latest = await log.latest_version()
    if version is None or not earliest <= version <= latest:
        raise NotFoundError(
            f"version {version} is not retained: the log holds versions {earliest} to {latest}",
            code=ErrorCode.VERSION_NOT_FOUND,
        )
    entries = await log.read(earliest, version)
    activation = (await asyncio.to_thread(activations, entries))[-1]
    await log.raise_safe_time(activation)
    return entries, activation


def activations(entries: list[LogEntry]) -> list[int]:
    """Return when the version of each of ``entries`` became active, applying none of them.

    A snapshot says its own (its first fields, or decoded when of an older stored format);
    each update's follows from the one before it (``VersionedUpdate.activation_ts``).
    """
    found, activation_ts = [], 0  # version 1 follows the empty catalog
    for entry in entries:
        if entry.is_snapshot:
            stored = stored_snapshot(entry.payload)
            activation_ts = (
                stored.activation_ts
                if stored is not None
                else decode_snapshot(entry.payload).activation_ts
            )
        else:
            activation_ts = decode_update(entry.payload).activation_ts(activation_ts)
        found.append(activation_ts)
    return found


def _up_to(
    entries: list[LogEntry], activation_ts: list[int], at_ts: int, log: UpdateLog
) -> list[LogEntry]:
    """Return the entries up to the version active at ``at_ts`` (activations only grow)."""
    kept = [entry for entry, ts in zip(entries, activation_ts, strict=True) if ts <= at_ts]
    if not kept:
        raise NotFoundError(
            f"the moment {at_ts} is before the earliest version {log} keeps",
            code=ErrorCode.VERSION_COMPACTED,
        )
    return kept


async def _data_commits(log: UpdateLog, at_ts: int, writer: BackupWriter) -> int:
    """Add every data commit made up to ``at_ts``; return how many."""
    data = DataCommitLog(log)
    count = 0
    for table_id in await data.tables():
        for entry in await data.read(table_id):
            if decode_data_commit(entry.payload).commit_ts <= at_ts:
                writer.data(table_id, entry.version, entry.payload)
                count += 1
    return count

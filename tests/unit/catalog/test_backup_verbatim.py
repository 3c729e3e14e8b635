"""A backup's versions written back as they are: the source's catalog by construction.

Source stores are seeded with a random DDL history (a snapshot, then updates); a backup of
them restores into an empty SQLite store holding the source's very bytes, without rebuilding
the catalog, and the catalog at the backup's version has the source's digest. A file whose
versions do not make what its header recorded is refused (``BACKUP_INVALID``) writing
nothing, even when its end digest was recomputed to match. Backups of format 1, and snapshots
of an older stored format, are still rebuilt and compared with the digest they recorded.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from catalog import Catalog, CatalogError, VersionedUpdate, prepare
from catalog.backup import restore as restore_module
from catalog.backup.file import Backup, BackupFileError, BackupWriter, read_backup
from catalog.backup.restore import RestoreSummary, restore_backup
from catalog.backup.take import BackupSummary, rebuild, take_backup
from catalog.errors import ErrorCode, NotFoundError
from catalog.marshalling import encode_update
from catalog.snapshots import encode_snapshot
from catalog.update import initial_update
from tests.golden.catalog_values import GOLDEN_DIR
from tests.random_ddl import random_batch
from updatelog.cluster import new_cluster_id
from updatelog.kv_log import KvUpdateLog
from updatelog.log import ClusterSettings, LogEntry
from updatelog.seed import seed_log
from updatelog.url import open_log

SETTINGS = ClusterSettings(delay_ms=0, max_clock_skew_ms=0)


def _history(seed: int, versions: int) -> list[tuple[Catalog, VersionedUpdate]]:
    """Return ``versions`` catalog versions of random DDL, each with the update that made it."""
    rng = random.Random(seed)
    first = initial_update(1 << 16)
    made = [(first.apply_to(Catalog()), first)]
    while len(made) < versions:
        head = made[-1][0]
        try:
            entries = prepare(head, random_batch(rng, head)).entries
        except CatalogError:
            continue
        update = VersionedUpdate(
            version=head.version + 1,
            proposal_ts=(head.version + 1) << 16,
            delay_ms=rng.choice([0, 5]),
            entries=entries,
            stamps=True,
        )
        made.append((update.apply_to(head), update))
    return made


async def _open(store: str) -> KvUpdateLog:
    log = open_log(store)
    assert isinstance(log, KvUpdateLog)
    return log


def _seed(store: str, snapshot: LogEntry | None, updates: list[LogEntry]) -> None:
    async def run() -> None:
        log = await _open(store)
        try:
            await seed_log(
                log,
                settings=SETTINGS,
                cluster_id=new_cluster_id(),
                snapshot=snapshot,
                updates=updates,
                safe_time=1 << 40,
            )
        finally:
            await log.close()

    asyncio.run(run())


def _source(tmp_path: Path, history: list[tuple[Catalog, VersionedUpdate]], at: int) -> str:
    """Seed a store holding the snapshot of version ``at`` (0: none) and the updates after it."""
    store = f"sqlite:///{tmp_path}/source.db"
    snapshot = None
    if at:
        snapshot = LogEntry(at, encode_snapshot(history[at - 1][0]), is_snapshot=True)
    updates = [LogEntry(u.version, encode_update(u)) for _, u in history[at:]]
    _seed(store, snapshot, updates)
    return store


def _entries(store: str) -> list[LogEntry]:
    async def run() -> list[LogEntry]:
        log = await _open(store)
        try:
            return await log.read(await log.earliest_version(), await log.latest_version())
        finally:
            await log.close()

    return asyncio.run(run())


def _empty(store: str) -> bool:
    async def run() -> bool:
        log = await _open(store)
        try:
            start, end = log.keys.all_range
            return not await log.store.keys(start, end, limit=1)
        finally:
            await log.close()

    return asyncio.run(run())


def _backup(store: str, path: Path, **moment: Any) -> BackupSummary:
    async def run() -> BackupSummary:
        log = await _open(store)
        try:
            return await take_backup(log, path, **moment)
        finally:
            await log.close()

    return asyncio.run(run())


def _restore(path: Path, store: str) -> RestoreSummary:
    async def run() -> RestoreSummary:
        log = await _open(store)
        try:
            return await restore_backup(path, log)
        finally:
            await log.close()

    return asyncio.run(run())


def _no_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_: Any) -> None:
        raise AssertionError("the restore rebuilt the catalog")

    monkeypatch.setattr(restore_module, "rebuild", refused)
    monkeypatch.setattr(restore_module, "described", refused)


@pytest.mark.parametrize(("seed", "at"), [(1, 12), (2, 25), (3, 0), (4, 30)])
def test_a_backup_restores_the_sources_bytes_without_rebuilding_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, at: int
) -> None:
    history = _history(seed, 30)
    source = _source(tmp_path, history, at)
    summary = _backup(source, tmp_path / "b.backup")
    latest = history[-1][0]
    assert (summary.version, summary.digest) == (latest.version, latest.digest())
    header = read_backup(tmp_path / "b.backup").header
    assert header.format == 2 and header.activation_ts == latest.activation_ts
    if at:
        assert header.snapshot_sha256 == history[at - 1][0].digest()  # its canonical bytes
    else:
        assert header.snapshot_sha256 is None

    _no_rebuild(monkeypatch)
    target = f"sqlite:///{tmp_path}/restored.db"
    restored = _restore(tmp_path / "b.backup", target)
    assert (restored.version, restored.digest) == (latest.version, latest.digest())
    assert _entries(target) == _entries(source)  # the same versions, byte for byte
    monkeypatch.undo()
    assert rebuild(_entries(target)).digest() == latest.digest()


def test_a_backup_of_an_older_version_restores_that_version(tmp_path: Path) -> None:
    history = _history(5, 20)
    source = _source(tmp_path, history, 8)
    summary = _backup(source, tmp_path / "b.backup", version=14)
    assert (summary.version, summary.digest) == (14, history[13][0].digest())
    target = f"sqlite:///{tmp_path}/restored.db"
    _restore(tmp_path / "b.backup", target)
    restored = _entries(target)
    assert [e.version for e in restored] == list(range(8, 15))
    assert rebuild(restored).digest() == history[13][0].digest()


def test_a_backup_as_of_a_moment_holds_the_version_active_then(tmp_path: Path) -> None:
    history = _history(8, 20)
    source = _source(tmp_path, history, 6)
    then = history[11][0]  # version 12
    for moment, expected in [(then.activation_ts, then), (then.activation_ts - 1, history[10][0])]:
        summary = _backup(source, tmp_path / "then.backup", at_ts=moment)
        assert (summary.version, summary.digest) == (expected.version, expected.digest())
    target = f"sqlite:///{tmp_path}/restored.db"
    _restore(tmp_path / "then.backup", target)
    assert rebuild(_entries(target)).digest() == history[10][0].digest()
    with pytest.raises(NotFoundError) as caught:
        _backup(source, tmp_path / "before.backup", at_ts=history[4][0].activation_ts)
    assert caught.value.code == ErrorCode.VERSION_COMPACTED


def _rewritten(good: Backup, path: Path, **changes: Any) -> Path:
    """Write ``good`` again with ``changes`` (header fields, snapshot, updates), well hashed."""
    fields = {k: v for k, v in changes.items() if k not in ("snapshot", "updates")}
    writer = BackupWriter(path, good.header.model_copy(update=fields))
    snapshot = changes.get("snapshot", good.snapshot)
    if snapshot is not None:
        writer.snapshot(*snapshot)
    for version, body in changes.get("updates", good.updates):
        writer.update(version, body)
    for table_id, seq, body in good.data:
        writer.data(table_id, seq, body)
    writer.finish()
    return path


def _flipped(content: bytes, at: int) -> bytes:
    return content[:at] + bytes([content[at] ^ 1]) + content[at + 1 :]


def test_versions_that_do_not_make_what_the_header_recorded_are_refused_writing_nothing(
    tmp_path: Path,
) -> None:
    history = _history(6, 24)
    source = _source(tmp_path, history, 10)
    good_path = tmp_path / "good.backup"
    _backup(source, good_path)
    good = read_backup(good_path)
    assert good.snapshot is not None
    version, snapshot = good.snapshot
    updates = good.updates
    numbers, bodies = [n for n, _ in updates], [b for _, b in updates]
    content = good_path.read_bytes()
    at = content.index(snapshot[1000:1100]) + 50
    cases = {
        "cannot be read": _rewritten(
            good, tmp_path / "garbage.backup", updates=[*updates[:-1], (24, b"\x93garbage")]
        ),
        "holds version": _rewritten(
            good,
            tmp_path / "swapped.backup",
            updates=list(zip(numbers, [*bodies[1:], bodies[0]], strict=True)),
        ),
        "active from": _rewritten(
            good, tmp_path / "later.backup", activation_ts=good.header.activation_ts + 1
        ),
        "does not match the digest its header recorded": _rewritten(
            good, tmp_path / "snapshot.backup", snapshot=(version, _flipped(snapshot, 1000))
        ),
        "not the catalog it recorded": _rewritten(
            good, tmp_path / "lone.backup", updates=[], version=10, digest="0" * 64
        ),
    }
    in_update = content.index(bodies[-1]) + len(bodies[-1]) // 2
    for stem, altered in [
        ("snapshot-byte", _flipped(content, at)),
        ("update-byte", _flipped(content, in_update)),
        ("cut", content[:at]),
    ]:
        (tmp_path / f"{stem}.backup").write_bytes(altered)
    cases["records do not match"] = tmp_path / "snapshot-byte.backup"
    cases["its records do not match"] = tmp_path / "update-byte.backup"
    cases["cut short"] = tmp_path / "cut.backup"
    for expected, path in cases.items():
        target = f"sqlite:///{tmp_path}/target-{path.stem}.db"
        with pytest.raises(BackupFileError) as caught:
            _restore(path, target)
        assert caught.value.code == ErrorCode.BACKUP_INVALID, expected
        assert expected in str(caught.value), (expected, str(caught.value))
        assert _empty(target), expected


def test_a_backup_of_format_1_is_rebuilt_and_compared_with_its_digest(tmp_path: Path) -> None:
    history = _history(7, 20)
    source = _source(tmp_path, history, 9)
    _backup(source, tmp_path / "b.backup")
    good = read_backup(tmp_path / "b.backup")
    old = _rewritten(good, tmp_path / "old.backup", format=1, snapshot_sha256=None)
    _restore(old, f"sqlite:///{tmp_path}/restored.db")
    assert rebuild(_entries(f"sqlite:///{tmp_path}/restored.db")) == history[-1][0]

    wrong = _rewritten(good, tmp_path / "wrong.backup", format=1, snapshot_sha256=None)
    wrong = _rewritten(read_backup(wrong), wrong, digest="0" * 64)
    target = f"sqlite:///{tmp_path}/target.db"
    with pytest.raises(BackupFileError, match="rebuilds to version 20"):
        _restore(wrong, target)
    assert _empty(target)


def test_a_snapshot_of_an_older_stored_format_is_rebuilt_and_compared(tmp_path: Path) -> None:
    old = (GOLDEN_DIR / "snapshot_v1.bin").read_bytes()
    source = f"sqlite:///{tmp_path}/source.db"
    catalog = rebuild([LogEntry(0, old, is_snapshot=True)])
    _seed(source, LogEntry(catalog.version, old, is_snapshot=True), [])
    summary = _backup(source, tmp_path / "b.backup")
    assert summary.digest == catalog.digest()
    target = f"sqlite:///{tmp_path}/restored.db"
    _restore(tmp_path / "b.backup", target)
    assert _entries(target)[0].payload == old
    assert rebuild(_entries(target)).digest() == catalog.digest()

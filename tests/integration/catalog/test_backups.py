"""Backups and restores: a consistent copy taken while DDL goes on, restored as a new cluster.

Real servers on real stores: a backup taken during sixteen concurrent DDL clients restores
to a catalog whose digest is the source's at the backup's version, the restored cluster takes
DDL, a backup as of a moment restores exactly the catalog a read at that moment gave, data
commits come back with it, and bad backups and non-empty stores are refused writing nothing.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from pyiceberg.catalog import load_catalog

from api.client import CatalogClient
from catalog.backup.file import BackupFileError
from catalog.backup.restore import restore_backup
from catalog.backup.take import rebuild, take_backup
from tests.integration.api.servers import RunningServer, ServerFactory
from tests.integration.api.test_cli import run, run_json
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows
from updatelog.errors import UpdateLogError
from updatelog.kv_log import KvUpdateLog
from updatelog.seed import StoreNotEmptyError
from updatelog.url import open_log

pytestmark = pytest.mark.timeout(120)

CLIENTS = 16


async def _backup(store: str, path: Path, **moment: int) -> tuple[int, str]:
    log = open_log(store)
    try:
        summary = await take_backup(log, path, **moment)
        return summary.version, summary.digest
    finally:
        await log.close()


async def _restore(path: Path, store: str, warehouse: str | None = None) -> tuple[str, int]:
    log = open_log(store)
    assert isinstance(log, KvUpdateLog)
    try:
        summary = await restore_backup(path, log, warehouse=warehouse)
        return summary.cluster_id, summary.missing_count
    finally:
        await log.close()


async def _digest_at(store: str, version: int) -> str:
    log = open_log(store)
    try:
        entries = await log.read(await log.earliest_version(), version)
        return rebuild(entries).digest()
    finally:
        await log.close()


def _other_store(store_url: str, tmp_path: Path) -> str:
    if store_url.startswith("sqlite:"):
        return f"sqlite:///{tmp_path}/restored.db"
    return store_url.rsplit("/", 1)[0] + "/restored-" + store_url.rsplit("-", 1)[-1]


def test_a_backup_taken_under_concurrent_ddl_restores_to_the_same_catalog(
    store_url: str, tmp_path: Path
) -> None:
    factory = ServerFactory()
    try:
        source = factory.start(store_url, warehouse=str(tmp_path / "warehouse"))
        stop, errors = threading.Event(), []

        def ddl(n: int) -> None:
            with CatalogClient(source.url) as client:
                i = 0
                while not stop.is_set():
                    try:
                        client.sql(f"CREATE TABLE T{n}_{i} (ID BIGINT PRIMARY KEY)")
                    except Exception as e:
                        errors.append(e)
                        return
                    i += 1

        writers = [threading.Thread(target=ddl, args=(n,)) for n in range(CLIENTS)]
        for writer in writers:
            writer.start()
        try:
            with CatalogClient(source.url) as client:
                while client.versions().latest < 20:
                    pass
            version, digest = asyncio.run(_backup(store_url, tmp_path / "live.backup"))
        finally:
            stop.set()
            for writer in writers:
                writer.join(30)
        assert not errors, errors[:3]
        assert asyncio.run(_digest_at(store_url, version)) == digest  # the source's, then

        target = _other_store(store_url, tmp_path)
        cluster, missing = asyncio.run(_restore(tmp_path / "live.backup", target))
        assert missing == 0 and len(cluster) == 36
        assert asyncio.run(_digest_at(target, version)) == digest
        restored = factory.start(target, warehouse=str(tmp_path / "warehouse"))
        with CatalogClient(restored.url) as client:
            assert client.versions().latest == version
            after = client.sql("CREATE TABLE AFTER_RESTORE (ID BIGINT PRIMARY KEY)").version
            assert after == version + 1
            assert "AFTER_RESTORE" in client.tables()
    finally:
        factory.stop_all()


def test_a_backup_as_of_a_moment_restores_what_a_read_then_gave(tmp_path: Path) -> None:
    factory = ServerFactory()
    store, warehouse = f"sqlite:///{tmp_path}/source.db", str(tmp_path / "warehouse")
    try:
        source = factory.start(store, warehouse=warehouse)
        iceberg = load_catalog("c", type="rest", uri=f"{source.url}/iceberg")
        events = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
        events.append(rows(events, range(3)))
        with CatalogClient(source.url) as client:
            client.sql("CREATE VIEW recent AS SELECT id FROM events")
            moment = client.now()
            then = client.catalog(at=moment)
            iceberg.load_table("PUBLIC.EVENTS").append(rows(events, range(10, 12)))
            client.sql("CREATE TABLE LATER (ID BIGINT PRIMARY KEY)")
        version, digest = asyncio.run(_backup(store, tmp_path / "then.backup", at_ts=moment))
        assert (version, digest) == (then.version, then.digest())

        target = f"sqlite:///{tmp_path}/restored.db"
        _, missing = asyncio.run(_restore(tmp_path / "then.backup", target, warehouse))
        assert missing == 0
        source.stop()
        restored = factory.start(target, warehouse=warehouse)
        again = load_catalog("r", type="rest", uri=f"{restored.url}/iceberg")
        assert ids(again.load_table("PUBLIC.EVENTS")) == [0, 1, 2]
        assert ("PUBLIC", "LATER") not in again.list_tables("PUBLIC")
        assert again.list_views("PUBLIC") == [("PUBLIC", "RECENT")]
    finally:
        factory.stop_all()


def _made_backup(tmp_path: Path) -> tuple[Path, RunningServer, ServerFactory]:
    factory = ServerFactory()
    server = factory.start(f"sqlite:///{tmp_path}/source.db")
    with CatalogClient(server.url) as client:
        client.sql("CREATE TABLE T (ID BIGINT PRIMARY KEY)")
    path = tmp_path / "good.backup"
    asyncio.run(_backup(f"sqlite:///{tmp_path}/source.db", path))
    return path, server, factory


def _refused(path: Path, store: str) -> str:
    with pytest.raises((BackupFileError, UpdateLogError)) as caught:
        asyncio.run(_restore(path, store))
    return str(caught.value)


def test_bad_backups_and_non_empty_stores_are_refused_writing_nothing(tmp_path: Path) -> None:
    path, _, factory = _made_backup(tmp_path)
    try:
        good = path.read_bytes()
        cases = {
            "cut short": good[: len(good) - 10],
            "altered or damaged": _flipped(good, good.index(b"\xa6update") + 24),
            "records do not match": _flipped(good, len(good) - 3),
            "not a catalog backup": b"PK\x03\x04" + good[4:],
            "format 3": good.replace(b"\xa6format\x02", b"\xa6format\x03", 1),
        }
        for expected, content in cases.items():
            bad = tmp_path / "bad.backup"
            bad.write_bytes(content)
            target = tmp_path / f"target-{len(content)}.db"
            message = _refused(bad, f"sqlite:///{target}")
            assert expected in message, (expected, message)
            assert asyncio.run(_empty(f"sqlite:///{target}")), expected

        message = _refused(path, f"sqlite:///{tmp_path}/source.db")
        assert "already holds a catalog" in message
        with pytest.raises(StoreNotEmptyError):
            asyncio.run(_restore(path, f"sqlite:///{tmp_path}/source.db"))
    finally:
        factory.stop_all()


def _flipped(content: bytes, at: int) -> bytes:
    return content[:at] + bytes([content[at] ^ 1]) + content[at + 1 :]


async def _empty(store: str) -> bool:
    log = open_log(store)
    try:
        start, end = log.keys.all_range
        return not await log.store.keys(start, end, limit=1)
    finally:
        await log.close()


def test_the_cli_and_the_admin_endpoint_write_backups_a_restore_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    factory = ServerFactory()
    store = f"sqlite:///{tmp_path}/source.db"
    try:
        server = factory.start(store)
        with CatalogClient(server.url) as client:
            created = client.sql("CREATE TABLE T (ID BIGINT PRIMARY KEY)").version
            client.sql("CREATE TABLE U (ID BIGINT PRIMARY KEY)")
            downloaded = client.backup(tmp_path / "rest.backup", version=created)
        assert (
            downloaded[0] == created and (tmp_path / "rest.backup").stat().st_size == downloaded[2]
        )
        written = run_json(
            capsys, "backup", "--store", store, "--to", str(tmp_path / "cli.backup"), "-o", "json"
        )
        assert written["version"] == created + 1
        via_url = run_json(
            capsys,
            "backup",
            "--url",
            server.url,
            "--to",
            str(tmp_path / "url.backup"),
            "-o",
            "json",
        )
        assert via_url["digest"] == written["digest"]
        restored = run_json(
            capsys,
            "restore",
            "--from",
            str(tmp_path / "rest.backup"),
            "--store",
            f"sqlite:///{tmp_path}/restored.db",
            "-o",
            "json",
        )
        assert restored["version"] == created and restored["digest"] == downloaded[1]
        code, _, err = run(
            capsys,
            "restore",
            "--from",
            str(tmp_path / "cli.backup"),
            "--store",
            f"sqlite:///{tmp_path}/restored.db",
        )
        assert code != 0 and "already holds a catalog" in err
    finally:
        factory.stop_all()

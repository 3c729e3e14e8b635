"""Retention leases: while one holds, compaction and data expiry keep what a read at T needs."""

from __future__ import annotations

import asyncio
import datetime as dt
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.expressions import AlwaysTrue

from api.client import CatalogApiError, CatalogClient
from catalog.leases import RetentionLease
from tests.integration.api.servers import RunningServer, ServerFactory
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows
from tests.integration.iceberg.test_expiry import compact_now

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    factory = ServerFactory()
    try:
        yield factory.start(f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path / "w"))
    finally:
        factory.stop_all()


async def _compact(server: RunningServer, name: str) -> RetentionLease | None:
    """Compact at a new version (no grace for files); return the lease that held it back."""
    manager, _ = await compact_now(server, name)
    return manager.held_back


def _pinned(server: RunningServer, moment: str) -> RestCatalog:
    loaded = load_catalog("pin", type="rest", uri=f"{server.url}/iceberg", warehouse=f"w@{moment}")
    assert isinstance(loaded, RestCatalog)
    return loaded


def test_a_lease_holds_compaction_and_expiry_back_until_released(
    server: RunningServer, tmp_path: Path
) -> None:
    iceberg = load_catalog("c", type="rest", uri=f"{server.url}/iceberg")
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    table.append(rows(table, range(3)))
    first = sorted((tmp_path / "w").rglob("*.parquet"))
    time.sleep(0.05)
    moment = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
    time.sleep(0.05)
    iceberg.load_table("PUBLIC.EVENTS").delete(AlwaysTrue())  # its first file: dead after T
    with CatalogClient(server.url) as client:
        lease = client.take_lease(moment, 600, "nightly-report")
        assert [x.id for x in client.leases()] == [lease.id]
        assert lease.owner == "nightly-report" and lease.principal == "anonymous"

        held = asyncio.run(_compact(server, "MARK1"))
        assert held is not None and held.id == lease.id
        assert all(f.exists() for f in first)  # expiry kept the files a read at T needs
        assert ids(_pinned(server, moment).load_table("PUBLIC.EVENTS")) == [0, 1, 2]

        client.release_lease(lease.id)
        assert client.leases() == []
        assert asyncio.run(_compact(server, "MARK2")) is None
        assert not any(f.exists() for f in first)
        config, deadline = f"{server.url}/iceberg/v1/config", time.monotonic() + 10
        while True:  # the server notices the other node's compaction within a second or so
            answer = requests.get(config, params={"warehouse": f"w@{moment}"}, timeout=10)
            if answer.status_code != 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert answer.status_code == 410, answer.text  # compacted past T now
        with pytest.raises(CatalogApiError) as refused:
            client.take_lease(moment, 600, "too-late")
        assert refused.value.code == "VERSION_COMPACTED"


def test_a_lease_ends_on_its_own(server: RunningServer) -> None:
    with CatalogClient(server.url) as client:
        lease = client.take_lease(client.now(), 1, "short")
        assert [x.id for x in client.leases()] == [lease.id]
        deadline = time.monotonic() + 10
        while client.leases() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert client.leases() == []
        with pytest.raises(CatalogApiError) as gone:
            client.release_lease(lease.id)
        assert gone.value.code == "LEASE_NOT_FOUND"


@pytest.mark.parametrize(
    ("body", "status", "named"),
    [
        ({"at": "2026-01-01T00:00:00Z", "ttl_s": 0, "owner": "a"}, 422, "ttl_s"),
        ({"at": "2026-01-01T00:00:00Z", "ttl_s": 8 * 86400, "owner": "a"}, 422, "a week"),
        ({"at": "2999-01-01T00:00:00Z", "ttl_s": 60, "owner": "a"}, 422, "further ahead"),
        ({"at": "yesterday", "ttl_s": 60, "owner": "a"}, 422, "RFC 3339"),
        ({"at": "2026-01-01T00:00:00Z", "ttl_s": 60, "owner": " "}, 422, "printable"),
    ],
)
def test_bad_leases_are_refused_naming_what_is_wrong(
    server: RunningServer, body: dict[str, Any], status: int, named: str
) -> None:
    answer = requests.post(f"{server.url}/v1/leases", json=body, timeout=10)
    assert answer.status_code == status, answer.text
    assert named in answer.text
    assert requests.get(f"{server.url}/v1/leases", timeout=10).json() == {"leases": []}


def test_the_cli_takes_lists_and_releases_leases(server: RunningServer) -> None:
    def cli(*argv: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "api.cli", "--url", server.url, "-o", "json", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        import json

        return json.loads(done.stdout)

    now = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
    taken = cli("lease", "take", "--at", now, "--ttl", "300", "--owner", "cli-job")
    assert taken["owner"] == "cli-job"
    assert [x["id"] for x in cli("lease", "list")["leases"]] == [taken["id"]]
    assert cli("lease", "release", taken["id"]) == {"released": taken["id"]}
    assert cli("lease", "list") == {"leases": []}

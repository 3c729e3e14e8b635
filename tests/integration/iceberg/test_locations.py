"""A table's location: asked for on create or by ``set-location``, refused outside its rules."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.table import Table

from api.client import CatalogClient
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows
from tests.integration.iceberg.test_expiry import compacted_stats

pytestmark = pytest.mark.timeout(60)


def _warehouse(server: RunningServer) -> Path:
    return Path(server.settings.warehouse or "")


def placed_events(iceberg: RestCatalog, location: str, written: range) -> Table:
    """Create PUBLIC.EVENTS at ``location`` and append the rows of ids ``written``."""
    table: Table = iceberg.create_table("PUBLIC.EVENTS", EVENTS, location=location)
    table.append(rows(table, written))
    return table


def test_a_created_table_lives_where_it_asked_and_every_reader_finds_it_there(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    asked = _warehouse(iceberg_server) / "lake" / "events"
    table = placed_events(iceberg, f"file://{asked}", range(1, 4))
    assert table.location() == f"file://{asked}"
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert loaded.location() == f"file://{asked}"
    assert ids(loaded) == [1, 2, 3]
    written = [t.file.file_path for t in loaded.scan().plan_files()]
    assert written and all(p.startswith(f"file://{asked}/data/") for p in written)
    assert client.table("PUBLIC", "EVENTS").location == f"file://{asked}"
    # Metadata files stay in the catalog's metadata folder, not in the table's.
    assert loaded.metadata_location.startswith(
        f"file://{_warehouse(iceberg_server)}/metadata/table_"
    )


def _create(server: RunningServer, name: str, location: str) -> httpx.Response:
    body = {
        "name": name,
        "location": location,
        "schema": {
            "type": "struct",
            "schema-id": 0,
            "fields": [{"id": 1, "name": "ID", "type": "long", "required": True}],
        },
    }
    return httpx.post(f"{server.url}/iceberg/v1/namespaces/PUBLIC/tables", json=body, timeout=10)


def test_locations_the_catalog_cannot_own_are_refused_and_nothing_is_written(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer, tmp_path: Path
) -> None:
    warehouse = _warehouse(iceberg_server)
    iceberg.create_table("PUBLIC.TAKEN", EVENTS, location=str(warehouse / "lake" / "taken"))
    next_id = client.table("PUBLIC", "TAKEN").id + 1
    version = client.versions().latest
    refused = {
        str(tmp_path / "elsewhere"): "is not inside the warehouse",
        str(warehouse): "is not inside the warehouse",
        "s3://bucket/t": "is not inside the warehouse",
        "gs://bucket/t": "in a local folder or on S3",
        "file://host/t": "names no host",
        "lake/relative": "an absolute path",
        f"{warehouse}/lake/../lake/x": "an absolute path without . or ..",
        str(warehouse / "metadata" / "t"): "the catalog's metadata folder",
        str(warehouse / f"table_{next_id + 5}"): f"gets id {next_id + 5}",
        str(warehouse / "lake" / "taken"): "overlaps the location",
        str(warehouse / "lake" / "taken" / "inner"): "overlaps the location",
        str(warehouse / "lake"): "overlaps the location",
    }
    for location, named in refused.items():
        answer = _create(iceberg_server, "PLACED", location)
        error = answer.json()["error"]
        assert (answer.status_code, error["type"]) == (400, "BadRequestException"), location
        assert named in error["message"], (location, error["message"])
    assert client.versions().latest == version
    assert iceberg.list_tables("PUBLIC") == [("PUBLIC", "TAKEN")]


def _set_location(server: RunningServer, location: str, table: str = "EVENTS") -> httpx.Response:
    """Commit ``set-location`` to PUBLIC.<table> (PyIceberg has no ``update_location``)."""
    body = {"requirements": [], "updates": [{"action": "set-location", "location": location}]}
    url = f"{server.url}/iceberg/v1/namespaces/PUBLIC/tables/{table}"
    return httpx.post(url, json=body, timeout=10)


def test_set_location_moves_a_table_without_snapshots_only(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    warehouse = _warehouse(iceberg_server)
    iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    version = client.versions().latest
    assert _set_location(iceberg_server, str(warehouse / "moved")).status_code == 200
    assert client.versions().latest == version + 1
    moved = iceberg.load_table("PUBLIC.EVENTS")
    assert moved.location() == str(warehouse / "moved")
    moved.append(rows(moved, range(1, 3)))
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [1, 2]
    assert any((warehouse / "moved" / "data").glob("*.parquet"))
    version = client.versions().latest
    answer = _set_location(iceberg_server, str(warehouse / "again"))
    assert answer.status_code == 400
    assert "set-location moves only a table without data" in answer.json()["error"]["message"]
    assert client.versions().latest == version


def test_a_dropped_tables_own_location_goes_with_the_expiry(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    warehouse = _warehouse(iceberg_server)
    folder = warehouse / "lake" / "gone"
    placed_events(iceberg, str(folder), range(1, 3))
    assert any(folder.rglob("*.parquet"))
    iceberg.create_table("PUBLIC.MOVED", EVENTS)
    first = warehouse / f"table_{client.table('PUBLIC', 'MOVED').id}"
    assert first.is_dir()  # its engine folders
    assert _set_location(iceberg_server, str(warehouse / "lake" / "moved"), "MOVED").is_success
    moved = iceberg.load_table("PUBLIC.MOVED")
    moved.append(rows(moved, range(1, 3)))
    iceberg.drop_table("PUBLIC.EVENTS")
    iceberg.drop_table("PUBLIC.MOVED")
    stats = asyncio.run(compacted_stats(iceberg_server))
    assert stats["folders_deleted"] == 2
    assert not folder.exists() and not first.exists()
    assert not (warehouse / "lake" / "moved").exists()

"""``CatalogTests``' rename behaviours, through PyIceberg's RestCatalog."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import NoSuchTableError, TableAlreadyExistsError

from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.behaviours.support import (
    NS,
    RENAMED_TABLE,
    SCHEMA,
    TABLE,
    data_file,
    fast_append,
)

pytestmark = pytest.mark.timeout(60)


def test_rename_table(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    assert not iceberg.table_exists(TABLE)
    iceberg.create_table(TABLE, SCHEMA)
    assert iceberg.table_exists(TABLE)
    assert not iceberg.table_exists(RENAMED_TABLE)
    iceberg.rename_table(TABLE, RENAMED_TABLE)
    assert iceberg.table_exists(RENAMED_TABLE)
    assert not iceberg.table_exists(TABLE)
    iceberg.drop_table(RENAMED_TABLE)
    assert iceberg.list_tables(NS) == []


def test_create_table_in_unique_location(iceberg: RestCatalog) -> None:
    """The RCK disables this one (its server is not configurable per test); Java's client asks
    for unique locations with a property PyIceberg lacks, but this server picks the location
    itself, so the behaviour (a table created again after a rename gets a location of its own)
    is checked as it is."""
    iceberg.create_namespace(NS)
    iceberg.create_table(TABLE, SCHEMA)
    iceberg.rename_table(TABLE, RENAMED_TABLE)
    iceberg.create_table(TABLE, SCHEMA)
    table = iceberg.load_table(TABLE)
    renamed = iceberg.load_table(RENAMED_TABLE)
    assert table.location() != renamed.location()


def test_drop_after_rename_doesnt_corrupt_table(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    initial = iceberg.create_table(TABLE, SCHEMA)
    fast_append(initial, data_file(initial, "data-a.parquet"))
    iceberg.rename_table(TABLE, RENAMED_TABLE)
    new = iceberg.create_table(TABLE, SCHEMA)
    fast_append(new, data_file(new, "data-b.parquet"))
    iceberg.purge_table(RENAMED_TABLE)
    assert not iceberg.table_exists(RENAMED_TABLE)
    assert iceberg.table_exists(TABLE)
    tasks = list(iceberg.load_table(TABLE).scan().plan_files())
    assert tasks
    for task in tasks:
        assert Path(task.file.file_path.removeprefix("file://")).exists()


def test_rename_table_missing_source_table(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    assert not iceberg.table_exists(TABLE)
    assert not iceberg.table_exists(RENAMED_TABLE)
    with pytest.raises(NoSuchTableError, match="Table does not exist"):
        iceberg.rename_table(TABLE, RENAMED_TABLE)
    assert not iceberg.table_exists(RENAMED_TABLE)


def test_rename_table_namespace_missing(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    """PyIceberg checks the destination namespace itself and never sends this rename, so the
    request is the one Java's client sends, written out."""
    source = ("ns", "tbl")
    iceberg.create_namespace(("ns",))
    assert not iceberg.table_exists(source)
    iceberg.create_table(source, SCHEMA)
    assert iceberg.table_exists(source)
    body = {
        "source": {"namespace": ["ns"], "name": "tbl"},
        "destination": {"namespace": ["non_existing"], "name": "renamedTable"},
    }
    answer = requests.post(f"{iceberg_server.url}/iceberg/v1/tables/rename", json=body, timeout=10)
    error = answer.json()["error"]
    assert (answer.status_code, error["type"]) == (404, "NoSuchNamespaceException")
    assert "Namespace does not exist: non_existing" in error["message"]


def test_rename_table_destination_table_already_exists(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    assert not iceberg.table_exists(TABLE)
    iceberg.create_table(TABLE, SCHEMA)
    assert iceberg.table_exists(TABLE)
    assert not iceberg.table_exists(RENAMED_TABLE)
    iceberg.create_table(RENAMED_TABLE, SCHEMA)
    assert iceberg.table_exists(RENAMED_TABLE)
    with pytest.raises(TableAlreadyExistsError, match="Table already exists"):
        iceberg.rename_table(TABLE, RENAMED_TABLE)
    assert iceberg.table_exists(TABLE)
    assert iceberg.table_exists(RENAMED_TABLE)
    source = iceberg.load_table(TABLE).metadata.table_uuid
    assert source != iceberg.load_table(RENAMED_TABLE).metadata.table_uuid

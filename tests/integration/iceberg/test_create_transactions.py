"""Create transactions through PyIceberg: a staged create, then one commit that creates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import requests
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException

from api.client import CatalogClient
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import ORDERS

pytestmark = pytest.mark.timeout(60)


def _local(location: str) -> Path:
    assert location.startswith("file:///")
    return Path(location.removeprefix("file://"))


def test_a_staged_create_creates_nothing_until_its_commit(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    url = f"{iceberg_server.url}/iceberg/v1/namespaces/PUBLIC/tables"
    body: dict[str, Any] = {
        "name": "STAGED",
        "schema": ORDERS.model_dump(by_alias=True),
        "stage-create": True,
    }
    staged = requests.post(url, json=body, timeout=10)
    assert staged.status_code == 200, staged.text
    assert staged.json().get("metadata-location") is None
    # A new table's first schema is numbered 0, as Iceberg numbers it (DuckDB relies on it).
    assert staged.json()["metadata"]["current-schema-id"] == 0
    assert [s["schema-id"] for s in staged.json()["metadata"]["schemas"]] == [0]
    assert not iceberg.table_exists("PUBLIC.STAGED")
    with iceberg.create_table_transaction("PUBLIC.STAGED", ORDERS) as tx:
        tx.set_properties(owner="etl")
        staged_uuid = tx.table_metadata.table_uuid
        staged_location = tx.table_metadata.location
    table = iceberg.load_table("PUBLIC.STAGED")
    assert table.metadata.table_uuid == staged_uuid  # the engine's assign-uuid stands
    assert table.location() == staged_location
    assert table.properties["owner"] == "etl"
    described = client.table("PUBLIC", "STAGED")
    assert described.column_names(described.primary_key) == ["ID", "REGION"]
    written = json.loads(_local(table.metadata_location).read_text())
    assert written["table-uuid"] == str(staged_uuid)
    assert written["current-snapshot-id"] == -1


def test_a_create_transaction_with_data_is_one_create_and_one_data_commit(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    rows = pa.Table.from_pylist(
        [
            {"ID": 1, "REGION": "eu", "AMOUNT": None, "NOTE": "a"},
            {"ID": 2, "REGION": "us", "AMOUNT": None, "NOTE": None},
        ],
        schema=ORDERS.as_arrow(),
    )
    with iceberg.create_table_transaction("PUBLIC.CTAS", ORDERS) as tx:
        tx.append(rows)
    table = iceberg.load_table("PUBLIC.CTAS")
    assert sorted(table.scan().to_arrow().column("ID").to_pylist()) == [1, 2]
    commits = client.data_commits(client.table("PUBLIC", "CTAS").id).commits
    assert len(commits) == 1


def test_assert_create_on_an_existing_table_fails_the_commit(iceberg: RestCatalog) -> None:
    tx = iceberg.create_table_transaction("PUBLIC.TWICE", ORDERS)
    iceberg.create_table("PUBLIC.TWICE", ORDERS)
    with pytest.raises(CommitFailedException, match="already exists"):
        tx.commit_transaction()


def test_every_answer_names_a_metadata_file_that_is_there(iceberg: RestCatalog) -> None:
    created = iceberg.create_table("PUBLIC.FILES", ORDERS)
    first = created.metadata_location
    assert _local(first).is_file()
    with created.transaction() as tx:
        tx.set_properties(owner="etl")
    loaded = iceberg.load_table("PUBLIC.FILES")
    assert loaded.metadata_location != first
    written = json.loads(_local(loaded.metadata_location).read_text())
    assert written["properties"]["owner"] == "etl"
    assert [e["metadata-file"] for e in written["metadata-log"]] == [first]

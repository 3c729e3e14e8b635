"""Register: a table adopted from its metadata file reads what it read; bad files are refused."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import BadRequestError, TableAlreadyExistsError
from pyiceberg.expressions import EqualTo

from api.client import CatalogClient
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows
from tests.integration.iceberg.test_expiry import compacted_stats

pytestmark = pytest.mark.timeout(90)


def _written_then_dropped(iceberg: RestCatalog) -> tuple[Any, str]:
    """Write PUBLIC.EVENTS with PyIceberg (appends, a delete, a tag, a write to a branch),
    drop it; return the table as last loaded and its metadata file."""
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS, properties={"owner": "someone"})
    table.append(rows(table, range(1, 4)))
    table.append(rows(table, range(4, 6)))
    table = iceberg.load_table("PUBLIC.EVENTS")
    first = table.snapshots()[0].snapshot_id
    table.manage_snapshots().create_tag(first, "v1").commit()
    table = iceberg.load_table("PUBLIC.EVENTS")
    table.append(rows(table, range(8, 9)), branch="audit")  # a branch off main's line
    table = iceberg.load_table("PUBLIC.EVENTS")
    table.delete(EqualTo(term="ID", value=2))
    original = iceberg.load_table("PUBLIC.EVENTS")
    assert original.metadata_location is not None
    iceberg.drop_table("PUBLIC.EVENTS")
    return original, original.metadata_location


def test_a_registered_table_reads_what_its_file_held_in_another_namespace(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    original, metadata_file = _written_then_dropped(iceberg)
    iceberg.create_namespace("COPY")
    version = client.versions().latest
    registered = iceberg.register_table(("COPY", "EVENTS"), metadata_file)
    assert client.versions().latest == version + 1  # one catalog version (and data commits)
    assert ids(registered) == [1, 3, 4, 5]
    assert registered.location() == original.location()
    assert registered.metadata.table_uuid == original.metadata.table_uuid
    assert registered.schemas() == original.schemas()
    assert registered.specs() == original.specs()
    assert registered.sort_orders() == original.sort_orders()
    assert registered.properties["owner"] == "someone"
    assert registered.snapshots() == original.snapshots()
    assert registered.current_snapshot() == original.current_snapshot()
    assert registered.metadata.refs == original.metadata.refs
    assert registered.history() == original.history()  # the history it came with
    tagged = registered.snapshot_by_name("v1")
    assert tagged is not None and ids(registered, tagged.snapshot_id) == [1, 2, 3]
    audit = registered.snapshot_by_name("audit")
    assert audit is not None and ids(registered, audit.snapshot_id) == [8]
    described = client.table("COPY", "EVENTS")
    assert [col.id for col in described.columns] == [f.field_id for f in EVENTS.fields]
    commits = client.data_commits(described.id, history=True).commits
    assert len(commits) == len(original.snapshots()) - 1  # the branch's is no data commit
    registered.append(rows(registered, range(6, 8)))
    appended = iceberg.load_table("COPY.EVENTS")
    assert ids(appended) == [1, 3, 4, 5, 6, 7]
    *kept, latest = appended.history()
    assert kept == original.history() and latest.timestamp_ms > kept[-1].timestamp_ms
    # The dropped table's folder is the registered one's now: the expiry leaves it.
    asyncio.run(compacted_stats(iceberg_server))
    assert ids(iceberg.load_table("COPY.EVENTS")) == [1, 3, 4, 5, 6, 7]


def test_register_of_a_taken_name_or_with_overwrite_is_refused(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    assert table.metadata_location is not None
    with pytest.raises(TableAlreadyExistsError, match=r"Table already exists: PUBLIC\.EVENTS"):
        iceberg.register_table("PUBLIC.EVENTS", table.metadata_location)
    url = f"{iceberg_server.url}/iceberg/v1/namespaces/PUBLIC/register"
    body = {"name": "OTHER", "metadata-location": table.metadata_location, "overwrite": True}
    answer = httpx.post(url, json=body, timeout=10)
    assert (answer.status_code, answer.json()["error"]["type"]) == (
        406,
        "UnsupportedOperationException",
    )
    # The file of a live table names that table's location: a second table cannot have it.
    body["overwrite"] = False
    answer = httpx.post(url, json=body, timeout=10)
    assert answer.status_code == 400
    assert "overlaps the location" in answer.json()["error"]["message"]


def _metadata(file: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(Path(file.removeprefix("file://")).read_text())
    return loaded


def test_a_metadata_file_the_catalog_cannot_read_is_refused_naming_it(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer, tmp_path: Path
) -> None:
    _, metadata_file = _written_then_dropped(iceberg)
    good = _metadata(metadata_file)
    bad = tmp_path / "warehouse" / "bad"
    bad.mkdir()
    (bad / "link.json").symlink_to(metadata_file.removeprefix("file://"))
    (bad / "garbage.json").write_text("{not json")
    (bad / "array.json").write_text("[]")
    (bad / "partial.json").write_text(json.dumps({"format-version": 2}))
    (bad / "v1.json").write_text(json.dumps({**good, "format-version": 1}))
    with (bad / "huge.json").open("wb") as huge:
        huge.truncate(17 * 1024 * 1024)
    os.mkfifo(bad / "fifo.json")
    (tmp_path / "outside.json").write_text(json.dumps(good))
    refused = {
        str(bad / "missing.json"): "does not exist",
        str(tmp_path / "outside.json"): "is not inside the warehouse",
        "s3://bucket/m.json": "is not inside the warehouse",
        "gs://bucket/m.json": "in a local folder or on S3",
        str(bad / "link.json"): "symbolic link",
        str(bad): "is not a regular file",
        str(bad / "fifo.json"): "is not a regular file",
        str(bad / "garbage.json"): "is not JSON",
        str(bad / "array.json"): "is not a JSON object",
        str(bad / "partial.json"): "is not Iceberg table metadata",
        str(bad / "v1.json"): "format version 2",
        str(bad / "huge.json"): f"has {17 * 1024 * 1024} bytes, more than the",
    }
    version = client.versions().latest
    url = f"{iceberg_server.url}/iceberg/v1/namespaces/PUBLIC/register"
    for location, named in refused.items():
        answer = httpx.post(url, json={"name": "T", "metadata-location": location}, timeout=10)
        error = answer.json()["error"]
        assert (answer.status_code, error["type"]) == (400, "BadRequestException"), location
        assert named in error["message"] and location in error["message"], error["message"]
    assert client.versions().latest == version
    assert iceberg.list_tables("PUBLIC") == []


def test_a_snapshot_that_cannot_be_recorded_leaves_no_table(iceberg: RestCatalog) -> None:
    original, metadata_file = _written_then_dropped(iceberg)
    body = _metadata(metadata_file)
    last = original.current_snapshot()
    assert last is not None
    Path(last.manifest_list.removeprefix("file://")).write_bytes(b"not avro")
    copy = Path(metadata_file.removeprefix("file://")).with_name("broken.metadata.json")
    copy.write_text(json.dumps(body))
    with pytest.raises(BadRequestError, match="manifest"):
        iceberg.register_table("PUBLIC.EVENTS", str(copy))
    assert iceberg.list_tables("PUBLIC") == []
    assert not iceberg.table_exists("PUBLIC.EVENTS")

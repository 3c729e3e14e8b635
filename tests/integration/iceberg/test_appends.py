"""PyIceberg writes through the Iceberg REST catalog: each snapshot is one data commit."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import requests
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import BadRequestError, CommitFailedException
from pyiceberg.expressions import EqualTo
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.table import Table
from pyiceberg.typedef import Record

from api.client import CatalogClient
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.conftest import rest_catalog
from tests.integration.iceberg.schemas import EVENTS

pytestmark = pytest.mark.timeout(60)


def rows(table: Table, ids: range) -> pa.Table:
    """Return rows of ``table`` with the given ids."""
    return pa.Table.from_pylist(
        [{"ID": i, "COUNT": i * 10, "RATIO": i / 2, "PRICE": None} for i in ids],
        schema=table.schema().as_arrow(),
    )


def ids(table: Table, snapshot_id: int | None = None) -> list[int]:
    """Return the ids a scan of ``table`` (at a snapshot, if given) reads, in order."""
    read = table.scan(snapshot_id=snapshot_id).to_arrow()
    return sorted(read.column("ID").to_pylist())


def test_an_append_is_a_data_commit_a_scan_reads(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    version = client.versions().latest
    table.append(rows(table, range(1, 4)))
    assert client.versions().latest == version  # data, not DDL
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(loaded) == [1, 2, 3]
    snapshot = loaded.current_snapshot()
    assert snapshot is not None and snapshot.snapshot_id == table.current_snapshot().snapshot_id
    assert loaded.metadata.refs["main"].snapshot_id == snapshot.snapshot_id
    [commit] = client.data_commits(client.table("PUBLIC", "EVENTS").id).commits
    assert commit.iceberg is not None and commit.iceberg.snapshot_id == snapshot.snapshot_id
    assert commit.iceberg.operation == "append"
    [file] = commit.files
    assert file.path.startswith("data/") and file.rows == 3
    assert file.stats is not None
    by_id = {s.column_id: s for s in file.stats}  # a table created through Iceberg: ids from 1
    assert (by_id[1].lower, by_id[1].upper, by_id[1].nulls) == (1, 3, 0)
    assert by_id[4].nulls == 3 and by_id[4].lower is None


def test_two_appends_and_time_travel_to_the_first(iceberg: RestCatalog) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    table.append(rows(table, range(1, 3)))
    first = table.current_snapshot()
    assert first is not None
    table.append(rows(table, range(3, 5)))
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(loaded) == [1, 2, 3, 4]
    assert ids(loaded, first.snapshot_id) == [1, 2]
    assert next(s.snapshot_id for s in loaded.snapshots()) == first.snapshot_id
    assert next(e.snapshot_id for e in loaded.metadata.snapshot_log) == first.snapshot_id
    assert loaded.metadata.last_sequence_number == 2


def test_an_append_reads_only_the_manifest_it_wrote(iceberg: RestCatalog) -> None:
    """A commit's cost does not grow with the table's history: earlier manifests stay unread."""
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    table.append(rows(table, range(1, 3)))
    first = table.current_snapshot()
    assert first is not None
    [manifest] = first.manifests(table.io)
    kept = Path(manifest.manifest_path.removeprefix("file://")).read_bytes()
    Path(manifest.manifest_path.removeprefix("file://")).write_bytes(b"not a manifest")
    table.append(rows(table, range(3, 5)))  # would fail reading the spoiled manifest
    Path(manifest.manifest_path.removeprefix("file://")).write_bytes(kept)
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [1, 2, 3, 4]


def without_retries(table: Table) -> Table:
    """Return ``table`` as a client that does not retry a failed commit sees it."""
    properties = {**table.metadata.properties, "commit.retry.num-retries": "0"}
    table.metadata = table.metadata.model_copy(update={"properties": properties})
    return table


def test_a_stale_append_fails_and_writes_nothing(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    first = iceberg.load_table("PUBLIC.EVENTS")
    second = without_retries(iceberg.load_table("PUBLIC.EVENTS"))
    first.append(rows(first, range(1, 3)))
    with pytest.raises(CommitFailedException, match="branch main exists, at snapshot"):
        second.append(rows(second, range(10, 12)))
    table_id = client.table("PUBLIC", "EVENTS").id
    assert len(client.data_commits(table_id).commits) == 1
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [1, 2]
    third = without_retries(iceberg.load_table("PUBLIC.EVENTS"))
    first.append(rows(first, range(3, 4)))
    with pytest.raises(CommitFailedException, match="branch main is at snapshot"):
        third.append(rows(third, range(10, 12)))
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [1, 2, 3]


def test_pyicebergs_own_retry_lands_a_stale_append_on_top(iceberg: RestCatalog) -> None:
    iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    first = iceberg.load_table("PUBLIC.EVENTS")
    second = iceberg.load_table("PUBLIC.EVENTS")
    first.append(rows(first, range(1, 3)))
    second.append(rows(second, range(10, 12)))  # refused once, then made on the new head
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [1, 2, 10, 11]


def test_a_commit_sent_again_is_answered_once(iceberg: RestCatalog, client: CatalogClient) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    commits: list[requests.PreparedRequest] = []

    def record(response: requests.Response, *args: object, **kwargs: object) -> None:
        if response.request.method == "POST" and response.request.url.endswith("/EVENTS"):  # type: ignore[union-attr]
            commits.append(response.request)

    iceberg._session.hooks["response"].append(record)
    table.append(rows(table, range(1, 3)))
    [sent] = commits
    again = iceberg._session.send(sent.copy())
    assert again.status_code == 200, again.text
    table_id = client.table("PUBLIC", "EVENTS").id
    [commit] = client.data_commits(table_id).commits
    assert again.json()["metadata"]["current-snapshot-id"] == commit.iceberg.snapshot_id  # type: ignore[union-attr]
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [1, 2]


def test_a_delete_rewrites_files_and_the_commit_removes_the_old(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    table.append(rows(table, range(1, 5)))
    before = table.current_snapshot()
    table.delete(EqualTo(term="ID", value=1))
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(loaded) == [2, 3, 4]
    assert ids(loaded, before.snapshot_id) == [1, 2, 3, 4]
    table_id = client.table("PUBLIC", "EVENTS").id
    first, second = client.data_commits(table_id, history=True).commits
    assert second.removed == tuple(f.path for f in first.files)
    assert second.iceberg is not None and second.iceberg.operation in ("overwrite", "delete")
    visible = [f.path for c in client.data_commits(table_id).commits for f in c.files]
    assert visible == [f.path for f in second.files]
    table.overwrite(rows(table, range(7, 9)))
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [7, 8]


def parquet_file(table: Table, written: Path) -> DataFile:
    """Write rows 1 and 2 of ``table`` to ``written``; return it as an Iceberg data file."""
    pq.write_table(rows(table, range(1, 3)), written)
    return DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=str(written),
        file_format=FileFormat.PARQUET,
        partition=Record(),
        record_count=2,
        file_size_in_bytes=written.stat().st_size,
    )


def fast_append(table: Table, data_file: DataFile) -> None:
    """Commit one snapshot that adds ``data_file`` to ``table``, as PyIceberg appends."""
    with table.transaction() as transaction:  # noqa: SIM117
        with transaction.update_snapshot().fast_append() as append:
            append.append_data_file(data_file)


def test_a_data_file_outside_the_table_folder_is_refused(
    iceberg: RestCatalog, client: CatalogClient, tmp_path: Path
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    written = tmp_path / "elsewhere.parquet"
    outside = parquet_file(table, written)
    with pytest.raises(BadRequestError, match=f"data file {written} is outside the table's"):
        fast_append(table, outside)
    table_id = client.table("PUBLIC", "EVENTS").id
    assert client.data_commits(table_id).commits == []
    assert iceberg.load_table("PUBLIC.EVENTS").current_snapshot() is None


def test_concurrent_appends_all_land_once_each(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    iceberg.create_table("PUBLIC.EVENTS", EVENTS)

    def append(writer: int) -> None:
        table = rest_catalog(iceberg_server).load_table("PUBLIC.EVENTS")
        table.append(rows(table, range(writer * 10, writer * 10 + 2)))  # retried on a lost race

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(append, range(4)))
    table_id = client.table("PUBLIC", "EVENTS").id
    commits = client.data_commits(table_id).commits
    assert [c.seq for c in commits] == [1, 2, 3, 4]
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [0, 1, 10, 11, 20, 21, 30, 31]


def test_unreadable_or_missing_files_are_refused_and_the_server_stays_up(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    metadata = Path(table.location().removeprefix("file://")) / "metadata"
    metadata.mkdir(parents=True, exist_ok=True)
    garbage = metadata / "snap-1-garbage.avro"
    garbage.write_bytes(bytes(range(256)) * 4)
    snapshot: dict[str, Any] = {"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 1}
    snapshot |= {"manifest-list": str(garbage), "summary": {"operation": "append"}}
    body: dict[str, Any] = {
        "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}],
        "updates": [
            {"action": "add-snapshot", "snapshot": snapshot},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 1},
        ],
    }
    url = f"{iceberg_server.url}/iceberg/v1/namespaces/PUBLIC/tables/EVENTS"
    answer = requests.post(url, json=body, timeout=10)
    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == (
        f"manifest list {garbage} cannot be read as an Iceberg manifest list"
    )
    # A real snapshot whose data file is gone: PyIceberg writes it, the file is removed.
    written = Path(table.location().removeprefix("file://")) / "data" / "gone.parquet"
    written.parent.mkdir(exist_ok=True)
    gone = parquet_file(table, written)
    written.unlink()
    with pytest.raises(BadRequestError, match=f"data file file://{written} does not exist"):
        fast_append(table, gone)
    assert client.data_commits(client.table("PUBLIC", "EVENTS").id).commits == []
    assert requests.get(f"{iceberg_server.url}/healthz", timeout=5).status_code == 200

"""PyIceberg reads the data commits of the Spark source: the server writes their manifests.

The files are written as the Spark source's executors write them (``write_partitions``) and
committed as its driver commits them (``POST /v1/data/commits``); no Spark session is needed
to make such a commit.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.expressions import LessThan
from pyiceberg.table.snapshots import Operation

from api.client import CatalogClient
from catalog.data.files import DataCommit, DataMode
from catalog.data.warehouse import table_folder
from spark.evolution import conform
from spark.table_folder import TableFolder
from spark.warehouse import write_partitions
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows

pytestmark = pytest.mark.timeout(60)


def spark_commit(
    client: CatalogClient, server: RunningServer, ids: range, mode: DataMode = "append"
) -> DataCommit:
    """Write rows with ``ids`` as the Spark source writes them into EVENTS, and commit them."""
    table = client.table("PUBLIC", "EVENTS")
    batch = pa.RecordBatch.from_pylist(
        [{"ID": i, "COUNT": i * 10, "RATIO": None, "PRICE": None} for i in ids]
    )
    data = conform(batch, table.columns, {c.id: c.name for c in table.columns}, table.primary_key)
    warehouse = str(Path(server.settings.warehouse or "").resolve())
    folder = TableFolder(table_folder(warehouse, table.id))
    files = write_partitions(data, table.columns, folder, [], 1, uuid.uuid4().hex[:12])
    return client.commit_data(
        table.id,
        files,
        schema_version=table.schema_version,
        mode=mode,
        request_id=f"spark-write-{uuid.uuid4().hex}",
    )


def test_pyiceberg_scans_what_the_spark_source_committed(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    spark_commit(client, iceberg_server, range(1, 4))
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(loaded) == [1, 2, 3]
    snapshot = loaded.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    assert snapshot.summary.operation is Operation.APPEND
    assert snapshot.summary["added-records"] == "3"
    manifest_list = Path(snapshot.manifest_list.removeprefix("file://"))
    assert manifest_list.parent == Path(loaded.location().removeprefix("file://")) / "metadata"
    written = manifest_list.stat().st_mtime_ns
    again = iceberg.load_table("PUBLIC.EVENTS")  # the manifests are written once
    assert again.current_snapshot() == snapshot
    assert manifest_list.stat().st_mtime_ns == written
    # The null counts and bounds are in the manifest: scans that no row passes skip the file.
    assert loaded.scan(row_filter="RATIO IS NOT NULL").plan_files() == []
    assert loaded.scan(row_filter="ID > 3").plan_files() == []
    assert len(loaded.scan(row_filter="ID = 3").plan_files()) == 1


def test_spark_and_pyiceberg_commits_interleave(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    spark_commit(client, iceberg_server, range(1, 3))
    table = iceberg.load_table("PUBLIC.EVENTS")
    table.append(rows(table, range(3, 5)))
    spark_commit(client, iceberg_server, range(5, 7))
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(loaded) == [1, 2, 3, 4, 5, 6]
    history = loaded.snapshots()
    assert [ids(loaded, s.snapshot_id) for s in history] == [
        [1, 2],
        [1, 2, 3, 4],
        [1, 2, 3, 4, 5, 6],
    ]
    assert [s.parent_snapshot_id for s in history[1:]] == [s.snapshot_id for s in history[:-1]]
    assert [s.sequence_number for s in history] == [1, 2, 3]
    # A delete rewrites a file the Spark source wrote; the catalog no longer shows it.
    loaded.delete(LessThan(term="ID", value=2))
    table_id = client.table("PUBLIC", "EVENTS").id
    visible = client.data_commits(table_id).commits
    read = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(read) == [2, 3, 4, 5, 6]
    assert sum(f.rows for c in visible for f in c.files) == 5
    # An overwrite by the Spark source hides every earlier file, for PyIceberg too.
    spark_commit(client, iceberg_server, range(9, 10), mode="overwrite")
    read = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(read) == [9]
    read.append(rows(read, range(10, 11)))
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [9, 10]

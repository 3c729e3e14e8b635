"""PyIceberg's tags, branches and snapshot expiry: catalog versions beside the data commits."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import BadRequestError
from pyiceberg.table import Table
from pyiceberg.table.statistics import BlobMetadata, StatisticsFile
from pyiceberg.table.update import (
    RemoveSchemasUpdate,
    RemoveSnapshotRefUpdate,
    RemoveSnapshotsUpdate,
    SetSnapshotRefUpdate,
    TableUpdate,
)
from pyiceberg.types import StringType

from api.client import CatalogClient
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows

pytestmark = pytest.mark.timeout(60)


def _three_appends(iceberg: RestCatalog) -> tuple[Table, list[int]]:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    for start in (1, 3, 5):
        table.append(rows(table, range(start, start + 2)))
    return table, [s.snapshot_id for s in table.snapshots()]


def test_a_tag_and_a_branch_are_catalog_versions_and_read_their_snapshot(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table, (first, second, _) = _three_appends(iceberg)
    version = client.versions().latest
    table.manage_snapshots().create_tag(first, "v1").create_branch(second, "audit").commit()
    assert client.versions().latest == version + 1  # one catalog version, no data commit
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert loaded.metadata.refs["v1"].snapshot_id == first
    assert loaded.metadata.refs["v1"].snapshot_ref_type == "tag"
    assert loaded.metadata.refs["audit"].snapshot_id == second
    assert loaded.metadata.refs["main"].snapshot_id == loaded.current_snapshot().snapshot_id
    tag = loaded.snapshot_by_name("v1")
    assert tag is not None and ids(loaded, tag.snapshot_id) == [1, 2]
    loaded.append(rows(loaded, range(7, 8)))  # main moves on; the tag stays
    again = iceberg.load_table("PUBLIC.EVENTS")
    assert again.metadata.refs["v1"].snapshot_id == first
    assert ids(again) == [1, 2, 3, 4, 5, 6, 7]
    again.manage_snapshots().remove_tag("v1").remove_branch("audit").commit()
    assert set(iceberg.load_table("PUBLIC.EVENTS").metadata.refs) == {"main"}


def _send(iceberg: RestCatalog, table: Table, update: TableUpdate) -> None:
    """Commit ``update`` as is (PyIceberg's own checks would refuse it before sending)."""
    iceberg.commit_table(table, requirements=(), updates=(update,))


def test_a_tag_on_a_snapshot_the_table_lacks_is_refused(iceberg: RestCatalog) -> None:
    table, _ = _three_appends(iceberg)
    tag = SetSnapshotRefUpdate.model_validate({"ref-name": "v1", "type": "tag", "snapshot-id": 42})
    with pytest.raises(BadRequestError, match="has no such snapshot"):
        _send(iceberg, table, tag)
    main = RemoveSnapshotRefUpdate(ref_name="main")
    with pytest.raises(BadRequestError, match="branch main is the table's data history"):
        _send(iceberg, table, main)


def test_expired_snapshots_are_no_longer_listed_but_a_tagged_one_stays(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table, (first, second, third) = _three_appends(iceberg)
    table.manage_snapshots().create_tag(first, "v1").commit()
    table = iceberg.load_table("PUBLIC.EVENTS")
    with pytest.raises(BadRequestError, match="is tag v1's"):
        _send(iceberg, table, RemoveSnapshotsUpdate(snapshot_ids=[first]))
    with pytest.raises(BadRequestError, match="is the current snapshot"):
        _send(iceberg, table, RemoveSnapshotsUpdate(snapshot_ids=[third]))
    table.maintenance.expire_snapshots().by_id(second).commit()
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert [s.snapshot_id for s in loaded.snapshots()] == [first, third]
    assert ids(loaded) == [1, 2, 3, 4, 5, 6]
    assert ids(loaded, first) == [1, 2]
    commits = client.data_commits(client.table("PUBLIC", "EVENTS").id).commits
    assert len(commits) == 3  # the data history is untouched: reads as of earlier moments


def test_statistics_are_kept_and_a_removed_schema_is_no_longer_served(
    iceberg: RestCatalog,
) -> None:
    table, (_, _, third) = _three_appends(iceberg)
    blob = BlobMetadata(
        type="apache-datasketches-theta-v1",
        snapshot_id=third,
        sequence_number=3,
        fields=[1],
        properties={"ndv": "6"},
    )
    stats = StatisticsFile(
        snapshot_id=third,
        statistics_path=f"{table.location()}/metadata/stats.puffin",
        file_size_in_bytes=100,
        file_footer_size_in_bytes=20,
        blob_metadata=[blob],
    )
    with table.update_statistics() as update:
        update.set_statistics(stats)
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert loaded.metadata.statistics == [stats]
    with loaded.update_schema() as schema:
        schema.add_column("NOTE", StringType())
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert [s.schema_id for s in loaded.schemas().values()] == [1, 2]
    _send(iceberg, loaded, RemoveSchemasUpdate(schema_ids=[1]))
    assert [s.schema_id for s in iceberg.load_table("PUBLIC.EVENTS").schemas().values()] == [2]
    with loaded.update_statistics() as update:
        update.remove_statistics(third)
    assert iceberg.load_table("PUBLIC.EVENTS").metadata.statistics == []

"""PyIceberg writes to a branch other than main: write-audit-publish, as catalog versions."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import BadRequestError
from pyiceberg.table import Table
from pyiceberg.table.update import RemoveSnapshotsUpdate, SetSnapshotRefUpdate, TableUpdate

from api.client import CatalogClient
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows

pytestmark = pytest.mark.timeout(60)


def _audited(iceberg: RestCatalog) -> Table:
    """Return table EVENTS with rows 1-2 on main and branch ``audit`` made at them."""
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    table.append(rows(table, range(1, 3)))
    table.manage_snapshots().create_branch(
        table.metadata.current_snapshot_id or 0, "audit"
    ).commit()
    loaded: Table = iceberg.load_table("PUBLIC.EVENTS")
    return loaded


def _on_audit(iceberg: RestCatalog, *written: range) -> Table:
    """Return ``_audited``'s table with ``written`` appended to branch audit, one by one."""
    table = _audited(iceberg)
    for ids_written in written:
        table.append(rows(table, ids_written), branch="audit")
        table = iceberg.load_table("PUBLIC.EVENTS")
    return table


def _head(table: Table, ref: str) -> int:
    return table.metadata.refs[ref].snapshot_id


def _main_to(head: int) -> SetSnapshotRefUpdate:
    """Return the update that sets main to ``head`` (a fast-forward, as Java sends it)."""
    return SetSnapshotRefUpdate(
        ref_name="main",
        type="branch",
        snapshot_id=head,
        max_ref_age_ms=None,
        max_snapshot_age_ms=None,
        min_snapshots_to_keep=None,
    )


def _send(iceberg: RestCatalog, table: Table, *updates: TableUpdate) -> None:
    iceberg.commit_table(table, requirements=(), updates=updates)


def test_a_branch_write_is_a_catalog_version_that_main_readers_never_see(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = _audited(iceberg)
    main_before = _head(table, "main")
    version = client.versions().latest
    table_id = client.table("PUBLIC", "EVENTS").id
    table.append(rows(table, range(3, 5)), branch="audit")
    assert client.versions().latest == version + 1  # one catalog version
    assert len(client.data_commits(table_id).commits) == 1  # and no data commit
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert _head(loaded, "main") == main_before
    assert ids(loaded) == [1, 2]
    audit = _head(loaded, "audit")
    assert ids(loaded, audit) == [1, 2, 3, 4]
    snapshot = loaded.snapshot_by_id(audit)
    assert snapshot is not None and snapshot.parent_snapshot_id == main_before
    # The branch goes on from its head; main goes on from its own, numbered after both.
    loaded.append(rows(loaded, range(5, 6)), branch="audit")
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    loaded.append(rows(loaded, range(9, 10)))
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(loaded) == [1, 2, 9]
    assert ids(loaded, _head(loaded, "audit")) == [1, 2, 3, 4, 5]
    numbers = [s.sequence_number for s in loaded.snapshots()]
    assert sorted(numbers) == [1, 2, 3, 4] and loaded.metadata.last_sequence_number == 4
    # The catalog's own reads are main's: one data commit more, the branch's files in none.
    files = [f.path for c in client.data_commits(table_id).commits for f in c.files]
    assert len(files) == 2


def test_a_branch_a_write_creates_holds_what_its_writer_made_it_on(iceberg: RestCatalog) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    table.append(rows(table, range(1, 3)))
    # PyIceberg makes a new branch's first snapshot on none (Java's writers, on main's head:
    # the Spark tests write that way).
    table.append(rows(table, range(3, 4)), branch="fresh")
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert loaded.metadata.refs["fresh"].snapshot_ref_type == "branch"
    assert ids(loaded, _head(loaded, "fresh")) == [3]
    assert ids(loaded) == [1, 2]


def test_a_stale_branch_write_is_made_again_on_the_new_head(
    iceberg: RestCatalog, client: CatalogClient, caplog: pytest.LogCaptureFixture
) -> None:
    first = _audited(iceberg)
    second = iceberg.load_table("PUBLIC.EVENTS")
    first.append(rows(first, range(3, 4)), branch="audit")
    version = client.versions().latest
    second.append(rows(second, range(7, 8)), branch="audit")
    assert "Commit failed due to a concurrent update" in caplog.text  # refused, then made again
    assert client.versions().latest == version + 1
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(loaded, _head(loaded, "audit")) == [1, 2, 3, 7]


def test_a_dropped_branch_s_snapshots_are_removed_one_by_one(iceberg: RestCatalog) -> None:
    table = _on_audit(iceberg, range(3, 4), range(4, 5))
    head = _head(table, "audit")
    parent = table.snapshot_by_id(head)
    assert parent is not None and parent.parent_snapshot_id is not None
    with pytest.raises(BadRequestError, match=f"snapshot {head} is branch audit's"):
        _send(iceberg, table, RemoveSnapshotsUpdate(snapshot_ids=[head]))
    _send(iceberg, table, RemoveSnapshotsUpdate(snapshot_ids=[parent.parent_snapshot_id]))
    table = iceberg.load_table("PUBLIC.EVENTS")
    assert parent.parent_snapshot_id not in [s.snapshot_id for s in table.snapshots()]
    assert ids(table, head) == [1, 2, 3, 4]  # a snapshot's files are its manifests'
    table.manage_snapshots().remove_branch("audit").commit()
    table = iceberg.load_table("PUBLIC.EVENTS")
    _send(iceberg, table, RemoveSnapshotsUpdate(snapshot_ids=[head]))
    listed = [s.snapshot_id for s in iceberg.load_table("PUBLIC.EVENTS").snapshots()]
    assert listed == [_head(table, "main")]


def test_publishing_a_branch_made_on_main_s_head_is_one_data_commit(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = _on_audit(iceberg, range(3, 4), range(4, 6))
    head, table_id = _head(table, "audit"), client.table("PUBLIC", "EVENTS").id
    _send(iceberg, table, _main_to(head))
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert _head(loaded, "main") == head and ids(loaded) == [1, 2, 3, 4, 5]
    commits = client.data_commits(table_id).commits
    assert len(commits) == 2  # the branch's two snapshots are main's second data commit
    assert sum(f.rows for f in commits[1].files) == 3
    assert [s.snapshot_id for s in loaded.snapshots()].count(head) == 1
    loaded.append(rows(loaded, range(6, 7)))  # main goes on from the published head
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [1, 2, 3, 4, 5, 6]


def test_a_branch_made_before_main_moved_is_not_published(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = _on_audit(iceberg, range(3, 4))
    table.append(rows(table, range(9, 10)))
    table = iceberg.load_table("PUBLIC.EVENTS")
    head, version = _head(table, "audit"), client.versions().latest
    update = _main_to(head)
    with pytest.raises(BadRequestError, match="main moves forward only"):
        _send(iceberg, table, update)
    assert client.versions().latest == version
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [1, 2, 9]


def test_writes_to_two_branches_at_once_take_numbers_of_their_own(
    iceberg: RestCatalog, caplog: pytest.LogCaptureFixture
) -> None:
    first = _audited(iceberg)
    second = iceberg.load_table("PUBLIC.EVENTS")
    first.append(rows(first, range(3, 4)), branch="audit")
    second.append(rows(second, range(5, 6)), branch="other")  # numbered as the first was
    assert "Commit failed due to a concurrent update" in caplog.text  # refused, made again
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    numbers = [s.sequence_number for s in loaded.snapshots()]
    assert sorted(numbers) == [1, 2, 3]
    assert ids(loaded, _head(loaded, "other")) == [5]

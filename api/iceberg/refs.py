"""A commit's changes to what Iceberg keeps of a table's snapshots, checked and made commands.

Tags and branches other than main (``set-snapshot-ref``, ``remove-snapshot-ref``), the
expiry of old snapshots (``remove-snapshots``), statistics files and removed schemas change
no data: they become fields of one ``alter_table_iceberg`` command, a catalog version (see
``catalog.data.iceberg_refs``). They are checked here against the snapshots the table's load
lists, the snapshots a client can name.
"""

from __future__ import annotations

from typing import Any

from api.iceberg.models import TableMetadata
from api.iceberg.updates import CommitChanges, SetSnapshotRefUpdate
from catalog.data.iceberg_refs import MAIN, SnapshotRef, check_expiry, check_ref, check_ref_name
from catalog.errors import ValidationError


def snapshot_fields(
    changes: CommitChanges, metadata: TableMetadata, table: str, branch_snapshots: set[int]
) -> dict[str, Any]:
    """Return the ``AlterTableIcebergCommand`` fields a commit's snapshot changes make.

    Empty when it makes none. Snapshots of main's line expire oldest first (an expiry mark);
    ``branch_snapshots`` (those written to other branches) are removed one by one.

    Raises:
        ValidationError: a ref on a snapshot the table does not list, main set or removed,
            a tag with a branch's retention, a snapshot removed that is current or that a
            ref names (after the commit's own ref changes), snapshots removed out of order,
            or statistics of a snapshot the table does not list.
    """
    fields: dict[str, Any] = {}
    listed = metadata.snapshots
    numbers = {s["snapshot-id"]: s["sequence-number"] for s in listed}
    for ref in changes.set_refs:
        check_ref(ref, table, numbers)
    for name in changes.removed_refs:
        check_ref_name(name, table)
    if changes.set_refs:
        fields["set_refs"] = tuple(changes.set_refs)
    if changes.removed_refs:
        fields["remove_refs"] = tuple(changes.removed_refs)
    if changes.removed_snapshots:
        refs = _refs_after(metadata, changes)
        removed = set(changes.removed_snapshots)
        on_main = {i: n for i, n in numbers.items() if i not in branch_snapshots}
        mark = check_expiry(
            removed - branch_snapshots, on_main, refs, metadata.current_snapshot_id, table
        )
        if mark is not None:
            fields["expire_below"] = mark
        if removed & branch_snapshots:
            fields["remove_branch_snapshots"] = tuple(sorted(removed & branch_snapshots))
    for document in (*changes.set_statistics, *changes.set_partition_statistics):
        if document.snapshot_id not in numbers:
            raise ValidationError(
                f"table {table}: statistics of snapshot {document.snapshot_id} cannot be set: "
                "the table has no such snapshot (or it has expired)"
            )
    for key, value in (
        ("set_statistics", changes.set_statistics),
        ("remove_statistics", changes.removed_statistics),
        ("set_partition_statistics", changes.set_partition_statistics),
        ("remove_partition_statistics", changes.removed_partition_statistics),
        ("remove_schemas", changes.removed_schemas),
    ):
        if value:
            fields[key] = tuple(value)
    return fields


def _refs_after(metadata: TableMetadata, changes: CommitChanges) -> list[SnapshotRef]:
    """Return the refs other than main the table has once the commit's ref changes are made."""
    refs = {
        name: SetSnapshotRefUpdate.of(name, ref)
        for name, ref in metadata.refs.items()
        if name != MAIN
    }
    for name in changes.removed_refs:
        refs.pop(name, None)
    refs.update((r.name, r) for r in changes.set_refs)
    return list(refs.values())

"""A commit that adds snapshots to a branch other than main: one catalog version, no data commit.

Write-audit-publish: an engine writes to a branch (Spark's ``INSERT INTO t.branch_audit`` or
``spark.wap.branch``, PyIceberg's ``append(..., branch=...)``), readers of the table keep
reading ``main``, and an auditor reads the branch before it is published. The catalog's data
history is branch main's line (``catalog.data.files``), so a branch's snapshots are kept in the
table's Iceberg state (``catalog.data.iceberg_refs.BranchSnapshot``) with the branch's ref, as
one ``alter_table_iceberg`` command: reads of the table, "as of" reads included, never see
them; an engine that reads the branch reads the files its writer's manifests name.

The checks are those of a commit to main: the requirements (again on the version the command
is judged on, so two writers of one branch cannot both win); the first snapshot made on the
branch's head (for a branch the commit creates, on main's current snapshot as Java's writers
make it, or on none as PyIceberg's do); sequence numbers following the table's last; and
every manifest and file the snapshots add read and checked as a commit to main reads them (in
the table's folder, present, Parquet, no equality deletes). A commit sent again (its answer
lost) finds its last snapshot kept and is answered with the table as it is.

Publishing a branch made on main's head (Iceberg's fast-forward: main set to the branch's
head) turns its snapshots into one data commit of main (``publish``); from then on main's
readers, and "as of" reads after it, see the branch's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fastapi import Request

from api.iceberg.appends import (
    change_of,
    check_row_ids,
    operation_of,
    record_snapshots,
    row_ids,
    snapshot_schema_version,
)
from api.iceberg.commits import CommitTableRequest, check_requirements, unchanged_since_read
from api.iceberg.errors import bad_request, commit_failed
from api.iceberg.file_reads import file_reads
from api.iceberg.manifests import check_present, snapshot_change
from api.iceberg.models import TableMetadata
from api.iceberg.snapshots import Snapshots
from api.iceberg.updates import AddedSnapshot, SetSnapshotRefUpdate, TableUpdate
from api.server.execution import execute_batch, node_of
from catalog.catalog import Catalog
from catalog.commands.iceberg_tables import AlterTableIcebergCommand
from catalog.data.files import DataCommit
from catalog.data.iceberg_refs import MAIN, BranchSnapshot
from catalog.data.iceberg_schemas import served_schema_ids
from catalog.descriptors import TableDescriptor
from catalog.errors import ConcurrentUpdateError, ErrorCode
from catalog.properties import properties_dict, properties_of


async def commit_to_branch(
    request: Request,
    schema: str,
    table: TableDescriptor,
    metadata: TableMetadata,
    body: CommitTableRequest,
    chain: list[AddedSnapshot],
    branch: str,
    listed: Callable[[TableDescriptor], Snapshots],
    warehouse: str,
) -> TableDescriptor:
    """Record the snapshots a commit adds to ``branch`` as one catalog version; return the table.

    Args:
        request: the commit's request: the node it came to and its caller.
        schema: the schema the table is in.
        table: the table in the node's latest catalog.
        metadata: the metadata the requirements are checked on (with every listed snapshot).
        body: the commit (its requirements and updates).
        chain: the snapshots it adds, in order (``added_snapshots``).
        branch: the branch they go to (``written_branch``), not main.
        listed: the snapshots a version's table lists (for the requirements' second check).
        warehouse: the cluster's warehouse.

    Raises:
        IcebergError: CommitFailedException when a requirement fails or the snapshots are not
            made on the branch's head; BadRequestException when the branch is a tag, the
            sequence numbers do not follow the table's, or a manifest or file cannot be
            recorded.
    """
    requirements, updates = body.requirements, body.updates
    name = f"{schema}.{table.name}"
    state = table.iceberg
    done = (
        [b for b in state.branch_snapshots if b.snapshot_id == chain[-1].snapshot_id]
        if state
        else []
    )
    if done:  # sent again (its answer lost): answered with the table it made
        if done[0].manifest_list != chain[-1].manifest_list:
            raise bad_request(
                f"snapshot {chain[-1].snapshot_id} is already committed to table {name} with "
                "other files; a new commit needs a new snapshot id"
            )
        return table
    check_requirements(requirements, metadata, name)
    head = _head(metadata, branch, name, chain[0].parent_snapshot_id)
    if chain[0].parent_snapshot_id != head:
        raise commit_failed(
            f"snapshot {chain[0].snapshot_id} of table {name} is made on snapshot "
            f"{chain[0].parent_snapshot_id}, but branch {branch} is at {head}; nothing was "
            "written: load the table again and retry"
        )
    check_row_ids(metadata, chain, name)
    await _check_files(metadata, chain, head)
    made = tuple(
        branch_snapshot(s, snapshot_schema_version(table, s), **row_ids(table, s)) for s in chain
    )
    ref = next(u for u in reversed(updates) if isinstance(u, SetSnapshotRefUpdate)).ref()
    command = AlterTableIcebergCommand(
        **{"schema": schema, "table": table.name}, add_branch_snapshots=made, set_refs=(ref,)
    )
    unchanged = unchanged_since_read(requirements, table.id, warehouse, name, listed)
    existed = branch in metadata.refs

    def still_at_head(current: Catalog) -> None:
        unchanged(current)
        judged = listed(current.table_by_id(table.id))
        now = judged.refs.get(branch)
        moved = (now is not None) != existed or (now is not None and now["snapshot-id"] != head)
        # Another branch's snapshot that came first took the numbers (and row ids) too.
        taken = judged.last_sequence_number > metadata.last_sequence_number or (
            judged.next_row_id > (metadata.next_row_id or 0)
        )
        if moved or taken:
            raise ConcurrentUpdateError(
                f"branch {branch} of table {name} moved meanwhile",
                code=ErrorCode.PRECONDITION_FAILED,
            )

    try:
        # No request id: a writer sends a lost race again with the same snapshot, made anew.
        result = await execute_batch(request, [command], precondition=still_at_head)
    except ConcurrentUpdateError as e:
        if e.code is not ErrorCode.PRECONDITION_FAILED:
            raise
        raise commit_failed(
            f"another commit to branch {branch} of table {name} came first; nothing was "
            "written: load the table again and retry"
        ) from e
    return node_of(request).service.catalog(result.version).table_by_id(table.id)


def _head(metadata: TableMetadata, branch: str, name: str, parent: int | None) -> int | None:
    """Return the snapshot new snapshots of ``branch`` are made on.

    That is the branch's head; for a branch the commit creates, main's current snapshot (as
    Java's writers make it) or none (PyIceberg's: the branch then holds only what it wrote),
    as ``parent`` says.

    Raises:
        IcebergError: BadRequestException when ``branch`` is a tag.
    """
    ref = metadata.refs.get(branch)
    if ref is None:
        return None if parent is None else metadata.current_snapshot_id
    if ref.get("type") != "branch":
        raise bad_request(f"{branch} is a tag of table {name}: snapshots go to a branch")
    head: int = ref["snapshot-id"]
    return head


def branch_snapshot(
    snapshot: AddedSnapshot, schema_version: int, **lineage: int | None
) -> BranchSnapshot:
    """Return a snapshot added to a branch as the table's Iceberg state keeps it.

    Args:
        snapshot: the snapshot, as its writer made it.
        schema_version: the table schema version its files were written with.
        lineage: its ``first_row_id`` and ``added_rows`` (format version 3; else none).
    """
    return BranchSnapshot(
        snapshot_id=snapshot.snapshot_id,
        parent_id=snapshot.parent_snapshot_id,
        manifest_list=snapshot.manifest_list,
        operation=operation_of(snapshot),
        summary=properties_of({k: v for k, v in snapshot.summary.items() if k != "operation"}),
        timestamp_ms=snapshot.timestamp_ms,
        sequence_number=snapshot.sequence_number or 0,
        schema_version=schema_version,
        **lineage,
    )


async def _check_files(
    metadata: TableMetadata, chain: list[AddedSnapshot], head: int | None
) -> None:
    """Check the snapshots' sequence numbers; read and check what each adds to the one before.

    Raises:
        IcebergError: CommitFailedException for a sequence number another commit took;
            BadRequestException for one past the table's next, or a manifest or file the
            catalog cannot record.
    """
    expected = metadata.last_sequence_number + 1
    for offset, snapshot in enumerate(chain):
        number = snapshot.sequence_number or 0
        if number < expected + offset:  # a snapshot of another branch took it
            raise commit_failed(
                f"snapshot {snapshot.snapshot_id} has sequence number {number}, which another "
                "commit took; nothing was written: load the table again and retry"
            )
        if number != expected + offset:
            raise bad_request(
                f"snapshot {snapshot.snapshot_id} has sequence number {number}; the table's "
                f"next is {expected + offset}"
            )
    lists = {s["snapshot-id"]: s["manifest-list"] for s in metadata.snapshots}
    await check_line(metadata.location, chain, lists.get(head) if head is not None else None)


async def check_line(location: str, line: Sequence[AddedSnapshot], before: str | None) -> None:
    """Read and check what each snapshot of a branch's line adds to the one before it.

    ``before`` is the manifest list of the snapshot the line was made on (None: none). Only
    the manifests a snapshot does not share with the one before are read.

    Raises:
        IcebergError: BadRequestException for a manifest or file the catalog cannot record
            (outside the table's folder, missing, not Parquet, equality deletes).
    """
    for snapshot in line:
        added, _ = await file_reads.run(
            location,
            snapshot_change,
            location,
            snapshot.manifest_list,
            before,
            set(),
            snapshot.snapshot_id,
        )
        await file_reads.run(location, check_present, location, list(added))
        before = snapshot.manifest_list


def published_snapshots(
    updates: Sequence[TableUpdate], metadata: TableMetadata, table: TableDescriptor
) -> list[AddedSnapshot] | None:
    """Return the branch snapshots a commit that moves main to one of them publishes.

    Iceberg's fast-forward (Spark's ``CALL system.fast_forward``, a cherry-pick of a snapshot
    made on main's head) sets main to a snapshot of another branch: the snapshots from main's
    head to it become one data commit. None for a commit that does something else.

    Raises:
        IcebergError: BadRequestException when the snapshot's line was not made on main's
            current snapshot (main moves forward only).
    """
    if len(updates) != 1 or not isinstance(updates[0], SetSnapshotRefUpdate):
        return None
    target = updates[0]
    if target.ref_name != MAIN or table.iceberg is None or target.type != "branch":
        return None
    by_id = {b.snapshot_id: b for b in table.iceberg.branch_snapshots}
    line: list[BranchSnapshot] = []
    at: int | None = target.snapshot_id
    while at is not None and at in by_id and at != metadata.current_snapshot_id:
        line.append(by_id[at])
        at = by_id[at].parent_id
    if not line:
        return None  # not a branch's snapshot: the update refuses itself
    if at != metadata.current_snapshot_id:
        raise bad_request(
            f"branch main cannot be set to snapshot {target.snapshot_id}: its branch was not "
            f"made on main's current snapshot {metadata.current_snapshot_id}, and main moves "
            "forward only (cherry-pick the branch's snapshots onto main instead)"
        )
    served = served_schema_ids(table)
    return [
        AddedSnapshot.model_validate(
            {
                "snapshot-id": b.snapshot_id,
                "parent-snapshot-id": b.parent_id,
                "sequence-number": b.sequence_number,
                "timestamp-ms": b.timestamp_ms,
                "manifest-list": b.manifest_list,
                "summary": {**properties_dict(b.summary), "operation": b.operation},
                "schema-id": served.get(b.schema_version, b.schema_version),
                "first-row-id": b.first_row_id,
                "added-rows": b.added_rows,
            }
        )
        for b in reversed(line)
    ]


async def publish(
    request: Request,
    body: CommitTableRequest,
    chain: list[AddedSnapshot],
    table: tuple[str, TableDescriptor],
    metadata: TableMetadata,
    commits: list[DataCommit],
) -> None:
    """Make a branch's snapshots made on main's head (``published_snapshots``) one data commit.

    The data commit is the last snapshot (its id, manifest list and sequence number): what it
    holds and main's head did not, read from its manifests as a commit to main is.

    Args:
        request: the commit's request (its node and caller).
        body: the commit (its requirements).
        chain: the snapshots it publishes, in order (``published_snapshots``).
        table: the table's name (for messages) and the table, as of the latest catalog.
        metadata: the table's current metadata, its snapshots included.
        commits: every data commit of the table, in order.

    Raises:
        IcebergError: CommitFailedException when a requirement fails or another data commit
            came first; BadRequestException when the files cannot be recorded.
    """
    name, found = table
    check_requirements(body.requirements, metadata, name)
    tip = commits[-1] if commits and not commits[-1].main_removed else None
    number = chain[-1].sequence_number or 0
    change = await change_of(metadata.location, chain, commits, number, on=tip)
    await record_snapshots(request, found, name, change)

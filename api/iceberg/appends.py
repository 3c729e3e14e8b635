"""A commit that adds a snapshot: the writer's data files become one data commit.

An Iceberg writer (PyIceberg's ``append``, ``overwrite``, ``delete``) writes its data files,
a manifest and a manifest list under the table's location, then commits ``add-snapshot`` (one
or several snapshots, each made on the one before) and ``set-snapshot-ref`` (branch
``main``). The server checks the commit's requirements against the table's current metadata,
its current snapshot included; reads the manifests the last snapshot does not share with
the table's current one (``manifests.snapshot_change``); and records one data
commit through ``DataCommits.commit`` (the update log's compare-and-set, safe-time and
request-id rules): the files the snapshot holds that the table did not, with their rows,
sizes and column statistics, and the paths of the table's files it no longer holds. The
commit expects the table's latest data commit to be the one the requirements were checked
on, so a writer that lost a race fails with ``CommitFailedException`` and nothing is written.

The request id is fixed by the table and the snapshot id: a commit sent again (its answer
lost) is answered with the data commit it made, not made twice.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import pydantic
from fastapi import Request
from pyiceberg.manifest import DataFile as IcebergDataFile
from pyiceberg.manifest import DataFileContent

from api.iceberg.bounds import BoundError, column_stats
from api.iceberg.commits import check_requirements
from api.iceberg.errors import bad_request, commit_failed
from api.iceberg.file_reads import file_reads
from api.iceberg.manifests import check_present, snapshot_change
from api.iceberg.models import TableMetadata
from api.iceberg.requirements import TableRequirement
from api.iceberg.snapshots import manifest_list_of
from api.iceberg.updates import (
    AddedSnapshot,
    AddSnapshotUpdate,
    SetSnapshotRefUpdate,
    TableUpdate,
)
from api.server.auth import scoped_request_id
from api.server.execution import node_of
from catalog.data.commits import TableCommit
from catalog.data.files import (
    DataCommit,
    DataFile,
    IcebergSnapshot,
    SnapshotOperation,
    visible_files,
)
from catalog.data.iceberg_identity import sequence_numbers, snapshot_id_of
from catalog.data.iceberg_refs import MAIN
from catalog.data.iceberg_schemas import served_schema_ids
from catalog.data.iceberg_table import ROW_LINEAGE_FORMAT
from catalog.descriptors import TableDescriptor
from catalog.errors import ConcurrentUpdateError, ErrorCode, ValidationError

OPERATIONS: tuple[SnapshotOperation, ...] = ("append", "overwrite", "delete", "replace")


def written_branch(updates: Sequence[TableUpdate]) -> str:
    """Return the branch a commit's new snapshots go to: the one branch it sets, else main.

    A commit that sets refs of several names, or a tag, goes to main, and ``added_snapshots``
    says what is wrong with it.
    """
    if not any(isinstance(u, AddSnapshotUpdate) for u in updates):
        return MAIN
    refs = [u for u in updates if isinstance(u, SetSnapshotRefUpdate)]
    names = {r.ref_name for r in refs}
    if len(names) == 1 and all(r.type == "branch" for r in refs):
        return names.pop()
    return MAIN


def added_snapshots(
    updates: Sequence[TableUpdate], branch: str = MAIN
) -> list[AddedSnapshot] | None:
    """Return the snapshots a commit adds to ``branch``, in order; None when it adds none.

    A commit may add several snapshots, each made on the one before (PyIceberg's overwrite
    adds a delete and an append); the branch must end at the last. A commit without
    ``add-snapshot`` (tags, branches, expiry) is not a data commit: None.

    Raises:
        IcebergError: BadRequestException for a commit that adds snapshots otherwise: with
            other updates, snapshots that do not follow one another, the branch not moved
            to the last, or another branch or a tag set.
    """
    chain = [u.snapshot for u in updates if isinstance(u, AddSnapshotUpdate)]
    if not chain:
        return None
    refs = [u for u in updates if isinstance(u, SetSnapshotRefUpdate)]
    if len(chain) + len(refs) != len(updates):
        raise bad_request(
            "a commit that adds a snapshot makes no other change: commit schema and property "
            "changes on their own"
        )
    for before, after in itertools.pairwise(chain):
        if after.parent_snapshot_id != before.snapshot_id:
            raise bad_request(
                f"snapshot {after.snapshot_id} is not made on snapshot {before.snapshot_id}, "
                "added before it in the same commit"
            )
    last = chain[-1].snapshot_id
    others = sorted({r.ref_name for r in refs if r.ref_name != branch})
    if others:
        raise bad_request(
            f"the new snapshots of this commit can only go to branch {branch}, not "
            f"{others[0]}: a commit's snapshots go to one branch (a create or a replace: to "
            "branch main)"
        )
    if not refs or any(r.type != "branch" for r in refs) or refs[-1].snapshot_id != last:
        raise bad_request(
            f"set-snapshot-ref must make snapshot {last} the head of branch {branch}; a "
            f"commit's new snapshots go to branch {branch}"
        )
    return chain


def check_row_ids(metadata: TableMetadata, chain: Sequence[AddedSnapshot], name: str) -> None:
    """Check the row ids the snapshots of a table of format version 3 give out.

    Each snapshot's new rows take ids from the table's ``next-row-id`` on (row lineage):
    its ``first-row-id`` is at least the one before's first plus its ``added-rows``, the first
    at least the table's ``next-row-id``. A table of format version 2 gives out none.

    Raises:
        IcebergError: BadRequestException for a snapshot without ``first-row-id``;
            CommitFailedException for one below the table's next row id (another commit
            took those ids first).
    """
    if metadata.format_version < ROW_LINEAGE_FORMAT:
        return
    expected = metadata.next_row_id or 0
    for snapshot in chain:
        if snapshot.first_row_id is None:
            raise bad_request(
                f"snapshot {snapshot.snapshot_id} of table {name} has no first-row-id: a table "
                f"of format version {metadata.format_version} gives new rows ids"
            )
        if snapshot.first_row_id < expected:
            raise commit_failed(
                f"snapshot {snapshot.snapshot_id} of table {name} gives rows ids from "
                f"{snapshot.first_row_id}, but the table's next-row-id is {expected}; nothing "
                "was written: load the table again and retry"
            )
        expected = snapshot.first_row_id + (snapshot.added_rows or 0)


def row_ids(table: TableDescriptor, snapshot: AddedSnapshot) -> dict[str, int | None]:
    """Return the row lineage fields a snapshot records: none on a format version 2 table."""
    if table.iceberg is None or table.iceberg.format_version < ROW_LINEAGE_FORMAT:
        return {}
    if snapshot.first_row_id is None:
        return {}
    return {"first_row_id": snapshot.first_row_id, "added_rows": snapshot.added_rows or 0}


def operation_of(snapshot: AddedSnapshot) -> SnapshotOperation:
    """Return what a snapshot did, by its summary's ``operation``.

    Raises:
        IcebergError: BadRequestException for an operation Iceberg does not define.
    """
    operation = snapshot.summary.get("operation")
    for known in OPERATIONS:
        if operation == known:
            return known
    raise bad_request(
        f"snapshot {snapshot.snapshot_id} has operation {operation}; accepted: "
        + ", ".join(OPERATIONS)
    )


def snapshot_schema_version(table: TableDescriptor, snapshot: AddedSnapshot) -> int:
    """Return the table schema version a snapshot's files were written with.

    An Iceberg schema id names the latest schema version served under it (the same columns
    as every other one it names); a snapshot without one was written with the current one.

    Raises:
        IcebergError: BadRequestException for a schema the table never had.
    """
    schema_version = table.schema_version
    if snapshot.schema_id:
        served = served_schema_ids(table)
        named = [v for v, schema_id in served.items() if schema_id == snapshot.schema_id]
        schema_version = max(named, default=snapshot.schema_id)
    if not 1 <= schema_version <= table.schema_version:
        raise bad_request(f"snapshot {snapshot.snapshot_id} names schema {schema_version}")
    return schema_version


def _data_files(
    table: TableDescriptor, schema_version: int, added: dict[str, IcebergDataFile]
) -> list[DataFile]:
    """Return the files a snapshot adds as data commit files, with their statistics.

    Raises:
        IcebergError: BadRequestException for a path the catalog cannot record, or a bound
            that is not a value of its column's type.
    """
    kept = [v.columns for v in table.versions if v.version == schema_version]
    files: list[DataFile] = []
    for path, added_file in added.items():
        deletes = added_file.content == DataFileContent.POSITION_DELETES
        try:
            stats = None  # a schema version the node no longer keeps: its types are unknown
            if kept and not deletes:  # a delete file's columns are file_path and pos
                stats = column_stats(
                    kept[0],
                    added_file.null_value_counts or {},
                    added_file.nan_value_counts or {},
                    added_file.lower_bounds or {},
                    added_file.upper_bounds or {},
                )
            files.append(
                DataFile(
                    path=path,
                    partition=0,
                    rows=added_file.record_count,
                    size=added_file.file_size_in_bytes,
                    stats=stats,
                    content="position-deletes" if deletes else None,
                )
            )
        except BoundError as e:
            raise bad_request(f"data file {added_file.file_path} cannot be recorded: {e}") from e
        except pydantic.ValidationError as e:
            raise bad_request(
                f"data file {added_file.file_path} cannot be recorded: a path in the table's "
                "folder has letters, digits, _ . = and - between its slashes"
            ) from e
    return files


@dataclass(frozen=True)
class SnapshotChange:
    """What a commit's snapshots change, read and checked before anything is written.

    Attributes:
        chain: the snapshots added, in order.
        base: the table's data commits the last one is made on (all, unless sent again).
        sequence_number: the last snapshot's sequence number.
        operation: the last snapshot's operation.
        added: the files the last snapshot holds and the table did not, by path.
        dropped: the table's files it no longer holds.
        replace: the snapshots are a replace's, made on none (``replaces``).
    """

    chain: list[AddedSnapshot]
    base: list[DataCommit]
    sequence_number: int
    operation: SnapshotOperation
    added: dict[str, IcebergDataFile]
    dropped: set[str]
    replace: bool


async def read_snapshots(
    name: str,
    metadata: TableMetadata,
    commits: list[DataCommit],
    requirements: Sequence[TableRequirement],
    chain: list[AddedSnapshot],
    *,
    replace: bool = False,
) -> SnapshotChange:
    """Check the snapshots a commit adds and read what they change from their manifests.

    The last snapshot's change is what it holds and the table did not: the files it adds,
    and as dropped the table's files it no longer holds. A replace's snapshot is made on
    none: it adds every file its manifest list holds, and its sequence number is its
    writer's (one the table gave out already, when a concurrent replace came first, as
    Iceberg allows a snapshot made on none).

    Args:
        name: the table's name, for messages.
        metadata: the table's current metadata, its snapshots included.
        commits: every data commit of the table, in order (``metadata``'s snapshots).
        requirements: the commit's requirements.
        chain: the snapshots it adds, in order.
        replace: the commit replaces the table (``replaces``): its snapshots are made on none.

    Raises:
        IcebergError: CommitFailedException when a requirement fails or the snapshots are
            not made on the table's current snapshot; BadRequestException when they cannot
            be recorded (see ``manifests.snapshot_change``).
    """
    last = chain[-1]
    done = [c for c in commits if snapshot_id_of(c) == last.snapshot_id]
    if done and done[0].merged:
        raise commit_failed(
            f"snapshot {last.snapshot_id} of table {name} was committed long ago and has been "
            "merged with the snapshots before it since; nothing was written"
        )
    if done:  # sent again: the request id answers with the commit it made
        base = [c for c in commits if c.seq < done[0].seq]
    else:
        check_requirements(requirements, metadata, name)
        base = commits
    tip = base[-1] if base and not base[-1].main_removed else None
    head = None if replace or tip is None else snapshot_id_of(tip)
    if chain[0].parent_snapshot_id != head:
        raise commit_failed(
            f"snapshot {chain[0].snapshot_id} of table {name} is made on snapshot "
            f"{chain[0].parent_snapshot_id}, but the table's current snapshot is {head}; "
            "nothing was written: load the table again and retry"
        )
    expected = max(sequence_numbers(base), default=0) + 1
    if replace and 1 <= (chain[0].sequence_number or 0) < expected:
        expected = chain[0].sequence_number or expected
    # Snapshots written to other branches take numbers too: a writer numbers its snapshot
    # after the table's last (or, sent again, after the last it read then).
    if expected <= (chain[0].sequence_number or 0) <= metadata.last_sequence_number + 1:
        expected = chain[0].sequence_number or expected
    for offset, snapshot in enumerate(chain):
        if snapshot.sequence_number != expected + offset:
            raise bad_request(
                f"snapshot {snapshot.snapshot_id} has sequence number "
                f"{snapshot.sequence_number}; the table's next is {expected + offset}"
            )
    check_row_ids(metadata, chain, name)
    number = expected + len(chain) - 1
    on = None if replace else tip
    return await change_of(metadata.location, chain, base, number, on=on, replace=replace)


async def change_of(
    location: str,
    chain: list[AddedSnapshot],
    base: list[DataCommit],
    sequence_number: int,
    *,
    on: DataCommit | None,
    replace: bool = False,
) -> SnapshotChange:
    """Read what the last snapshot of ``chain`` changes from its manifests (no checks).

    Args:
        location: the table's location (the snapshot's files must be in it).
        chain: the snapshots added, in order.
        base: the table's data commits the last one is made on.
        sequence_number: the last snapshot's sequence number.
        on: the data commit the snapshot is made on (its files are the table's); None: none.
        replace: the snapshots are a replace's.

    Raises:
        IcebergError: BadRequestException when they cannot be read
            (``manifests.snapshot_change``) or a file is missing.
    """
    last = chain[-1]
    operation = operation_of(last)
    held = {f.path for c in visible_files(base) for f in c.files} if on else set()
    parent_list = manifest_list_of(location, on) if on else None
    added, dropped = await file_reads.run(
        location, snapshot_change, location, last.manifest_list, parent_list, held, last.snapshot_id
    )
    await file_reads.run(location, check_present, location, list(added))
    return SnapshotChange(chain, base, sequence_number, operation, added, dropped, replace)


def table_commit(
    request: Request, table: TableDescriptor, change: SnapshotChange, logged_ms: int | None = None
) -> TableCommit:
    """Return the data commit of what a commit's snapshots change (``record_snapshots``).

    Raises:
        IcebergError: BadRequestException when the files cannot be recorded
            (``_data_files``) or the snapshot names a schema the table never had.
    """
    last, base = change.chain[-1], change.base
    # A replace's snapshot is written with the replacement's schema, which its writer
    # numbered itself; the catalog's number for it is the table's current one.
    schema_version = (
        table.schema_version if change.replace else snapshot_schema_version(table, last)
    )
    summary = {k: v for k, v in last.summary.items() if k != "operation"}
    return TableCommit(
        table.id,
        _data_files(table, schema_version, change.added),
        schema_version=schema_version,
        mode="overwrite" if change.replace else "append",
        request_id=scoped_request_id(request, f"iceberg-{table.id}-{last.snapshot_id}"),
        # A replace's catalog version is made already: its data goes on whatever came in
        # between, as the overwrite it is.
        expected_seq=None if change.replace else (base[-1].seq if base else 0),
        removed=sorted(change.dropped),
        iceberg=IcebergSnapshot(
            snapshot_id=last.snapshot_id,
            parent_id=change.chain[0].parent_snapshot_id,
            manifest_list=last.manifest_list,
            operation=change.operation,
            summary=summary,
            timestamp_ms=last.timestamp_ms,
            sequence_number=change.sequence_number,
            logged_ms=logged_ms,
            **row_ids(table, last),
        ),
    )


async def record_snapshots(
    request: Request,
    table: TableDescriptor,
    name: str,
    change: SnapshotChange,
    logged_ms: int | None = None,
) -> DataCommit:
    """Record what a commit's snapshots change as one data commit; return it.

    Args:
        request: the commit's request (its node and caller).
        table: the table, as of the node's latest catalog (after a replace's version).
        name: the table's name, for messages.
        change: what the snapshots change (``read_snapshots``).
        logged_ms: a registered snapshot's time in the history of the catalog it came from.

    Raises:
        IcebergError: BadRequestException when the files cannot be recorded
            (``_data_files``) or the snapshot names a schema the table never had;
            CommitFailedException when another data commit came first.
    """
    last = change.chain[-1]
    try:
        part = table_commit(request, table, change, logged_ms)
        return await node_of(request).data.commit_part(part)
    except ConcurrentUpdateError as e:
        if e.code is not ErrorCode.PRECONDITION_FAILED:
            raise
        raise commit_failed(
            f"another commit to table {name} came first; nothing was written: load the table "
            "again and retry"
        ) from e
    except ValidationError as e:
        if e.code is not ErrorCode.REQUEST_ID_REUSED:
            raise
        raise bad_request(
            f"snapshot {last.snapshot_id} is already committed to table {name} with other "
            "files; a new commit needs a new snapshot id"
        ) from e


async def commit_snapshots(
    request: Request,
    table: TableDescriptor,
    name: str,
    metadata: TableMetadata,
    commits: list[DataCommit],
    requirements: Sequence[TableRequirement],
    chain: list[AddedSnapshot],
) -> DataCommit:
    """Record the snapshots a commit adds as one data commit; return it.

    Args:
        request: the commit's request (its node and caller).
        table: the table, as of the node's latest catalog.
        name: the table's name, for messages.
        metadata: the table's current metadata, its snapshots included.
        commits: every data commit of the table, in order (``metadata``'s snapshots).
        requirements: the commit's requirements.
        chain: the snapshots it adds, in order.

    Raises:
        IcebergError: see ``read_snapshots`` and ``record_snapshots``.
        ConcurrentUpdateError: PRECONDITION_FAILED, another data commit came first.
    """
    change = await read_snapshots(name, metadata, commits, requirements, chain)
    return await record_snapshots(request, table, name, change)

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

import asyncio
import itertools
from collections.abc import Sequence

import pydantic
from fastapi import Request
from pyiceberg.manifest import DataFile as IcebergDataFile

from api.iceberg.bounds import BoundError, column_stats
from api.iceberg.commits import check_requirements
from api.iceberg.errors import bad_request, commit_failed
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
from catalog.data.files import (
    DataCommit,
    DataFile,
    IcebergSnapshot,
    SnapshotOperation,
    visible_files,
)
from catalog.data.iceberg_identity import sequence_numbers, snapshot_id_of
from catalog.data.iceberg_refs import MAIN
from catalog.descriptors import TableDescriptor
from catalog.errors import ConcurrentUpdateError, ErrorCode, ValidationError

OPERATIONS: tuple[SnapshotOperation, ...] = ("append", "overwrite", "delete", "replace")


def added_snapshots(updates: Sequence[TableUpdate]) -> list[AddedSnapshot] | None:
    """Return the snapshots a commit adds to branch main, in order; None when it adds none.

    A commit may add several snapshots, each made on the one before (PyIceberg's overwrite
    adds a delete and an append); branch main must end at the last. A commit without
    ``add-snapshot`` (tags, branches, expiry) is not a data commit: None.

    Raises:
        IcebergError: BadRequestException for a commit that adds snapshots otherwise: with
            other updates, snapshots that do not follow one another, main not moved to the
            last, or another branch or a tag set (a write to a branch other than main).
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
    others = sorted({r.ref_name for r in refs if r.ref_name != MAIN})
    if others:
        raise bad_request(
            f"a new snapshot can only go to branch main, not {others[0]}: a table's data "
            "history is one line (branch main); other branches and tags stay at the "
            "snapshot they were made at"
        )
    if not refs or any(r.type != "branch" for r in refs) or refs[-1].snapshot_id != last:
        raise bad_request(
            f"set-snapshot-ref must make snapshot {last} the head of branch main; a "
            "commit's new snapshots go to branch main"
        )
    return chain


def _operation(snapshot: AddedSnapshot) -> SnapshotOperation:
    operation = snapshot.summary.get("operation")
    for known in OPERATIONS:
        if operation == known:
            return known
    raise bad_request(
        f"snapshot {snapshot.snapshot_id} has operation {operation}; accepted: "
        + ", ".join(OPERATIONS)
    )


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
        try:
            stats = None  # a schema version the node no longer keeps: its types are unknown
            if kept:
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

    The data commit holds what the last snapshot holds and the table did not: the files it
    adds, and as removed the table's files it no longer holds.

    Args:
        request: the commit's request (its node and caller).
        table: the table, as of the node's latest catalog.
        name: the table's name, for messages.
        metadata: the table's current metadata, its snapshots included.
        commits: every data commit of the table, in order (``metadata``'s snapshots).
        requirements: the commit's requirements.
        chain: the snapshots it adds, in order.

    Raises:
        IcebergError: CommitFailedException when a requirement fails or the snapshots are
            not made on the table's current snapshot; BadRequestException when they cannot
            be recorded (see ``manifests.snapshot_change`` and ``_data_files``).
        ConcurrentUpdateError: PRECONDITION_FAILED, another data commit came first.
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
    head = snapshot_id_of(base[-1]) if base else None
    if chain[0].parent_snapshot_id != head:
        raise commit_failed(
            f"snapshot {chain[0].snapshot_id} of table {name} is made on snapshot "
            f"{chain[0].parent_snapshot_id}, but the table's current snapshot is {head}; "
            "nothing was written: load the table again and retry"
        )
    numbers = sequence_numbers(base)
    expected = (numbers[-1] if numbers else 0) + 1
    for offset, snapshot in enumerate(chain):
        if snapshot.sequence_number != expected + offset:
            raise bad_request(
                f"snapshot {snapshot.snapshot_id} has sequence number "
                f"{snapshot.sequence_number}; the table's next is {expected + offset}"
            )
    schema_version = last.schema_id or table.schema_version
    if not 1 <= schema_version <= table.schema_version:
        raise bad_request(f"snapshot {last.snapshot_id} names schema {schema_version}")
    made = last.model_copy(
        update={
            "parent_snapshot_id": chain[0].parent_snapshot_id,
            "sequence_number": expected + len(chain) - 1,
            "schema_id": schema_version,
        }
    )
    return await record_snapshot(request, table, name, metadata.location, base, made)


async def record_snapshot(
    request: Request,
    table: TableDescriptor,
    name: str,
    location: str,
    base: list[DataCommit],
    snapshot: AddedSnapshot,
) -> DataCommit:
    """Record one snapshot as the data commit after ``base``; return it.

    The data commit holds the files the snapshot's manifests hold and ``base``'s files did
    not, and as removed ``base``'s files it no longer holds.

    Args:
        request: the request (its node and caller).
        table: the table.
        name: the table's name, for messages.
        location: the table's location (the snapshot's files must be in it).
        base: the table's data commits before it, in order.
        snapshot: the snapshot, with its parent, sequence number and schema version as
            recorded.

    Raises:
        IcebergError: BadRequestException when it cannot be recorded (see
            ``manifests.snapshot_change`` and ``_data_files``).
        ConcurrentUpdateError: PRECONDITION_FAILED, another data commit came first.
    """
    operation = _operation(snapshot)
    held = {f.path for c in visible_files(base) for f in c.files}
    parent_list = manifest_list_of(location, base[-1]) if base else None
    added, dropped = await asyncio.to_thread(
        snapshot_change, location, snapshot.manifest_list, parent_list, held, snapshot.snapshot_id
    )
    await asyncio.to_thread(check_present, location, list(added))
    schema_version = snapshot.schema_id or table.schema_version
    files = _data_files(table, schema_version, added)
    summary = {k: v for k, v in snapshot.summary.items() if k != "operation"}
    try:
        return await node_of(request).data.commit(
            table.id,
            files,
            schema_version=schema_version,
            mode="append",
            request_id=scoped_request_id(request, f"iceberg-{table.id}-{snapshot.snapshot_id}"),
            expected_seq=base[-1].seq if base else 0,
            removed=sorted(dropped),
            iceberg=IcebergSnapshot(
                snapshot_id=snapshot.snapshot_id,
                parent_id=snapshot.parent_snapshot_id,
                manifest_list=snapshot.manifest_list,
                operation=operation,
                summary=summary,
                timestamp_ms=snapshot.timestamp_ms,
                sequence_number=snapshot.sequence_number or 0,
            ),
        )
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
            f"snapshot {snapshot.snapshot_id} is already committed to table {name} with other "
            "files; a new commit needs a new snapshot id"
        ) from e

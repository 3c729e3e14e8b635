"""A table's snapshots: one per data commit on branch ``main``, and those of other branches.

A commit made through the Iceberg REST catalog is the snapshot its writer added (its id,
parent, manifest list, summary and time). A commit of the Spark source is a snapshot whose
id is fixed by the table and the commit (``catalog.data.iceberg_identity``), whose sequence
number follows its parent's, and whose manifest list (with the files' null counts and
bounds) the server writes on the first load that needs it (``ensure_manifests``).
``snapshot-log`` gives the time each commit became visible (its commit timestamp), so a
reader's time travel by timestamp sees what a read "as of" that time sees; a registered
table's snapshots keep the times of the history they came with. Snapshots engines wrote to
other branches are listed as their writers made them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema

from api.iceberg.file_reads import file_reads
from api.iceberg.manifests import spark_manifest_list, write_manifests
from api.iceberg.models import IcebergSchema
from api.iceberg.models import PartitionSpec as IcebergPartitionSpec
from catalog.data.files import DataCommit, committed_by
from catalog.data.iceberg_identity import sequence_numbers, snapshot_id_of
from catalog.data.iceberg_refs import MAIN, BranchSnapshot, SnapshotRef
from catalog.data.iceberg_table import ROW_LINEAGE_FORMAT, IcebergTableState
from catalog.descriptors import ColumnDescriptor
from catalog.properties import properties_dict
from schemasync.clock import physical_of


def manifest_list_of(location: str, commit: DataCommit) -> str:
    """Return where a data commit's manifest list is."""
    if commit.iceberg is not None:
        return commit.iceberg.manifest_list
    return spark_manifest_list(location, snapshot_id_of(commit), commit.seq)


def _snapshot(
    location: str, commit: DataCommit, parent: DataCommit | None, sequence_number: int
) -> dict[str, Any]:
    iceberg = commit.iceberg
    if iceberg is not None:
        summary = {**iceberg.summary, "operation": iceberg.operation}
        timestamp_ms = iceberg.timestamp_ms
    else:
        summary = {
            "operation": commit.mode,
            "added-data-files": str(len(commit.files)),
            "added-records": str(sum(f.rows for f in commit.files)),
            "added-files-size": str(sum(f.size for f in commit.files)),
        }
        timestamp_ms = physical_of(commit.commit_ts)
    snapshot: dict[str, Any] = {
        "snapshot-id": snapshot_id_of(commit),
        "sequence-number": sequence_number,
        "timestamp-ms": timestamp_ms,
        "manifest-list": manifest_list_of(location, commit),
        "summary": summary,
        "schema-id": commit.schema_version,
    }
    if parent is not None:
        snapshot["parent-snapshot-id"] = snapshot_id_of(parent)
    return snapshot


@dataclass(frozen=True)
class Snapshots:
    """The snapshot members of a table's metadata.

    Attributes:
        snapshots: the snapshots listed, oldest first.
        current_snapshot_id: the latest commit's snapshot; None before the first, and after
            a replace that removed branch main and added none.
        refs: branch ``main`` at the current snapshot (none without one), and the table's
            tags and branches.
        snapshot_log: when each snapshot of the unbroken tail of the history became current.
        last_sequence_number: the highest sequence number given out (0 before the first).
        last_commit_ms: when the latest commit became visible (0 before the first).
        next_row_id: format version 3: the row id the next snapshot's first new row gets.
    """

    snapshots: list[dict[str, Any]] = field(default_factory=list)
    current_snapshot_id: int | None = None
    refs: dict[str, dict[str, Any]] = field(default_factory=dict)
    snapshot_log: list[dict[str, Any]] = field(default_factory=list)
    last_sequence_number: int = 0
    last_commit_ms: int = 0
    next_row_id: int = 0

    def sequence_numbers(self) -> dict[int, int]:
        """Return the sequence number of every snapshot listed, by snapshot id."""
        return {s["snapshot-id"]: s["sequence-number"] for s in self.snapshots}


def _ref(ref: SnapshotRef) -> dict[str, Any]:
    served: dict[str, Any] = {"snapshot-id": ref.snapshot_id, "type": str(ref.type)}
    for key, value in (
        ("max-ref-age-ms", ref.max_ref_age_ms),
        ("max-snapshot-age-ms", ref.max_snapshot_age_ms),
        ("min-snapshots-to-keep", ref.min_snapshots_to_keep),
    ):
        if value is not None:
            served[key] = value
    return served


def snapshots_of(
    location: str,
    commits: Sequence[DataCommit],
    *,
    horizon_ts: int = 0,
    state: IcebergTableState | None = None,
    refs_only: bool = False,
) -> Snapshots:
    """Return the snapshots of a table whose data commits (every one, in order) are ``commits``.

    Snapshots older than the one current at ``horizon_ts`` (the earliest moment the catalog
    still reads; their files may be gone) are left out, as Iceberg's snapshot expiry leaves
    them out: the first one kept still names its parent, unless it is a Spark source commit
    that merged the ones before it. So are those below the table's expiry mark
    (``state.expired_below``, Iceberg's ``remove-snapshots``). A snapshot a tag or branch
    names is listed whatever its age, and the current one always is. The snapshots written to
    other branches are listed until removed (``remove-snapshots``), each where its writer
    made it. ``refs_only`` lists only the snapshots refs name (the protocol's
    ``snapshots=refs``).
    """
    state = state or IcebergTableState()
    main = _main_snapshots(location, commits, horizon_ts, state, refs_only)
    if not state.branch_snapshots:
        return main
    held = {s["snapshot-id"] for s in main.snapshots} | {snapshot_id_of(c) for c in commits}
    named = {r.snapshot_id for r in state.refs}
    branches = [
        _branch_snapshot(b)
        for b in state.branch_snapshots
        if b.snapshot_id not in held and (not refs_only or b.snapshot_id in named)
    ]
    if not branches:
        return main
    listed = sorted([*main.snapshots, *branches], key=lambda s: s["sequence-number"])
    known = {s["snapshot-id"] for s in listed}
    refs = {k: v for k, v in main.refs.items() if k == MAIN}
    refs.update((r.name, _ref(r)) for r in state.refs if r.snapshot_id in known)
    return replace(
        main,
        snapshots=listed,
        refs=refs,
        last_sequence_number=max(
            main.last_sequence_number, *(b.sequence_number for b in state.branch_snapshots)
        ),
        next_row_id=max(
            main.next_row_id,
            *((b.first_row_id or 0) + (b.added_rows or 0) for b in state.branch_snapshots),
        ),
    )


def _main_snapshots(
    location: str,
    commits: Sequence[DataCommit],
    horizon_ts: int,
    state: IcebergTableState,
    refs_only: bool,
) -> Snapshots:
    """Return the snapshots of branch main's line and the refs to them (``snapshots_of``)."""
    if not commits:
        return Snapshots()
    parents = _parents(commits)
    numbers = sequence_numbers(commits)
    ids = [snapshot_id_of(c) for c in commits]
    named = {r.snapshot_id for r in state.refs}
    start = max(0, committed_by(commits, horizon_ts) - 1)
    last = len(commits) - 1
    tail = next((i for i in range(start, last) if numbers[i] >= state.expired_below), last)
    kept = [
        i
        for i in range(len(commits))
        if ((i >= tail and not refs_only) or ids[i] in named or i == last)
        and not commits[i].main_removed
    ]
    current = None if commits[-1].main_removed else ids[-1]
    known = set(ids[i] for i in kept)
    refs = {} if current is None else {MAIN: {"snapshot-id": current, "type": "branch"}}
    refs.update((r.name, _ref(r)) for r in state.refs if r.snapshot_id in known)
    lineage, next_row_id = _row_lineage(commits)
    served = [_snapshot(location, commits[i], parents[i], numbers[i]) for i in kept]
    if state.format_version >= ROW_LINEAGE_FORMAT:
        served = [{**s, **lineage[i]} for s, i in zip(served, kept, strict=True)]
    return Snapshots(
        snapshots=served,
        current_snapshot_id=current,
        refs=refs,
        snapshot_log=[
            {"snapshot-id": ids[i], "timestamp-ms": _logged_ms(commits[i])}
            for i in range(tail, len(commits))
            if (not refs_only or i in kept) and not commits[i].main_removed
        ],
        last_sequence_number=max(numbers),
        last_commit_ms=physical_of(commits[-1].commit_ts),
        next_row_id=next_row_id,
    )


def _row_lineage(commits: Sequence[DataCommit]) -> tuple[list[dict[str, int]], int]:
    """Return each commit's ``first-row-id`` and ``added-rows``, and the next row id after all.

    A commit an engine made on a table of format version 3 carries its own; any other (the
    Spark source's, one made before the table's upgrade) assigns no row ids: its rows have
    none, as rows written before an upgrade to format version 3.
    """
    lineage: list[dict[str, int]] = []
    next_row_id = 0
    for commit in commits:
        made = commit.iceberg
        if made is not None and made.first_row_id is not None:
            first, added = made.first_row_id, made.added_rows or 0
        else:
            first, added = next_row_id, 0
        lineage.append({"first-row-id": first, "added-rows": added})
        next_row_id = max(next_row_id, first + added)
    return lineage, next_row_id


def _branch_snapshot(made: BranchSnapshot) -> dict[str, Any]:
    """Return a snapshot written to a branch other than main as the metadata lists it."""
    snapshot: dict[str, Any] = {
        "snapshot-id": made.snapshot_id,
        "sequence-number": made.sequence_number,
        "timestamp-ms": made.timestamp_ms,
        "manifest-list": made.manifest_list,
        "summary": {**properties_dict(made.summary), "operation": made.operation},
        "schema-id": made.schema_version,
    }
    if made.parent_id is not None:
        snapshot["parent-snapshot-id"] = made.parent_id
    if made.first_row_id is not None:
        snapshot["first-row-id"] = made.first_row_id
        snapshot["added-rows"] = made.added_rows or 0
    return snapshot


def _logged_ms(commit: DataCommit) -> int:
    """Return when ``commit`` became the table's current snapshot (its ``snapshot-log`` time).

    That is its commit time, except for a registered table's snapshots, which keep the time
    of the history they came with.
    """
    if commit.iceberg is not None and commit.iceberg.logged_ms is not None:
        return commit.iceberg.logged_ms
    return physical_of(commit.commit_ts)


def _parents(commits: Sequence[DataCommit]) -> list[DataCommit | None]:
    """Return the commit each of a table's commits was made on (None: on no snapshot).

    That is the one before it, except for the first, one made after branch main was removed
    (a replace's commit that adds no snapshot), and a replace's snapshot (made on none).
    """
    parents: list[DataCommit | None] = []
    for before, commit in zip([None, *commits[:-1]], commits, strict=True):
        replaced = commit.iceberg is not None and commit.iceberg.parent_id is None
        on_none = before is None or before.main_removed or replaced
        parents.append(None if on_none else before)
    return parents


def _write_missing(
    location: str,
    schema: Schema,
    columns: Sequence[ColumnDescriptor],
    commits: Sequence[DataCommit],
    specs: Mapping[int, PartitionSpec],
) -> None:
    parent: tuple[int, str] | None = None
    for commit, number in zip(commits, sequence_numbers(commits), strict=True):
        if commit.main_removed:  # no snapshot, and the next commit is made on none
            parent = None
            continue
        if commit.iceberg is None:
            write_manifests(location, schema, columns, commit, parent, number, specs)
        parent = (snapshot_id_of(commit), manifest_list_of(location, commit))


async def ensure_manifests(
    location: str,
    schema: IcebergSchema,
    columns: Sequence[ColumnDescriptor],
    commits: Sequence[DataCommit],
    specs: Sequence[IcebergPartitionSpec],
) -> None:
    """Write the manifests of the Spark source's commits that have none yet (on a worker).

    Args:
        location: the table's location.
        schema: the table's current schema.
        columns: the table's current columns.
        commits: every data commit of the table, in order.
        specs: the table's partition specs.
    """
    if all(c.iceberg is not None for c in commits):
        return
    served = Schema.model_validate(schema.model_dump(by_alias=True))
    by_id = {
        s.spec_id or 0: PartitionSpec.model_validate(s.model_dump(by_alias=True)) for s in specs
    }
    await file_reads.run(location, _write_missing, location, served, columns, commits, by_id)

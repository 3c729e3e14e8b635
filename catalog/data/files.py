"""Data commits as values: the files of a table a commit makes visible, and their stored form.

``catalog.data.commits`` runs the commits; these models are what clients send and read back.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Annotated, Literal

import msgpack
from pydantic import AfterValidator, Field

from catalog.errors import ValidationError
from catalog.model import Model
from updatelog.errors import FormatError

DataMode = Literal["append", "overwrite"]

StatValue = bool | int | float | str
"""A bound as stored: an integer (also days for DATE, microseconds since the epoch for the
timestamps, microseconds since midnight for TIME), a float, a string (also the exact decimal
text for DECIMAL) or a boolean."""


class ColumnStats(Model):
    """What a data file holds in one column, recorded when the file is written.

    Attributes:
        column_id: the column, by id (a rename keeps its statistics).
        nulls: how many of the file's rows have no value in it.
        lower: no value in the file is below it; absent when unknown (no statistics kept for
            the type, a value that has no bound, such as NaN, or every value is null).
        upper: no value in the file is above it; absent when unknown.
    """

    column_id: int = Field(ge=0, le=2**31 - 1)
    nulls: int = Field(ge=0, le=2**63 - 1)
    lower: StatValue | None = None
    upper: StatValue | None = None


def _absent(value: object) -> bool:
    """Whether an optional field is left out of a commit's JSON.

    Only a merged commit or a replace's has them, so clients that do not know them read
    every other commit as before.
    """
    return value is None


def _inside_the_table_folder(path: str) -> str:
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise ValueError("a data file path stays inside the table's folder (no . or ..)")
    return path


FilePath = Annotated[
    str,
    Field(min_length=1, max_length=1024, pattern=r"^[A-Za-z0-9_.=-]+(/[A-Za-z0-9_.=-]+)*$"),
    AfterValidator(_inside_the_table_folder),
]
"""A data file's path relative to the table's folder in the warehouse."""


class IcebergPartition(Model):
    """The Iceberg partition a file of the catalog's Spark source holds rows of.

    Attributes:
        spec_id: the table's partition spec the file was written for (its default then).
        values: the file's value of each field of that spec, in order, as Iceberg represents
            the field's result type: an integer (also days for a date, microseconds for a
            timestamp or a time, the years, months, days or hours of the time transforms, a
            bucket's number), a string (also the text of a decimal), a boolean or a float;
            None for null (and for a ``void`` field).
    """

    spec_id: int = Field(ge=0, le=2**31 - 1)
    values: tuple[StatValue | None, ...] = Field(max_length=1000)


class DataFile(Model):
    """One data file of a commit.

    Attributes:
        path: the file's path relative to the table's folder in the warehouse.
        partition: the table partition (of its zone) the file's rows belong to.
        rows: how many rows it holds.
        size: its size in bytes.
        stats: per column the file holds, what it holds; absent for files written before
            statistics were kept (never skipped by a read). A column the file lacks is one
            added after it was written.
        schema_version: the table schema version the file was written with, where it is not
            its commit's: set only in a commit that merged earlier ones (see ``merged``).
        content: absent for a file of rows; ``position-deletes`` for an Iceberg position
            delete file (merge-on-read): rows ``(file_path, pos)`` naming rows of the table's
            data files that are deleted, by their position in the file. Its ``rows`` counts
            deleted positions, not rows of the table.
        iceberg_partition: set only on a file the catalog's Spark source wrote into a table
            an Iceberg engine partitioned: the Iceberg partition all its rows are in, which
            the file's manifest records.
    """

    path: FilePath
    partition: int = Field(ge=0, le=65_535)
    rows: int = Field(ge=0, le=2**63 - 1)
    size: int = Field(ge=0, le=2**63 - 1)
    stats: tuple[ColumnStats, ...] | None = Field(default=None, max_length=10_000)
    schema_version: int | None = Field(default=None, ge=1, le=2**31 - 1, exclude_if=_absent)
    content: Literal["position-deletes"] | None = Field(default=None, exclude_if=_absent)
    iceberg_partition: IcebergPartition | None = Field(default=None, exclude_if=_absent)

    @property
    def deletes(self) -> bool:
        """Whether the file names deleted rows (a position delete file) rather than holds rows."""
        return self.content is not None


def rows_and_deletes(commits: Sequence[DataCommit]) -> tuple[list[DataFile], list[DataFile]]:
    """Return the files of ``commits`` split into files of rows and position delete files."""
    rows: list[DataFile] = []
    deletes: list[DataFile] = []
    for commit in commits:
        for file in commit.files:
            (deletes if file.deletes else rows).append(file)
    return rows, deletes


SnapshotOperation = Literal["append", "overwrite", "delete", "replace"]


class IcebergSnapshot(Model):
    """The Iceberg snapshot a data commit made through the Iceberg REST catalog.

    Attributes:
        snapshot_id: the snapshot's id, as the writer chose it.
        parent_id: the snapshot it was made on top of; absent for a table's first.
        manifest_list: where its manifest list is, as the writer wrote it.
        operation: what the snapshot did.
        summary: the writer's summary of it (``operation`` left out).
        timestamp_ms: when the writer made it, in milliseconds since the epoch.
        sequence_number: its Iceberg sequence number.
        logged_ms: set only on a snapshot of a registered table: when it became current in
            the catalog the table came from (its metadata file's ``snapshot-log``), which the
            table's history keeps.
        first_row_id: set only on a snapshot of a table of Iceberg format version 3: the row
            id of its first new row (row lineage).
        added_rows: set with ``first_row_id``: how many row ids it assigned.
    """

    snapshot_id: int = Field(ge=-(2**63), le=2**63 - 1)
    parent_id: int | None = Field(default=None, ge=-(2**63), le=2**63 - 1)
    manifest_list: str = Field(min_length=1, max_length=4096)
    operation: SnapshotOperation
    summary: dict[str, str] = Field(default_factory=dict, max_length=1000)
    timestamp_ms: int = Field(ge=0, le=2**63 - 1)
    sequence_number: int = Field(ge=1, le=2**63 - 1)
    logged_ms: int | None = Field(default=None, ge=0, le=2**63 - 1, exclude_if=_absent)
    first_row_id: int | None = Field(default=None, ge=0, le=2**63 - 1, exclude_if=_absent)
    added_rows: int | None = Field(default=None, ge=0, le=2**63 - 1, exclude_if=_absent)


class DataCommit(Model):
    """One committed write of a table: its files become visible at ``commit_ts``.

    Attributes:
        table_id: the table (a table re-created under the same name has a new id).
        seq: the commit's number within the table, from 1, contiguous.
        commit_ts: the hybrid timestamp at which the files become visible.
        schema_version: the table schema version the files were written with.
        mode: ``append`` adds files; ``overwrite`` replaces every earlier commit's files.
        files: the files.
        request_id: the writer's idempotency key.
        removed: the earlier commits' files (by path) this one removes, each visible
            when it was made; absent when it removes none.
        iceberg: the Iceberg snapshot the commit is, when it came through the Iceberg
            REST catalog; absent for the Spark source's commits.
        sequence_number: set only on a commit that stands for every commit of the table up
            to its own number (``merged``), which the log holds in their place: its Iceberg
            sequence number, which can no longer be counted from the commits before it.
        main_removed: set only on the commit of an Iceberg replace that adds no snapshot
            (``REPLACE TABLE`` without data): an overwrite with no files, so no earlier file
            is visible after it, and not a snapshot: branch ``main`` has none until the next
            commit, which is made on no parent.
    """

    table_id: int
    seq: int
    commit_ts: int
    schema_version: int
    mode: DataMode
    files: tuple[DataFile, ...]
    request_id: str
    removed: tuple[FilePath, ...] | None = Field(default=None, max_length=1_000_000)
    iceberg: IcebergSnapshot | None = None
    sequence_number: int | None = Field(default=None, ge=1, le=2**63 - 1, exclude_if=_absent)
    main_removed: Literal[True] | None = Field(default=None, exclude_if=_absent)

    @property
    def merged(self) -> bool:
        """Whether the commit stands for every commit of the table up to its number."""
        return self.sequence_number is not None

    def schema_version_of(self, file: DataFile) -> int:
        """Return the table schema version ``file`` (one of this commit's) was written with."""
        return self.schema_version if file.schema_version is None else file.schema_version


def encode_data_commit(commit: DataCommit) -> bytes:
    """Return the stored form of a data commit.

    Absent values are left out, so a commit without statistics is stored as before they were.
    """
    return msgpack.packb(commit.model_dump(mode="json", exclude_none=True))


def decode_data_commit(data: bytes) -> DataCommit:
    """Decode a stored data commit.

    Raises:
        FormatError: garbage or a wrong shape.
    """
    try:
        body = msgpack.unpackb(data, raw=False, strict_map_key=True)
        return DataCommit.model_validate(body)
    except (ValueError, TypeError, msgpack.UnpackException, ValidationError) as e:
        raise FormatError(f"not a data commit ({e})") from e


def committed_by(commits: Sequence[DataCommit], ts: int) -> int:
    """Return how many of a table's commits (in order) have ``commit_ts <= ts``.

    Commit timestamps grow with the numbers (each commit raises the safe time), so those
    commits are a prefix, found by bisection.
    """
    return bisect.bisect_right(commits, ts, key=_commit_ts)


def _commit_ts(commit: DataCommit) -> int:
    return commit.commit_ts


def visible_files(commits: list[DataCommit]) -> list[DataCommit]:
    """Return the commits whose files are visible: those since the last overwrite.

    Each keeps only its files no later commit removed.
    """
    start = 0
    for i, commit in enumerate(commits):
        if commit.mode == "overwrite":
            start = i
    removed: set[str] = set()
    kept: list[DataCommit] = []
    for commit in reversed(commits[start:]):
        if any(f.path in removed for f in commit.files):
            files = tuple(f for f in commit.files if f.path not in removed)
            commit = commit.model_copy(update={"files": files})
        kept.append(commit)
        removed.update(commit.removed or ())
    return kept[::-1]


def table_rows(commits: Sequence[DataCommit], rows_from: int) -> list[DataCommit]:
    """Return ``commits`` with only the files that are rows of the table.

    Files written with a schema version below the table's ``rows_from`` (``TableDescriptor``)
    are no longer rows: a replace that made columns required removed them. Every reader of
    the table's files keeps to what this returns, so none reads a null from a NOT NULL column.

    Args:
        commits: data commits of the table (their visible files).
        rows_from: the table's ``rows_from``, as of the version the files are read with.
    """
    kept: list[DataCommit] = []
    for commit in commits:
        files = tuple(f for f in commit.files if commit.schema_version_of(f) >= rows_from)
        kept.append(
            commit
            if len(files) == len(commit.files)
            else commit.model_copy(update={"files": files})
        )
    return kept

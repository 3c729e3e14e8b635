"""What Iceberg keeps of a table's snapshots besides the data: refs, expiry, statistics.

A table's data history is one line of data commits (``catalog.data.files``), and branch
``main`` is always its latest commit. What Iceberg engines add on top changes no data, so it is
kept in the table's Iceberg state (``IcebergTableState``), a catalog version per change:

- named refs other than ``main``: tags, and branches, each at a snapshot of the table, with
  Iceberg's retention fields;
- the snapshots written to branches other than ``main`` (``BranchSnapshot``: an engine's
  write-audit-publish ``INSERT INTO t.branch_audit``): no data commit holds them, so reads of
  the table (and "as of" reads) never see them; an engine reading the branch reads the files
  its writer's manifests name. Each branch line starts at a snapshot of ``main``
  (``branch_bases``), whose files the catalog's data expiry keeps while the line is listed;
- the expiry mark: snapshots whose sequence number is below it are no longer listed by loads,
  unless a ref names them (Iceberg's ``remove-snapshots``); reads "as of" an earlier moment
  answer what they did, and the catalog's own data expiry deletes files no read reaches;
- statistics files and partition statistics files, one of each per snapshot, kept verbatim.

The checks (``check_ref``, ``check_ref_name``, ``check_expiry``) say in plain words what
Iceberg's rules refuse; each raises ``ValidationError`` (code ``VALIDATION_ERROR``).
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Mapping

from pydantic import Field

from catalog.errors import ValidationError
from catalog.model import Model
from catalog.properties import Properties

MAIN = "main"
"""The branch of a table's data: always at its latest data commit, never a stored ref."""


class RefType(enum.StrEnum):
    """What a ref is (Iceberg's spelling; stable wire values)."""

    BRANCH = "branch"
    TAG = "tag"


class SnapshotRef(Model):
    """A named ref other than ``main`` at one snapshot, with Iceberg's retention fields."""

    name: str
    snapshot_id: int
    type: RefType
    max_ref_age_ms: int | None = None
    max_snapshot_age_ms: int | None = None
    min_snapshots_to_keep: int | None = None


class BranchSnapshot(Model):
    """A snapshot an engine wrote to a branch other than ``main``: no data commit holds it.

    Attributes:
        snapshot_id: the snapshot's id, as the writer chose it.
        parent_id: the snapshot it was made on; absent for one made on none.
        manifest_list: where its manifest list is, as the writer wrote it.
        operation: what the snapshot did (``append``, ``overwrite``, ``delete``, ``replace``).
        summary: the writer's summary of it (``operation`` left out), sorted by name.
        timestamp_ms: when the writer made it, in milliseconds since the epoch.
        sequence_number: its Iceberg sequence number.
        schema_version: the table schema version its files were written with.
        first_row_id: format version 3: the row id of its first new row; else None.
        added_rows: format version 3: how many row ids it assigned; else None.
    """

    snapshot_id: int = Field(ge=-(2**63), le=2**63 - 1)
    parent_id: int | None = Field(default=None, ge=-(2**63), le=2**63 - 1)
    manifest_list: str = Field(min_length=1, max_length=4096)
    operation: str = Field(pattern=r"^(append|overwrite|delete|replace)$")
    summary: Properties = Field(default=(), max_length=1000)
    timestamp_ms: int = Field(ge=0, le=2**63 - 1)
    sequence_number: int = Field(ge=1, le=2**63 - 1)
    schema_version: int = Field(ge=1, le=2**31 - 1)
    first_row_id: int | None = Field(default=None, ge=0, le=2**63 - 1)
    added_rows: int | None = Field(default=None, ge=0, le=2**63 - 1)


def branch_bases(snapshots: Iterable[BranchSnapshot]) -> set[int]:
    """Return the snapshots of ``main`` the branch lines of ``snapshots`` were made on.

    A line's first snapshot is made on a snapshot that is not a branch snapshot: one of
    ``main``'s, whose files every snapshot of the line may still hold.
    """
    held = list(snapshots)
    ids = {b.snapshot_id for b in held}
    return {b.parent_id for b in held if b.parent_id is not None and b.parent_id not in ids}


class StatisticsDocument(Model):
    """A statistics (or partition statistics) file of one snapshot, as its writer gave it.

    ``document`` is the protocol's JSON object, kept verbatim (compact, keys sorted).
    """

    snapshot_id: int
    document: str


def check_ref_name(name: str, table: str) -> None:
    """Refuse a ref named ``main`` or with an empty name (the data's branch is not a ref).

    Raises:
        ValidationError: the name is empty or ``main``.
    """
    if not name:
        raise ValidationError(f"table {table}: a branch or tag needs a name")
    if name == MAIN:
        raise ValidationError(
            f"table {table}: branch main is the table's data history, at its latest data "
            "commit; it cannot be set, moved back or removed"
        )


def check_ref(ref: SnapshotRef, table: str, listed: Collection[int]) -> None:
    """Check a ref being set against the snapshots a load lists.

    Raises:
        ValidationError: the name is ``main`` or empty, the snapshot is not one of the
            table's, a tag has branch-only retention fields, or a retention field is not
            positive.
    """
    check_ref_name(ref.name, table)
    if ref.snapshot_id not in listed:
        raise ValidationError(
            f"table {table}: {ref.type} {ref.name} cannot be set to snapshot {ref.snapshot_id}: "
            "the table has no such snapshot (or it has expired)"
        )
    if ref.type is RefType.TAG and (
        ref.max_snapshot_age_ms is not None or ref.min_snapshots_to_keep is not None
    ):
        raise ValidationError(
            f"table {table}: tag {ref.name} cannot have max-snapshot-age-ms or "
            "min-snapshots-to-keep; those are a branch's"
        )
    for what, value in (
        ("max-ref-age-ms", ref.max_ref_age_ms),
        ("max-snapshot-age-ms", ref.max_snapshot_age_ms),
        ("min-snapshots-to-keep", ref.min_snapshots_to_keep),
    ):
        if value is not None and value <= 0:
            raise ValidationError(f"table {table}: {ref.name}'s {what} must be positive")


def check_expiry(
    removed: Iterable[int],
    sequence_numbers: Mapping[int, int],
    refs: Iterable[SnapshotRef],
    current: int | None,
    table: str,
) -> int | None:
    """Return the expiry mark that removes ``removed``, or None when none is listed.

    The catalog's data history is one line, so snapshots expire oldest first: every listed
    snapshot older than the newest one removed goes with it, except those a ref names.

    Args:
        removed: the snapshot ids to remove (ids not listed are ignored: already gone).
        sequence_numbers: the sequence number of every listed snapshot, by id.
        refs: the table's refs other than ``main``.
        current: the current snapshot (``main``), None for none.
        table: the table's name, for messages.

    Raises:
        ValidationError: a removed snapshot is the current one or a ref names it, or a
            listed older snapshot that no ref names is left while a newer one goes.
    """
    named = {r.snapshot_id: r for r in refs}
    gone = {i for i in removed if i in sequence_numbers}
    for snapshot_id in sorted(gone):
        if snapshot_id == current:
            raise ValidationError(
                f"table {table}: snapshot {snapshot_id} is the current snapshot (branch main); "
                "it cannot be removed"
            )
        if snapshot_id in named:
            ref = named[snapshot_id]
            raise ValidationError(
                f"table {table}: snapshot {snapshot_id} is {ref.type} {ref.name}'s; remove "
                f"the {ref.type} first"
            )
    if not gone:
        return None
    newest = max(sequence_numbers[i] for i in gone)
    left = sorted(
        i
        for i, number in sequence_numbers.items()
        if number < newest and i not in gone and i not in named
    )
    if left:
        raise ValidationError(
            f"table {table}: snapshots expire oldest first (the table's history is one line): "
            f"removing snapshot(s) up to sequence number {newest} also needs {left[0]}"
        )
    return newest + 1

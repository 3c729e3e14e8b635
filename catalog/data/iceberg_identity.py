"""The Iceberg identity of a table and its data commits, computed from catalog state alone.

Iceberg readers remember ids: a snapshot id names what a reader read, a sequence number orders
deletes against data, the table uuid tells a table from one re-created under its name. So
each is a pure function of what the log keeps, the same on every node and on every load:

- ``table_uuid``: the uuid the creating engine assigned (a create transaction's, a registered
  table's), else a uuid5 of the table id (ids are never reused within a cluster).
- ``snapshot_id_of``: the writer's id for a commit made through the Iceberg REST catalog;
  for a commit of the Spark source, ``spark_snapshot_id`` of the table and the commit number.
- ``sequence_numbers``: the writer's number for an Iceberg commit; one more than the commit
  before it for a Spark source commit (1 for the first) and for a replace's commit that removes
  branch main (so the table's last sequence number, and the name of its metadata file, move
  on); the number a merged commit carries.

The invariant that keeps them stable when data expiry merges a table's first commits into one
(``catalog.data.merge.merged``, at or before the expiry horizon and only once their request
ids answer on no node): the merged commit keeps the last merged commit's number (``seq``), its
Iceberg snapshot and its time, so its snapshot id is the one that commit had; and it records
that commit's sequence number (``DataCommit.sequence_number``), since the commits it was
counted from are gone, so every later Spark commit still counts on from the same number. The
snapshots of the commits merged away disappear from the history, as Iceberg's own snapshot
expiry drops them; no read at or after the horizon could list them, and none before it is
served any more.

These are the catalog's rules; turning them into Iceberg metadata and manifests is
``api/iceberg``'s (which alone imports pyiceberg).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence

from catalog.data.files import DataCommit

TABLE_UUID_NAMESPACE = uuid.UUID("6f1c1d2e-8a51-5b0e-9d3c-2a7f4e0b9c11")
"""The uuid5 namespace of table uuids (a fixed value: uuids must never change)."""


def table_uuid(table_id: int, assigned: str | None = None) -> str:
    """Return the table's ``table-uuid``: stable for its life, new for a table created again.

    It is the uuid the engine that created the table assigned (kept in its Iceberg state),
    else one derived from its id: a table's id is never reused within a cluster, so it names
    the table.
    """
    if assigned is not None:
        return assigned
    return str(uuid.uuid5(TABLE_UUID_NAMESPACE, f"table:{table_id}"))


def spark_snapshot_id(table_id: int, seq: int) -> int:
    """Return the snapshot id of a Spark source commit: fixed by the table and the commit."""
    digest = hashlib.sha256(f"catalog-data:{table_id}:{seq}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def snapshot_id_of(commit: DataCommit) -> int:
    """Return the Iceberg snapshot id of a data commit."""
    if commit.iceberg is not None:
        return commit.iceberg.snapshot_id
    return spark_snapshot_id(commit.table_id, commit.seq)


def sequence_numbers(commits: Sequence[DataCommit]) -> list[int]:
    """Return the Iceberg sequence number of each of a table's data commits (all, in order).

    A commit of the Spark source, or one that removes branch main, follows the one before
    it; an Iceberg commit and a merged commit carry their own.
    """
    numbers: list[int] = []
    # A replace's snapshot may carry a number below an earlier one (its writer numbered it on
    # the table it read, and a concurrent replace came first); counting on from the highest
    # keeps every later number new.
    highest = 0
    for commit in commits:
        if commit.sequence_number is not None:
            numbers.append(commit.sequence_number)
        elif commit.iceberg is not None:
            numbers.append(commit.iceberg.sequence_number)
        else:
            numbers.append(highest + 1)
        highest = max(highest, numbers[-1])
    return numbers

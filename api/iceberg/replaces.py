"""A replace of a table (``REPLACE TABLE``, RTAS, the replace half of create-or-replace).

Java's client (Spark's Iceberg runtime) replaces a table with one commit whose requirements
are ``UpdateRequirements.forReplaceTable``'s (``assert-table-uuid``, and
``assert-last-assigned-field-id`` / ``assert-last-assigned-partition-id`` when it adds a
schema or a spec) and whose updates are ``TableMetadata.buildReplacement``'s: the new schema
(fields keep the ids of the current fields of the same name, new ones come after
``last-column-id``; an earlier schema equal to it is made current again by its id), spec,
order and properties, and ``remove-snapshot-ref`` of branch main; an RTAS adds its snapshot,
made on none, and sets main to it.

The table's changes become one catalog version (``commit_commands``: columns dropped, added
and kept by field id, the Iceberg state's new spec, order and properties; the uuid stays),
judged with the requirements as every commit's batch is. Then its data: an RTAS snapshot is
one data commit, an overwrite of every earlier file; a replace without one is a data commit
that removes branch main (``main_removed``: an overwrite with no files and no snapshot), so
the table's current data is only what the replace committed for every reader, Iceberg
engines and the catalog's own. A replace that adds no snapshot on a table with none changes
no data.

A replace that adds required fields, makes fields required or brings back a dropped field's
id also makes the table's rows count from its schema version on (``replaces_rows``,
``IcebergTableState.rows_from``): the catalog's readers keep no file written before, and a
data commit written before is refused, so none reads a null from a required column, even "as
of" the moment between the catalog version and the data commit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fastapi import Request

from api.iceberg.appends import added_snapshots, read_snapshots, record_snapshots
from api.iceberg.commits import check_requirements, commit_commands, unchanged_since_read
from api.iceberg.errors import commit_failed
from api.iceberg.models import TableMetadata
from api.iceberg.requirements import AssertCurrentSchemaId, TableRequirement
from api.iceberg.snapshots import Snapshots
from api.iceberg.updates import (
    AddedSnapshot,
    AddSnapshotUpdate,
    RemoveSnapshotRefUpdate,
    SetCurrentSchemaUpdate,
    SetLocationUpdate,
    SetSnapshotRefUpdate,
    TableUpdate,
)
from api.server.auth import scoped_request_id
from api.server.execution import execute_batch, node_of
from catalog.data.files import DataCommit
from catalog.data.iceberg_refs import MAIN
from catalog.descriptors import TableDescriptor


@dataclass(frozen=True)
class Replacement:
    """What a replace commit asks: the table's changes, and its data.

    Attributes:
        changes: the updates that change the table (schema, spec, order, properties, ...).
        chain: the snapshots it adds to branch main (RTAS), None for none.
        removes_main: it removes branch main (sent when the table has a current snapshot).
    """

    changes: list[TableUpdate]
    chain: list[AddedSnapshot] | None
    removes_main: bool


def _is_main_removal(update: TableUpdate) -> bool:
    return isinstance(update, RemoveSnapshotRefUpdate) and update.ref_name == MAIN


def replacement(
    updates: Sequence[TableUpdate],
    requirements: Sequence[TableRequirement] = (),
    *,
    empty: bool = False,
) -> Replacement | None:
    """Return what a replace commit asks; None when the commit is not a replace.

    A replace sets the current schema (Java's client always sends ``set-current-schema`` in
    one, the current id when the schema stays) and removes branch main (a table with a
    snapshot) or adds a snapshot made on none (a table without one). A replace of an
    ``empty`` table (no current snapshot) that adds none is told from a schema change by its
    ``requirements``: ``UpdateRequirements.forReplaceTable`` asserts no current schema id,
    where every other commit that sets the current schema does. Branch main removed
    otherwise stays refused (``check_ref_name``), as does a snapshot added with other
    changes on the table's current one (``added_snapshots``).

    Raises:
        IcebergError: BadRequestException for snapshots added otherwise than to main, each
            made on the one before (``added_snapshots``).
    """
    if not any(isinstance(u, SetCurrentSchemaUpdate) for u in updates):
        return None
    adds = any(isinstance(u, AddSnapshotUpdate) for u in updates)
    data = [
        u
        for u in updates
        if isinstance(u, AddSnapshotUpdate) or (adds and isinstance(u, SetSnapshotRefUpdate))
    ]
    chain = added_snapshots(data) if adds else None
    removes_main = any(_is_main_removal(u) for u in updates)
    if chain is None and not removes_main:
        if not empty or any(isinstance(r, AssertCurrentSchemaId) for r in requirements):
            return None
    elif not removes_main and (chain is None or chain[0].parent_snapshot_id is not None):
        return None
    changes = [u for u in updates if u not in data and not _is_main_removal(u)]
    return Replacement(changes=changes, chain=chain, removes_main=removes_main)


async def replace_table(
    request: Request,
    schema: str,
    table: TableDescriptor,
    metadata: TableMetadata,
    commits: list[DataCommit],
    requirements: Sequence[TableRequirement],
    replace: Replacement,
    warehouse: str,
    listed: Callable[[TableDescriptor], Snapshots],
) -> TableDescriptor:
    """Make a replace: its table changes as one catalog version, then its data commit.

    Args:
        request: the commit's request (its node and caller).
        schema: the table's schema.
        table: the table, as of the node's latest catalog.
        metadata: the table's current metadata, its snapshots included.
        commits: every data commit of the table, in order (``metadata``'s snapshots).
        requirements: the commit's requirements, checked now and on the judged version.
        replace: what the commit asks.
        warehouse: the cluster's warehouse.
        listed: the snapshots a version of the table lists (for the judged version's check).

    Returns:
        The table after the replace.

    Raises:
        IcebergError: CommitFailedException when a requirement fails; BadRequestException
            for a change the catalog does not make.
        CatalogError: the catalog refuses a change (a type it cannot change to, a new key);
            nothing was written.
    """
    name = f"{schema}.{table.name}"
    check_requirements(requirements, metadata, name)
    if not replace.removes_main and metadata.current_snapshot_id is not None:
        raise commit_failed(
            f"table {name} has a current snapshot, {metadata.current_snapshot_id}, and the "
            "replace did not remove branch main; nothing was written: load the table again "
            "and retry"
        )
    commands = commit_commands(schema, table, metadata, replace.changes, replace=True)
    # The snapshot's manifests are read before anything is written, so a snapshot that
    # cannot be recorded refuses the replace whole; its files are in the table's location
    # after the replace.
    change = None
    if replace.chain is not None:
        moved = [u.location for u in replace.changes if isinstance(u, SetLocationUpdate)]
        at = metadata.model_copy(update={"location": moved[-1]}) if moved else metadata
        change = await read_snapshots(name, at, commits, [], replace.chain, replace=True)
    rows_from = table.rows_from
    if commands:
        unchanged = unchanged_since_read(requirements, table.id, warehouse, name, listed)
        result = await execute_batch(request, commands, precondition=unchanged)
        table = node_of(request).service.catalog(result.version).table_by_id(table.id)
    if change is not None:
        await record_snapshots(request, table, name, change)
        return table
    if table.rows_from > rows_from:
        # Rows committed since the table was read predate its rows' schema version: gone too.
        commits = await node_of(request).data.recorded(table.id)
    if commits and not commits[-1].main_removed:
        # Named by the commit it follows: a replace sent again, or a concurrent one on the
        # same data, is answered with the commit already made.
        request_id = (
            f"iceberg-{table.id}-main-removed-after-{commits[-1].seq}-v{table.schema_version}"
        )
        await node_of(request).data.commit(
            table.id,
            [],
            schema_version=table.schema_version,
            mode="overwrite",
            request_id=scoped_request_id(request, request_id),
            main_removed=True,
        )
    return table

"""Multi-table commits (``POST /v1/transactions/commit``): every table's changes, or none.

Each table change is checked as a commit to that table is (its requirements against its
current metadata, its snapshots against its current snapshot), and then all of them land
together or none does:

- changes that add snapshots to branch ``main`` become one data commit per table, all in one
  store transaction at one timestamp (``DataCommits.commit_many``), each expecting the data
  commit its requirements were checked on: a read as of any moment sees all of the
  transaction or none of it, and a writer that came first to any table fails the whole
  transaction with 409, naming the table;
- changes of metadata (schema, partition spec, sort order, properties, refs to existing
  snapshots) become one batch of catalog commands, one catalog version, whose requirements
  are checked again on the version it is judged on.

A transaction mixes neither, and holds no create, replace, branch commit or publication:
those are committed on their own (each is refused with a 400 saying so). A transaction
changes each table once and at most ``MAX_TABLES_TOGETHER`` tables.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import Field

from api.iceberg.appends import added_snapshots, read_snapshots, table_commit, written_branch
from api.iceberg.branches import published_snapshots
from api.iceberg.commits import (
    CommitTableRequest,
    check_requirements,
    commit_commands,
    unchanged_since_read,
)
from api.iceberg.errors import bad_request, commit_failed
from api.iceberg.models import IcebergModel, TableMetadata
from api.iceberg.paths import NAMESPACE_SEPARATOR, WRITE
from api.iceberg.reads import horizon_of, latest_of, table_state, warehouse_of
from api.iceberg.replaces import replacement
from api.iceberg.snapshots import Snapshots, snapshots_of
from api.iceberg.staging import is_create
from api.iceberg.updates import AddedSnapshot
from api.iceberg.visibility import permit_commit, seen_table
from api.server.execution import execute_batch, node_of
from catalog.catalog import Catalog
from catalog.commands.base import CommandBase
from catalog.data.commits import MAX_TABLES_TOGETHER
from catalog.data.files import DataCommit
from catalog.data.iceberg_refs import MAIN
from catalog.descriptors import TableDescriptor
from catalog.errors import ConcurrentUpdateError, ErrorCode, ValidationError

router = APIRouter()

ON_ITS_OWN = (
    "a transaction's table changes add snapshots to branch main or change metadata; a "
    "create, a replace, a commit to another branch or a publication is committed on its own"
)


class CommitTransactionRequest(IcebergModel):
    """``POST /v1/transactions/commit``."""

    table_changes: list[CommitTableRequest] = Field(
        alias="table-changes", min_length=1, max_length=MAX_TABLES_TOGETHER
    )


@dataclass
class _Change:
    """One table's part of a transaction, as read before it is made."""

    name: str
    schema: str
    table: TableDescriptor
    metadata: TableMetadata
    commits: list[DataCommit]
    body: CommitTableRequest
    chain: list[AddedSnapshot] | None


async def _read(request: Request, cat: Catalog, body: CommitTableRequest) -> _Change:
    """Resolve a table change's table and read its state; refuse what a transaction cannot hold."""
    if body.identifier is None:
        raise bad_request("each table change of a transaction names its table (identifier)")
    namespace = NAMESPACE_SEPARATOR.join(body.identifier.namespace)
    schema, found = seen_table(request, cat, namespace, body.identifier.name)
    permit_commit(request, cat, found, body.updates)
    name = f"{schema.name}.{found.name}"
    # Only the snapshots refs name: a requirement reads refs, a commit its parent (main's
    # head); no answer lists the table's snapshots.
    metadata, commits = await table_state(request, cat, found, refs_only=True)
    if is_create(body.requirements):
        raise bad_request(f"table {name}: {ON_ITS_OWN}")
    if replacement(body.updates, body.requirements, empty=metadata.current_snapshot_id is None):
        raise bad_request(f"table {name}: {ON_ITS_OWN}")
    branch = written_branch(body.updates)
    chain = added_snapshots(body.updates, branch)
    if chain is not None and branch != MAIN:
        raise bad_request(f"table {name}: {ON_ITS_OWN}")
    if chain is None and published_snapshots(body.updates, metadata, found) is not None:
        raise bad_request(f"table {name}: {ON_ITS_OWN}")
    return _Change(name, schema.name, found, metadata, commits, body, chain)


@router.post("/transactions/commit", status_code=204, dependencies=WRITE)
async def commit_transaction(request: Request, body: CommitTransactionRequest) -> Response:
    """Commit several tables' changes as one, or nothing (see the module doc)."""
    cat = latest_of(request)
    changes = list(await asyncio.gather(*(_read(request, cat, c) for c in body.table_changes)))
    for n, change in enumerate(changes):
        if any(c.table.id == change.table.id for c in changes[:n]):
            raise bad_request(f"table {change.name} is changed twice; give its changes once")
    data = [c for c in changes if c.chain is not None]
    if data and len(data) < len(changes):
        raise bad_request(
            "a transaction either adds snapshots to its tables or changes their metadata; "
            "commit the two kinds in two transactions"
        )
    if data:
        await _commit_data(request, changes)
    else:
        await _commit_metadata(request, changes)
    return Response(status_code=204)


async def _commit_data(request: Request, changes: list[_Change]) -> None:
    """Record every table's snapshots as one data commit each, all in one transaction."""
    reads = await asyncio.gather(
        *(
            read_snapshots(c.name, c.metadata, c.commits, c.body.requirements, c.chain)
            for c in changes
            if c.chain is not None
        )
    )
    parts = [
        replace(table_commit(request, c.table, read), name=c.name)
        for c, read in zip(changes, reads, strict=True)
    ]
    try:
        await node_of(request).data.commit_many(parts)
    except ConcurrentUpdateError as e:
        if e.code is not ErrorCode.PRECONDITION_FAILED:
            raise
        raise commit_failed(f"{e.message}: load the tables again and retry") from e
    except ValidationError as e:
        if e.code is not ErrorCode.REQUEST_ID_REUSED:
            raise
        raise bad_request(
            "a snapshot of this transaction is already committed with other files; a new "
            "transaction needs new snapshot ids"
        ) from e


def _listing(
    location: str, commits: list[DataCommit], horizon: int
) -> Callable[[TableDescriptor], Snapshots]:
    """Return how a table's snapshots read before are listed on the version a batch is judged."""

    def listed(judged: TableDescriptor) -> Snapshots:
        return snapshots_of(location, commits, horizon_ts=horizon, state=judged.iceberg)

    return listed


async def _commit_metadata(request: Request, changes: list[_Change]) -> None:
    """Make every table's metadata changes as one batch: one catalog version, or none."""
    commands: list[CommandBase] = []
    checks = []
    warehouse, horizon = warehouse_of(request), horizon_of(request)
    for c in changes:
        check_requirements(c.body.requirements, c.metadata, c.name)
        commands += commit_commands(c.schema, c.table, c.metadata, c.body.updates)
        listed = _listing(c.metadata.location, c.commits, horizon)
        checks.append(
            unchanged_since_read(c.body.requirements, c.table.id, warehouse, c.name, listed)
        )

    def unchanged(current: Catalog) -> None:
        for check in checks:
            check(current)

    if commands:
        await execute_batch(request, commands, precondition=unchanged)

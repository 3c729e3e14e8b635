"""The Iceberg REST catalog's commit route.

A commit's requirements are checked, then its changes made: one data commit, or one batch of
catalog commands (one catalog version).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from api.iceberg.appends import (
    added_snapshots,
    commit_snapshots,
    written_branch,
)
from api.iceberg.branches import commit_to_branch, publish, published_snapshots
from api.iceberg.commits import (
    CommitTableRequest,
    check_requirements,
    commit_commands,
    unchanged_since_read,
)
from api.iceberg.errors import IcebergError, commit_failed
from api.iceberg.etags import tagged_response
from api.iceberg.metadata import (
    table_metadata,
)
from api.iceberg.models import CommitTableResponse
from api.iceberg.paths import (
    WRITE,
    NamespacePath,
    TablePath,
    refuse_view_name,
)
from api.iceberg.reads import horizon_of, latest_of, table_state, warehouse_of, written_file
from api.iceberg.register import (
    drop_on_failure,
)
from api.iceberg.replaces import replace_table, replacement
from api.iceberg.snapshots import Snapshots, snapshots_of
from api.iceberg.staging import CreateChanges, is_create
from api.iceberg.visibility import permit_commit, seen_schema, seen_table
from api.server.execution import execute_batch, node_of
from catalog.catalog import Catalog
from catalog.data.iceberg_refs import MAIN
from catalog.descriptors import TableDescriptor
from catalog.errors import AlreadyExistsError, ErrorCode

router = APIRouter()


@router.post(
    "/namespaces/{namespace}/tables/{table}",
    response_model=CommitTableResponse,
    dependencies=WRITE,
)
async def commit_table(
    request: Request, namespace: NamespacePath, table: TablePath, body: CommitTableRequest
) -> Response:
    """Check a commit's requirements, then make its changes: one data commit or one batch.

    A commit that adds a snapshot to main becomes one data commit, one that adds snapshots to
    another branch one catalog version (``branches``), and one that moves main to a branch's
    head publishes it; one that changes the schema or properties becomes one batch of catalog
    commands; a create transaction's (``assert-create``) creates the table (``staging``). The
    answer's metadata file is written first.
    """
    if is_create(body.requirements):
        schema = seen_schema(request, latest_of(request), namespace).name
        cat, found = await _create_in_commit(request, schema, table, body)
        metadata, _ = await table_state(request, cat, found)
        file, metadata = await written_file(request, found, metadata)
        return tagged_response(CommitTableResponse(metadata_location=file, metadata=metadata))
    cat = latest_of(request)
    schema_found, found = seen_table(request, cat, namespace, table)
    permit_commit(request, cat, found, body.updates)
    schema, name = schema_found.name, found.name
    metadata, commits = await table_state(request, cat, found)
    horizon, location = horizon_of(request), metadata.location

    def listed(judged: TableDescriptor) -> Snapshots:
        return snapshots_of(location, commits, horizon_ts=horizon, state=judged.iceberg)

    empty = metadata.current_snapshot_id is None
    replace = replacement(body.updates, body.requirements, empty=empty)
    branch = written_branch(body.updates)
    chain = None if replace is not None else added_snapshots(body.updates, branch)
    if chain is not None and branch != MAIN:
        found = await commit_to_branch(
            request,
            schema,
            found,
            metadata,
            body,
            chain,
            branch,
            listed,
            warehouse_of(request),
        )
        metadata, _ = await table_state(request, latest_of(request), found)
    elif (published := published_snapshots(body.updates, metadata, found)) is not None:
        await publish(request, body, published, (f"{schema}.{name}", found), metadata, commits)
        metadata, _ = await table_state(request, cat, found)
    elif replace is not None:
        found = await replace_table(
            request,
            schema,
            found,
            metadata,
            commits,
            body.requirements,
            replace,
            warehouse_of(request),
            listed,
        )
        metadata, _ = await table_state(request, latest_of(request), found)
    elif chain is not None:
        await commit_snapshots(
            request, found, f"{schema}.{name}", metadata, commits, body.requirements, chain
        )
        metadata, _ = await table_state(request, cat, found)
    else:
        # Checked here for a quick answer; checked again, atomically, on the version the
        # batch is judged on (``unchanged_since_read``).
        check_requirements(body.requirements, metadata, f"{schema}.{name}")
        commands = commit_commands(schema, found, metadata, body.updates)
        if commands:
            unchanged = unchanged_since_read(
                body.requirements, found.id, warehouse_of(request), f"{schema}.{name}", listed
            )
            result = await execute_batch(request, commands, precondition=unchanged)
            cat = node_of(request).service.catalog(result.version)
            found = cat.table_by_id(found.id)
            metadata = table_metadata(
                found, warehouse_of(request), cat.activation_ts, listed(found)
            )
    file, metadata = await written_file(request, found, metadata)
    return tagged_response(CommitTableResponse(metadata_location=file, metadata=metadata))


def _created_concurrently(schema: str, name: str) -> IcebergError:
    """Return the failure of a create transaction whose table exists (``assert-create``)."""
    return commit_failed(
        f"Requirement failed: table already exists (assert-create of table {schema}.{name}); "
        "nothing was written"
    )


async def _create_in_commit(
    request: Request, schema: str, name: str, body: CommitTableRequest
) -> tuple[Catalog, TableDescriptor]:
    """Create the table of a create transaction's commit, with its first data commit if any.

    Returns the catalog the table was created in and the table. A data commit that is
    refused drops the table again (``staging``).

    Raises:
        IcebergError: CommitFailedException when the table exists or its staged location
            went to another object; BadRequestException for what a create refuses.
    """
    cat = latest_of(request)
    if cat.find_table(schema, name) is not None:
        raise _created_concurrently(schema, name)
    refuse_view_name(cat, schema, name)
    changes = CreateChanges(name, body.updates)
    chain = added_snapshots(changes.snapshots)
    command = changes.command(schema, warehouse_of(request))
    precondition = changes.precondition(schema, command, warehouse_of(request))
    later = changes.later_command(schema)
    commands = [command] if later is None else [command, later]
    try:
        result = await execute_batch(request, commands, precondition=precondition)
    except AlreadyExistsError as e:
        if e.code is not ErrorCode.TABLE_EXISTS:
            raise
        raise _created_concurrently(schema, name) from e
    cat = node_of(request).service.catalog(result.version)
    found = cat.table(schema, name)
    if chain is not None:
        async with drop_on_failure(request, schema, name):
            metadata, commits = await table_state(request, cat, found)
            await commit_snapshots(request, found, f"{schema}.{name}", metadata, commits, [], chain)
    return cat, found

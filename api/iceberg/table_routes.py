"""The Iceberg REST catalog's table routes: list, create, load, register, drop, rename, report.

A table change is one batch of catalog commands run by the server's ``execute_batch`` (as
``POST /v1/ddl`` runs its own), so it makes one catalog version; a register adds one data
commit per snapshot of its main line.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Body, Header, Query, Request
from fastapi.responses import Response

from api.iceberg.appends import (
    change_of,
    record_snapshots,
)
from api.iceberg.creation import create_table_command
from api.iceberg.errors import unsupported
from api.iceberg.etags import tagged_response
from api.iceberg.manifests import stored_path
from api.iceberg.metadata import (
    table_metadata,
)
from api.iceberg.metadata_files import engine_folders
from api.iceberg.models import (
    CreateTableRequest,
    ListTablesResponse,
    LoadCredentialsResponse,
    LoadTableResult,
    RenameTableRequest,
)
from api.iceberg.paths import (
    NAMESPACE_SEPARATOR,
    READ,
    WRITE,
    AccessDelegation,
    NamespacePath,
    PageSize,
    PageToken,
    TablePath,
    named_page,
    refuse_view_name,
)
from api.iceberg.reads import latest_of, read_catalog, table_state, warehouse_of, written_file
from api.iceberg.register import (
    RegisterTableRequest,
    check_branch_lines,
    drop_on_failure,
    logged_times,
    main_line,
    read_metadata_file,
    register_command,
)
from api.iceberg.reports import COMMIT_REPORT, SCAN_REPORT, report_type
from api.iceberg.staging import staged_metadata
from api.iceberg.storage_access import VENDED, storage_access, table_access
from api.iceberg.visibility import seen_names, seen_schema, seen_table
from api.server.execution import execute_batch, node_of
from api.server.permits import permit
from api.server.responses import json_response
from catalog.commands.tables import DropTableCommand, RenameTableCommand
from catalog.data.files import DataCommit
from catalog.descriptors import Privilege, SecurableKind
from catalog.errors import AlreadyExistsError, ErrorCode
from schemasync.clock import physical_of

router = APIRouter()


@router.get("/namespaces/{namespace}/tables", response_model=ListTablesResponse, dependencies=READ)
async def list_tables(
    request: Request,
    namespace: NamespacePath,
    page_token: PageToken = None,
    page_size: PageSize = None,
) -> Response:
    """The tables of a schema."""
    cat = read_catalog(request)
    schema = seen_schema(request, cat, namespace)
    names = seen_names(request, cat, SecurableKind.TABLE, cat.schema_tables(schema.id))
    return json_response(named_page(schema.name, names, page_token, page_size))


@router.post("/namespaces/{namespace}/tables", response_model=LoadTableResult, dependencies=WRITE)
async def create_table(
    request: Request,
    namespace: NamespacePath,
    body: CreateTableRequest,
    access_delegation: AccessDelegation = None,
) -> Response:
    """Create a table (one ``CREATE TABLE``); the answer carries the catalog's column ids.

    A staged create (``stage-create``) creates nothing and answers the metadata the table
    would have, without a metadata file (``staging``); the location's empty engine folders
    are made, for the engine writes its files before it commits.
    """
    found_schema = seen_schema(request, latest_of(request), namespace)
    schema = found_schema.name
    # The privilege first: a caller that may not create learns nothing of what is there.
    permit(request, latest_of(request), Privilege.CREATE, SecurableKind.SCHEMA, found_schema.id)
    if latest_of(request).find_table(schema, body.name) is not None:
        raise _table_exists(schema, body.name)
    refuse_view_name(latest_of(request), schema, body.name)
    if body.stage_create:
        staged = staged_metadata(latest_of(request), schema, body, warehouse_of(request))
        await engine_folders(staged.location, body.name)
        folders = (stored_path(staged.location),)
        config, keys = await storage_access(request, folders, True, access_delegation, body.name)
        return json_response(
            LoadTableResult(metadata=staged, config=config, storage_credentials=keys or None)
        )
    result = await execute_batch(request, [create_table_command(schema, body)])
    cat = node_of(request).service.catalog(result.version)
    found = cat.table(schema, body.name)
    file, metadata = await written_file(
        request, found, table_metadata(found, warehouse_of(request), cat.activation_ts)
    )
    config, keys = await table_access(request, cat, found, access_delegation)
    return tagged_response(
        LoadTableResult(
            metadata_location=file,
            metadata=metadata,
            config=config,
            storage_credentials=keys or None,
        )
    )


@router.get(
    "/namespaces/{namespace}/tables/{table}", response_model=LoadTableResult, dependencies=READ
)
async def load_table(
    request: Request,
    namespace: NamespacePath,
    table: TablePath,
    snapshots: Annotated[str | None, Query(pattern="^(all|refs)$")] = None,
    if_none_match: Annotated[str | None, Header(max_length=10_000)] = None,
    access_delegation: AccessDelegation = None,
) -> Response:
    """A table's metadata, projected from its descriptor and its recorded data commits.

    Its metadata file is written first when missing. ``snapshots=refs`` answers only the
    snapshots a branch or tag names (``all``, the default, every one); the answer's ``ETag``
    in ``If-None-Match`` answers 304 while the table is unchanged.
    """
    cat = read_catalog(request)
    _, found = seen_table(request, cat, namespace, table, (Privilege.SELECT, Privilege.MODIFY))
    metadata, _ = await table_state(request, cat, found)
    file, metadata = await written_file(request, found, metadata)
    if snapshots == "refs":  # the file holds every snapshot; the answer those refs name
        only, _ = await table_state(request, cat, found, refs_only=True)
        metadata = only.model_copy(update={"metadata_log": metadata.metadata_log})
    config, keys = await table_access(request, cat, found, access_delegation)
    answer = LoadTableResult(
        metadata_location=file, metadata=metadata, config=config, storage_credentials=keys or None
    )
    return tagged_response(answer, if_none_match)


@router.get(
    "/namespaces/{namespace}/tables/{table}/credentials",
    response_model=LoadCredentialsResponse,
    dependencies=READ,
)
async def load_credentials(
    request: Request, namespace: NamespacePath, table: TablePath
) -> Response:
    """Fresh short-lived keys for a table's files (read-write when the caller may ``MODIFY``).

    A table in a local folder has none: the list is empty.
    """
    cat = read_catalog(request)
    _, found = seen_table(request, cat, namespace, table, (Privilege.SELECT, Privilege.MODIFY))
    _, keys = await table_access(request, cat, found, VENDED)
    return json_response(LoadCredentialsResponse(storage_credentials=keys))


@router.head("/namespaces/{namespace}/tables/{table}", status_code=204, dependencies=READ)
async def table_exists(request: Request, namespace: NamespacePath, table: TablePath) -> Response:
    """204 when the table exists, else 404."""
    seen_table(request, read_catalog(request), namespace, table)
    return Response(status_code=204)


def _table_exists(schema: str, name: str) -> AlreadyExistsError:
    """Return the refusal of a table name that is taken, in Iceberg's words first."""
    return AlreadyExistsError(f"Table already exists: {schema}.{name}", code=ErrorCode.TABLE_EXISTS)


@router.post("/namespaces/{namespace}/register", response_model=LoadTableResult, dependencies=WRITE)
async def register_table(
    request: Request, namespace: NamespacePath, body: RegisterTableRequest
) -> Response:
    """Adopt a table from its metadata file: one ``CREATE TABLE``, then its snapshots.

    Each snapshot of branch main's line becomes a data commit; one refused drops the table
    again (``register``).
    """
    if body.overwrite:
        raise unsupported(
            f"table {body.name}: register with overwrite is not supported; drop the table first"
        )
    found_schema = seen_schema(request, latest_of(request), namespace)
    schema = found_schema.name
    permit(request, latest_of(request), Privilege.CREATE, SecurableKind.SCHEMA, found_schema.id)
    if latest_of(request).find_table(schema, body.name) is not None:
        raise _table_exists(schema, body.name)
    refuse_view_name(latest_of(request), schema, body.name)
    file = body.metadata_location
    read = await asyncio.to_thread(read_metadata_file, file, warehouse_of(request))
    line = main_line(read, file)
    result = await execute_batch(request, [register_command(schema, body.name, read, file)])
    cat = node_of(request).service.catalog(result.version)
    found = cat.table(schema, body.name)
    location = table_metadata(found, warehouse_of(request), cat.activation_ts).location
    logged = logged_times(read, line, physical_of(node_of(request).clock.now()))
    qualified = f"{schema}.{body.name}"
    async with drop_on_failure(request, schema, body.name):
        base: list[DataCommit] = []
        for snapshot in line:
            kept = snapshot.model_copy(update={"schema_id": found.schema_version})
            tip = base[-1] if base else None
            change = await change_of(location, [kept], base, kept.sequence_number or 0, on=tip)
            at = logged.get(snapshot.snapshot_id)
            recorded = await record_snapshots(request, found, qualified, change, at)
            base.append(recorded)
        await check_branch_lines(location, read, file)
    metadata, _ = await table_state(request, cat, found)
    written, metadata = await written_file(request, found, metadata)
    return tagged_response(LoadTableResult(metadata_location=written, metadata=metadata))


@router.delete("/namespaces/{namespace}/tables/{table}", status_code=204, dependencies=WRITE)
async def drop_table(
    request: Request,
    namespace: NamespacePath,
    table: TablePath,
    purge_requested: Annotated[bool, Query(alias="purgeRequested")] = False,
) -> Response:
    """Drop a table (``DROP TABLE``); its data files go with the catalog's own clean-up.

    ``purgeRequested`` (Spark's ``DROP TABLE ... PURGE`` with ``rest-catalog-purge``) drops it
    the same way: the files stay for reads pinned before the drop until the data expiry
    deletes the folder of a table no kept version holds.
    """
    schema, found = seen_table(request, latest_of(request), namespace, table)
    command = DropTableCommand(**{"schema": schema.name, "name": found.name})
    await execute_batch(request, [command])
    return Response(status_code=204)


@router.post("/tables/rename", status_code=204, dependencies=WRITE)
async def rename_table(request: Request, body: RenameTableRequest) -> Response:
    """Rename a table within its schema (the catalog does not move tables between schemas)."""
    source, destination = body.source, body.destination
    cat = latest_of(request)
    schema, found = seen_table(
        request, cat, NAMESPACE_SEPARATOR.join(source.namespace), source.name
    )
    target = NAMESPACE_SEPARATOR.join(destination.namespace)
    if seen_schema(request, cat, target).id != schema.id:
        raise unsupported(
            f"table {source.name} cannot move to namespace {'.'.join(destination.namespace)}: "
            "this catalog renames a table within its schema only"
        )
    if cat.find_table(schema.name, destination.name) is not None:
        raise _table_exists(schema.name, destination.name)
    refuse_view_name(cat, schema.name, destination.name, renaming=f"{schema.name}.{found.name}")
    command = RenameTableCommand(
        **{"schema": schema.name, "name": found.name, "new_name": destination.name}
    )
    await execute_batch(request, [command])
    return Response(status_code=204)


@router.post("/namespaces/{namespace}/tables/{table}/metrics", status_code=204, dependencies=READ)
async def report_metrics(
    request: Request,
    namespace: NamespacePath,
    table: TablePath,
    body: Annotated[dict[str, object], Body(description="A ReportMetricsRequest.")],
) -> Response:
    """Count a client's scan or commit report of a table (``reports``); 404 without the table."""
    seen_table(request, read_catalog(request), namespace, table)
    kind = report_type(body)
    label = kind if kind in (SCAN_REPORT, COMMIT_REPORT) else "other"
    request.app.state.metrics.iceberg_reports.labels(report_type=label).inc()
    return Response(status_code=204)

"""The Iceberg REST catalog's routes (``/v1`` of the sub-application at ``/iceberg``).

Namespaces are schemas, tables are tables.

Reads answer from the node's latest catalog and the tables' data commits recorded (one
snapshot per data commit). A schema or property change is one batch of catalog commands run
by the server's ``execute_batch`` (as ``POST /v1/ddl`` runs its own), so it makes one catalog
version; a commit that adds a snapshot makes one data commit (``appends``). Reads take the
reader role, changes the writer role, as on ``/v1``.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Header, Query, Request
from fastapi.responses import Response

from api.iceberg.appends import (
    added_snapshots,
    change_of,
    commit_snapshots,
    record_snapshots,
    written_branch,
)
from api.iceberg.branches import commit_to_branch, publish, published_snapshots
from api.iceberg.commits import (
    CommitTableRequest,
    check_requirements,
    commit_commands,
    unchanged_since_read,
)
from api.iceberg.creation import create_table_command
from api.iceberg.errors import IcebergError, commit_failed, documented_errors, unsupported
from api.iceberg.etags import tagged_response
from api.iceberg.metadata import (
    data_number,
    metadata_files_folder,
    metadata_location,
    served_location,
    table_metadata,
)
from api.iceberg.metadata_files import engine_folders, unwritable, write_table_metadata
from api.iceberg.models import (
    CatalogConfig,
    CommitTableResponse,
    CreateNamespaceRequest,
    CreateTableRequest,
    ListNamespacesResponse,
    ListTablesResponse,
    LoadTableResult,
    NamespaceResponse,
    RenameTableRequest,
    TableIdentifier,
    TableMetadata,
    UpdateNamespacePropertiesRequest,
    UpdateNamespacePropertiesResponse,
)
from api.iceberg.paths import (
    ENDPOINTS,
    NAMESPACE_SEPARATOR,
    NamespacePath,
    TablePath,
    page,
    resolve_schema,
    resolve_table,
)
from api.iceberg.register import (
    RegisterTableRequest,
    check_branch_lines,
    drop_on_failure,
    logged_times,
    main_line,
    read_metadata_file,
    register_command,
)
from api.iceberg.replaces import replace_table, replacement
from api.iceberg.reports import COMMIT_REPORT, SCAN_REPORT, report_type
from api.iceberg.snapshots import Snapshots, ensure_manifests, snapshots_of
from api.iceberg.staging import CreateChanges, is_create, staged_metadata
from api.server.auth import require
from api.server.execution import execute_batch, node_of
from api.server.responses import json_response
from api.wire.roles import Role
from catalog.catalog import Catalog
from catalog.commands.schemas import (
    AlterSchemaPropertiesCommand,
    CreateSchemaCommand,
    DropSchemaCommand,
)
from catalog.commands.tables import DropTableCommand, RenameTableCommand
from catalog.data.files import DataCommit
from catalog.data.iceberg_refs import MAIN
from catalog.descriptors import TableDescriptor
from catalog.errors import AlreadyExistsError, CatalogError, ErrorCode
from catalog.properties import named_properties, properties_dict
from schemasync.clock import physical_of

router = APIRouter(prefix="/v1", tags=["iceberg"], responses=documented_errors())

READ = [Depends(require(Role.READER))]
WRITE = [Depends(require(Role.WRITER))]

PageToken = Annotated[str | None, Query(alias="pageToken", max_length=1000)]
PageSize = Annotated[int | None, Query(alias="pageSize", ge=1, le=10_000)]
AccessDelegation = Annotated[
    str | None,
    Header(
        alias="X-Iceberg-Access-Delegation",
        max_length=1000,
        description="Accepted and ignored: tables live on the server's local file system, "
        "which a client reads with no credentials vended or requests signed.",
    ),
]


def _warehouse(request: Request) -> str:
    """Return the cluster's warehouse (where tables created without a location live)."""
    folder = node_of(request).settings.warehouse
    return folder if folder is not None else request.app.state.settings.default_warehouse


async def _metadata(
    request: Request, cat: Catalog, table: TableDescriptor, *, refs_only: bool = False
) -> tuple[TableMetadata, list[DataCommit]]:
    """Return the table's metadata as of ``cat`` with the data commits recorded, and those.

    The manifests of the Spark source's commits are written first, where missing. A commit
    racing this read may be missing from it; a writer's requirements then fail at its
    commit, as Iceberg's optimistic commits expect.
    """
    node = node_of(request)
    commits = await node.data.recorded(table.id)
    location = served_location(table, _warehouse(request))
    if any(c.iceberg is None for c in commits):  # the Spark source's: manifests written here
        plain = table_metadata(table, _warehouse(request), cat.activation_ts)
        await ensure_manifests(
            location, plain.schemas[-1], table.columns, commits, plain.partition_specs
        )
    snapshots = snapshots_of(
        location,
        commits,
        horizon_ts=_horizon(request),
        state=table.iceberg,
        refs_only=refs_only,
    )
    return table_metadata(table, _warehouse(request), cat.activation_ts, snapshots), commits


async def _written(
    request: Request, table: TableDescriptor, metadata: TableMetadata
) -> tuple[str, TableMetadata]:
    """Return the metadata file of ``table``'s state and the metadata it holds, written first.

    The file is named by the catalog version that last changed the table (the earliest
    version the node keeps, when that one is compacted away) and its latest data commit.

    Raises:
        IcebergError: ServiceUnavailableException when the warehouse cannot be written.
    """
    service = node_of(request).service
    try:
        version = service.active_catalog_version(table.update_ts)
    except CatalogError:
        version = service.earliest_version
    files = metadata_files_folder(table.id, _warehouse(request))
    file = metadata_location(files, version, data_number(table, metadata))
    try:
        written = await asyncio.to_thread(write_table_metadata, files, file, metadata)
    except OSError as e:
        raise unwritable(f"the metadata file {file} of table {table.name}", e) from e
    return file, written


def _horizon(request: Request) -> int:
    """Return the earliest moment the node still reads (its earliest version's activation)."""
    service = node_of(request).service
    return service.catalog(service.earliest_version).activation_ts


def _latest(request: Request) -> Catalog:
    return node_of(request).service.latest_catalog()


@router.get("/config", response_model=CatalogConfig, dependencies=READ)
async def get_config(
    warehouse: Annotated[str | None, Query(max_length=1000)] = None,
) -> Response:
    """The client settings (none) and the endpoints this server implements."""
    return json_response(CatalogConfig(endpoints=list(ENDPOINTS)))


@router.get("/namespaces", response_model=ListNamespacesResponse, dependencies=READ)
async def list_namespaces(
    request: Request,
    parent: Annotated[str | None, Query(max_length=1000)] = None,
    page_token: PageToken = None,
    page_size: PageSize = None,
) -> Response:
    """The schemas, each a one-level namespace; a namespace has no children.

    A ``parent`` answers none, or 404 when it is no namespace.
    """
    cat = _latest(request)
    if parent:
        resolve_schema(cat, parent)
    names = [] if parent else sorted(s.name for s in cat.schemas())
    shown, token = page(names, page_token, page_size)
    return json_response(
        ListNamespacesResponse(namespaces=[[n] for n in shown], next_page_token=token)
    )


@router.post("/namespaces", response_model=NamespaceResponse, dependencies=WRITE)
async def create_namespace(request: Request, body: CreateNamespaceRequest) -> Response:
    """Create a schema (``CREATE SCHEMA``) with its properties, kept verbatim."""
    if len(body.namespace) != 1:
        raise unsupported("namespaces are the catalog's schemas: give exactly one level")
    name = body.namespace[0]
    if _latest(request).find_schema(name) is not None:
        raise AlreadyExistsError(f"Namespace already exists: {name}", code=ErrorCode.SCHEMA_EXISTS)
    command = CreateSchemaCommand(name=name, properties=body.properties)
    await execute_batch(request, [command])
    return json_response(NamespaceResponse(namespace=body.namespace, properties=body.properties))


@router.get("/namespaces/{namespace}", response_model=NamespaceResponse, dependencies=READ)
async def load_namespace(request: Request, namespace: NamespacePath) -> Response:
    """One schema, with its properties."""
    found = resolve_schema(_latest(request), namespace)
    return json_response(
        NamespaceResponse(namespace=[found.name], properties=properties_dict(found.properties))
    )


@router.post(
    "/namespaces/{namespace}/properties",
    response_model=UpdateNamespacePropertiesResponse,
    dependencies=WRITE,
)
async def update_namespace_properties(
    request: Request, namespace: NamespacePath, body: UpdateNamespacePropertiesRequest
) -> Response:
    """Set and remove a schema's properties (one catalog version, or none when unchanged).

    A key both set and removed is refused (422); a removed key the schema lacks is named in
    ``missing``.
    """
    both = sorted(set(body.updates) & set(body.removals))
    if both:
        raise IcebergError(
            "UnprocessableEntityException",
            422,
            f"{named_properties(both)} are both updated and removed; give each once",
        )
    schema = resolve_schema(_latest(request), namespace)
    name, held = schema.name, properties_dict(schema.properties)
    command = AlterSchemaPropertiesCommand(
        name=name, set_properties=body.updates, remove_properties=tuple(body.removals)
    )
    await execute_batch(request, [command])
    removals = list(dict.fromkeys(body.removals))
    return json_response(
        UpdateNamespacePropertiesResponse(
            updated=sorted(body.updates),
            removed=[k for k in removals if k in held],
            missing=[k for k in removals if k not in held],
        )
    )


@router.head("/namespaces/{namespace}", status_code=204, dependencies=READ)
async def namespace_exists(request: Request, namespace: NamespacePath) -> Response:
    """204 when the schema exists, else 404."""
    resolve_schema(_latest(request), namespace)
    return Response(status_code=204)


@router.delete("/namespaces/{namespace}", status_code=204, dependencies=WRITE)
async def drop_namespace(request: Request, namespace: NamespacePath) -> Response:
    """Drop an empty schema (``DROP SCHEMA``)."""
    name = resolve_schema(_latest(request), namespace).name
    await execute_batch(request, [DropSchemaCommand(name=name)])
    return Response(status_code=204)


@router.get("/namespaces/{namespace}/tables", response_model=ListTablesResponse, dependencies=READ)
async def list_tables(
    request: Request,
    namespace: NamespacePath,
    page_token: PageToken = None,
    page_size: PageSize = None,
) -> Response:
    """The tables of a schema."""
    cat = _latest(request)
    schema = resolve_schema(cat, namespace)
    names = sorted(t.name for t in cat.schema_tables(schema.id))
    shown, token = page(names, page_token, page_size)
    identifiers = [TableIdentifier(namespace=[schema.name], name=n) for n in shown]
    return json_response(ListTablesResponse(identifiers=identifiers, next_page_token=token))


@router.post("/namespaces/{namespace}/tables", response_model=LoadTableResult, dependencies=WRITE)
async def create_table(
    request: Request, namespace: NamespacePath, body: CreateTableRequest
) -> Response:
    """Create a table (one ``CREATE TABLE``); the answer carries the catalog's column ids.

    A staged create (``stage-create``) creates nothing and answers the metadata the table
    would have, without a metadata file (``staging``); the location's empty engine folders
    are made, for the engine writes its files before it commits.
    """
    schema = resolve_schema(_latest(request), namespace).name
    if _latest(request).find_table(schema, body.name) is not None:
        raise _table_exists(schema, body.name)
    if body.stage_create:
        staged = staged_metadata(_latest(request), schema, body, _warehouse(request))
        await engine_folders(staged.location, body.name)
        return json_response(LoadTableResult(metadata=staged))
    result = await execute_batch(request, [create_table_command(schema, body)])
    cat = node_of(request).service.catalog(result.version)
    found = cat.table(schema, body.name)
    file, metadata = await _written(
        request, found, table_metadata(found, _warehouse(request), cat.activation_ts)
    )
    return tagged_response(LoadTableResult(metadata_location=file, metadata=metadata))


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
    cat = _latest(request)
    _, found = resolve_table(cat, namespace, table)
    metadata, _ = await _metadata(request, cat, found)
    file, metadata = await _written(request, found, metadata)
    if snapshots == "refs":  # the file holds every snapshot; the answer those refs name
        only, _ = await _metadata(request, cat, found, refs_only=True)
        metadata = only.model_copy(update={"metadata_log": metadata.metadata_log})
    return tagged_response(
        LoadTableResult(metadata_location=file, metadata=metadata), if_none_match
    )


@router.head("/namespaces/{namespace}/tables/{table}", status_code=204, dependencies=READ)
async def table_exists(request: Request, namespace: NamespacePath, table: TablePath) -> Response:
    """204 when the table exists, else 404."""
    resolve_table(_latest(request), namespace, table)
    return Response(status_code=204)


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
        schema = resolve_schema(_latest(request), namespace).name
        cat, found = await _create_in_commit(request, schema, table, body)
        metadata, _ = await _metadata(request, cat, found)
        file, metadata = await _written(request, found, metadata)
        return tagged_response(CommitTableResponse(metadata_location=file, metadata=metadata))
    cat = _latest(request)
    schema_found, found = resolve_table(cat, namespace, table)
    schema, name = schema_found.name, found.name
    metadata, commits = await _metadata(request, cat, found)
    horizon, location = _horizon(request), metadata.location

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
            _warehouse(request),
        )
        metadata, _ = await _metadata(request, _latest(request), found)
    elif (published := published_snapshots(body.updates, metadata, found)) is not None:
        await publish(request, body, published, (f"{schema}.{name}", found), metadata, commits)
        metadata, _ = await _metadata(request, cat, found)
    elif replace is not None:
        found = await replace_table(
            request,
            schema,
            found,
            metadata,
            commits,
            body.requirements,
            replace,
            _warehouse(request),
            listed,
        )
        metadata, _ = await _metadata(request, _latest(request), found)
    elif chain is not None:
        await commit_snapshots(
            request, found, f"{schema}.{name}", metadata, commits, body.requirements, chain
        )
        metadata, _ = await _metadata(request, cat, found)
    else:
        # Checked here for a quick answer; checked again, atomically, on the version the
        # batch is judged on (``unchanged_since_read``).
        check_requirements(body.requirements, metadata, f"{schema}.{name}")
        commands = commit_commands(schema, found, metadata, body.updates)
        if commands:
            unchanged = unchanged_since_read(
                body.requirements, found.id, _warehouse(request), f"{schema}.{name}", listed
            )
            result = await execute_batch(request, commands, precondition=unchanged)
            cat = node_of(request).service.catalog(result.version)
            found = cat.table_by_id(found.id)
            metadata = table_metadata(found, _warehouse(request), cat.activation_ts, listed(found))
    file, metadata = await _written(request, found, metadata)
    return tagged_response(CommitTableResponse(metadata_location=file, metadata=metadata))


def _table_exists(schema: str, name: str) -> AlreadyExistsError:
    """Return the refusal of a table name that is taken, in Iceberg's words first."""
    return AlreadyExistsError(f"Table already exists: {schema}.{name}", code=ErrorCode.TABLE_EXISTS)


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
    cat = _latest(request)
    if cat.find_table(schema, name) is not None:
        raise _created_concurrently(schema, name)
    changes = CreateChanges(name, body.updates)
    chain = added_snapshots(changes.snapshots)
    command = changes.command(schema, _warehouse(request))
    precondition = changes.precondition(schema, command, _warehouse(request))
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
            metadata, commits = await _metadata(request, cat, found)
            await commit_snapshots(request, found, f"{schema}.{name}", metadata, commits, [], chain)
    return cat, found


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
    schema = resolve_schema(_latest(request), namespace).name
    if _latest(request).find_table(schema, body.name) is not None:
        raise _table_exists(schema, body.name)
    file = body.metadata_location
    read = await asyncio.to_thread(read_metadata_file, file, _warehouse(request))
    line = main_line(read, file)
    result = await execute_batch(request, [register_command(schema, body.name, read, file)])
    cat = node_of(request).service.catalog(result.version)
    found = cat.table(schema, body.name)
    location = table_metadata(found, _warehouse(request), cat.activation_ts).location
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
    metadata, _ = await _metadata(request, cat, found)
    written, metadata = await _written(request, found, metadata)
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
    schema, found = resolve_table(_latest(request), namespace, table)
    command = DropTableCommand(**{"schema": schema.name, "name": found.name})
    await execute_batch(request, [command])
    return Response(status_code=204)


@router.post("/tables/rename", status_code=204, dependencies=WRITE)
async def rename_table(request: Request, body: RenameTableRequest) -> Response:
    """Rename a table within its schema (the catalog does not move tables between schemas)."""
    source, destination = body.source, body.destination
    cat = _latest(request)
    schema, found = resolve_table(cat, NAMESPACE_SEPARATOR.join(source.namespace), source.name)
    target = NAMESPACE_SEPARATOR.join(destination.namespace)
    if resolve_schema(cat, target).id != schema.id:
        raise unsupported(
            f"table {source.name} cannot move to namespace {'.'.join(destination.namespace)}: "
            "this catalog renames a table within its schema only"
        )
    if cat.find_table(schema.name, destination.name) is not None:
        raise _table_exists(schema.name, destination.name)
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
    resolve_table(_latest(request), namespace, table)
    kind = report_type(body)
    label = kind if kind in (SCAN_REPORT, COMMIT_REPORT) else "other"
    request.app.state.metrics.iceberg_reports.labels(report_type=label).inc()
    return Response(status_code=204)

"""Register: a table adopted from its Iceberg metadata file (``POST .../register``).

The file is read as untrusted input: it must be a regular file inside the warehouse, reached
without a symbolic link, at most ``MAX_METADATA_FILE_BYTES``, a JSON object of format
version 2; anything else is refused with a 400 naming the file, and nothing is written.

The table gets, in one catalog version (one ``CREATE TABLE``), the file's current schema
(field ids become column ids, nested fields' ids theirs, its identifier fields the primary
key, its schema id the table's schema version; the older schemas are not kept: the catalog's
schema versions hold only what the table had in this catalog), its partition specs, sort
orders (by top-level fields: one using a nested field is refused), properties, uuid, tags
and branches, and its location (``catalog.data.locations``' rules). Then each snapshot of
branch ``main``'s line (from the current one back through its parents, as far as the file
lists them), oldest first, becomes one data commit, read from its manifests as a writer's
commit is (``appends.record_snapshot``), keeping its id, manifest list, summary, time and
sequence number. The snapshots off main's line that its tags and branches reach (a branch's
line, back to main's) are kept as snapshots of branches other than main
(``catalog.data.iceberg_refs``), their manifests and files checked as a branch commit's. A
data commit or a branch's file that is refused drops the table again (``drop_on_failure``),
so a register stands whole or not at all; a reader may see the table with part of its
snapshots in between, as it may see a create transaction's table before its data.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pydantic
from fastapi import Request
from pydantic import Field

from api.iceberg.avro_reads import READ_DEADLINE_S
from api.iceberg.branches import branch_snapshot, check_line
from api.iceberg.creation import SERVED_FORMAT_VERSION, table_command
from api.iceberg.errors import bad_request, malformed, unavailable
from api.iceberg.models import IcebergModel, IcebergSchema, TableMetadata
from api.iceberg.nested_types import nested_ids
from api.iceberg.properties import split_properties
from api.iceberg.updates import AddedSnapshot, SetSnapshotRefUpdate
from api.server.execution import execute_batch
from catalog.commands.iceberg_tables import IcebergTableSpec
from catalog.commands.tables import CreateTableCommand, DropTableCommand
from catalog.data.iceberg_refs import MAIN, SnapshotRef
from catalog.data.iceberg_table import IcebergTableState, PartitionSpec, SortOrder
from catalog.data.table_files import ReadDeadlineError, TableFileError, read_file
from catalog.data.warehouse import folder_of, inside, warehouse_root
from catalog.descriptors.nested import path_words
from catalog.descriptors.tables import INITIAL_TABLE_VERSION
from catalog.errors import ValidationError
from catalog.properties import properties_of

MAX_METADATA_FILE_BYTES = 16 * 1024 * 1024
"""The largest metadata file a register reads."""


class RegisterTableRequest(IcebergModel):
    """``POST /v1/namespaces/{namespace}/register``."""

    name: str = Field(min_length=1, max_length=1000)
    metadata_location: str = Field(alias="metadata-location", min_length=1, max_length=4096)
    overwrite: bool = False


def read_metadata_file(location: str, warehouse: str) -> TableMetadata:
    """Read the metadata file at ``location`` (a path or a URI) as untrusted input.

    Raises:
        IcebergError: BadRequestException naming the file: not a file in the
            warehouse, reached through a symbolic link, missing, not a regular file, too
            large, not JSON, or not table metadata.
    """
    try:
        path = folder_of(location)
    except ValidationError as e:
        raise bad_request(f"metadata file {location}: {e.message}") from e
    folder = warehouse_root(warehouse)
    if not inside(path, folder):
        raise bad_request(f"metadata file {location} is not inside the warehouse")
    relative = path[len(folder) + 1 :]
    try:
        _, data = read_file(
            folder,
            relative,
            "metadata file",
            location,
            limit=MAX_METADATA_FILE_BYTES,
            deadline=time.monotonic() + READ_DEADLINE_S,
        )
    except ReadDeadlineError as e:  # the store did not answer (in time): nothing was read
        raise unavailable(f"{e}; nothing was registered: send the request again") from e
    except TableFileError as e:
        raise bad_request(str(e)) from e
    try:
        body = json.loads(data)
    except ValueError as e:
        raise bad_request(f"metadata file {location} is not JSON: {e}") from e
    if not isinstance(body, dict):
        raise bad_request(f"metadata file {location} is not a JSON object")
    try:
        return TableMetadata.model_validate(body)
    except pydantic.ValidationError as e:
        raise malformed(f"metadata file {location} is not Iceberg table metadata", e) from e


def _current_schema(metadata: TableMetadata, file: str) -> IcebergSchema:
    found = [s for s in metadata.schemas if s.schema_id == metadata.current_schema_id]
    if not found:
        raise bad_request(
            f"metadata file {file}: current-schema-id {metadata.current_schema_id} names none "
            "of its schemas"
        )
    return found[0]


_SPEC_FIELD = {
    "source-id": "source_id",
    "field-id": "field_id",
    "name": "name",
    "transform": "transform",
}
_SORT_FIELD = {
    "source-id": "source_id",
    "transform": "transform",
    "direction": "direction",
    "null-order": "null_order",
}


_KEPT_AS_THEY_ARE = (
    "format_version",
    "default_spec_id",
    "last_partition_id",
    "default_sort_order_id",
    "table_uuid",
)
"""The members of a metadata file the table's state keeps unchanged (same names in both)."""


def _fields(fields: list[dict[str, Any]], names: Mapping[str, str]) -> list[dict[str, Any]]:
    """Return a spec's or order's fields with the catalog's member names."""
    return [{ours: field[theirs] for theirs, ours in names.items()} for field in fields]


def _state(
    metadata: TableMetadata, others: Mapping[str, str], file: str, schema_version: int
) -> IcebergTableState:
    """Return the file's specs, orders, refs, branches, properties and uuid as the table's state.

    Every snapshot of a branch names the registered schema version, as main's do.
    """
    try:
        canonical = str(uuid.UUID(metadata.table_uuid))
    except ValueError as e:
        raise bad_request(f"metadata file {file}: table-uuid is not a uuid") from e
    if canonical != metadata.table_uuid:
        raise bad_request(f"metadata file {file}: table-uuid is not in canonical form")
    try:
        specs = [
            PartitionSpec.model_validate(
                {"spec_id": s.spec_id, "fields": _fields(s.fields, _SPEC_FIELD)}
            )
            for s in metadata.partition_specs
        ]
        orders = [
            SortOrder.model_validate(
                {"order_id": o.order_id, "fields": _fields(o.fields, _SORT_FIELD)}
            )
            for o in metadata.sort_orders
        ]
        kept = {member: getattr(metadata, member) for member in _KEPT_AS_THEY_ARE}
        return IcebergTableState.model_validate(
            {
                **kept,
                "specs": specs,
                "sort_orders": orders,
                "properties": properties_of(dict(others)),
                "refs": _refs(metadata, file),
                "branch_snapshots": [
                    branch_snapshot(s, schema_version) for s in branch_lines(metadata, file)
                ],
            }
        )
    except (KeyError, TypeError, AttributeError, ValidationError) as e:
        raise bad_request(f"metadata file {file}: a spec or order cannot be read: {e}") from e


def _refs(metadata: TableMetadata, file: str) -> list[SnapshotRef]:
    """Return the file's tags and branches other than main, by name.

    Raises:
        IcebergError: BadRequestException for a ref that cannot be read.
    """
    try:
        refs = [
            SetSnapshotRefUpdate.of(name, ref)
            for name, ref in metadata.refs.items()
            if name != MAIN
        ]
    except (pydantic.ValidationError, ValidationError) as e:
        raise bad_request(f"metadata file {file}: a ref cannot be read: {e}") from e
    return sorted(refs, key=lambda r: r.name)


def main_line(metadata: TableMetadata, file: str) -> list[AddedSnapshot]:
    """Return the snapshots of branch main's line, oldest first, as the file lists them.

    Raises:
        IcebergError: BadRequestException for a snapshot that cannot be read, a current
            snapshot the file does not list, or a sequence number missing or not increasing.
    """
    by_id = _listed(metadata, file)
    current = metadata.current_snapshot_id
    if current == -1:
        current = None
    if current is not None and current not in by_id:
        raise bad_request(f"metadata file {file}: current snapshot {current} is not listed")
    line: list[AddedSnapshot] = []
    while current is not None and current in by_id and len(line) < len(by_id):
        line.append(by_id[current])
        current = by_id[current].parent_snapshot_id
    line.reverse()
    numbers = [s.sequence_number for s in line]
    known = [n for n in numbers if n is not None]
    if len(known) != len(numbers) or known != sorted(set(known)):
        raise bad_request(
            f"metadata file {file}: the snapshots of branch main need increasing sequence numbers"
        )
    return line


def _listed(metadata: TableMetadata, file: str) -> dict[int, AddedSnapshot]:
    """Return the snapshots the file lists, by id.

    Raises:
        IcebergError: BadRequestException for a snapshot that cannot be read.
    """
    try:
        listed = [AddedSnapshot.model_validate(s) for s in metadata.snapshots]
    except pydantic.ValidationError as e:
        raise bad_request(f"metadata file {file}: a snapshot cannot be read: {e}") from e
    return {s.snapshot_id: s for s in listed}


def branch_lines(metadata: TableMetadata, file: str) -> list[AddedSnapshot]:
    """Return the snapshots the file's refs reach off main's line, by sequence number.

    Each ref off main's line names the head of a branch's line (or a tag on one): it and its
    parents back to main's line (or as far as the file lists them) are kept as snapshots of
    branches other than main, as engines wrote them.

    Raises:
        IcebergError: BadRequestException for a ref naming a snapshot the file does not
            list, or a snapshot off main's line without a sequence number.
    """
    listed = _listed(metadata, file)
    on_line = {s.snapshot_id for s in main_line(metadata, file)}
    off: dict[int, AddedSnapshot] = {}
    for ref in _refs(metadata, file):
        if ref.snapshot_id not in listed:
            raise bad_request(
                f"metadata file {file}: {ref.type} {ref.name} names snapshot {ref.snapshot_id}, "
                "which the file does not list"
            )
        at: int | None = ref.snapshot_id
        while at is not None and at in listed and at not in on_line and at not in off:
            off[at] = listed[at]
            at = listed[at].parent_snapshot_id
    if any(s.sequence_number is None for s in off.values()):
        raise bad_request(f"metadata file {file}: a snapshot of a branch has no sequence number")
    return sorted(off.values(), key=lambda s: s.sequence_number or 0)


async def check_branch_lines(location: str, metadata: TableMetadata, file: str) -> None:
    """Read and check the manifests and files of the file's snapshots off main's line.

    Raises:
        IcebergError: BadRequestException for a manifest or file the catalog cannot record.
    """
    listed = _listed(metadata, file)
    for snapshot in branch_lines(metadata, file):
        parent = listed.get(snapshot.parent_snapshot_id or 0)
        await check_line(location, [snapshot], parent.manifest_list if parent else None)


def register_command(
    namespace: str, name: str, metadata: TableMetadata, file: str
) -> CreateTableCommand:
    """Return the command creating the table a metadata file describes (see the module doc).

    Raises:
        IcebergError: BadRequestException for what the catalog cannot keep of the file.
        ValidationError: a column, spec, order or location the catalog refuses.
    """
    if metadata.format_version != SERVED_FORMAT_VERSION:
        raise bad_request(
            f"metadata file {file}: a register adopts tables of Iceberg format version "
            f"{SERVED_FORMAT_VERSION}, not {metadata.format_version}"
        )
    schema = _current_schema(metadata, file)
    _refuse_nested_sources(name, metadata, schema, file)
    own, others = split_properties(metadata.properties)
    schema_version = max(INITIAL_TABLE_VERSION, schema.schema_id or 0)
    iceberg = IcebergTableSpec(
        format_version=metadata.format_version,
        registered=_state(metadata, others, file, schema_version),
        column_docs={f.name: f.doc for f in schema.fields if f.doc},
    )
    return table_command(
        namespace,
        name,
        schema,
        iceberg,
        own,
        location=metadata.location,
        column_ids=[f.id for f in schema.fields],
        schema_version=schema_version,
        last_column_id=metadata.last_column_id,
    )


def _refuse_nested_sources(
    name: str, metadata: TableMetadata, schema: IcebergSchema, file: str
) -> None:
    """Refuse a partition or sort field whose source is a nested field, naming its path.

    Raises:
        IcebergError: BadRequestException naming the file, the spec or order and the field.
    """
    nested = nested_ids(name, schema.fields)
    kept: list[tuple[str, list[dict[str, Any]]]] = [
        *((f"partition spec {s.spec_id}", s.fields) for s in metadata.partition_specs),
        *((f"sort order {o.order_id}", o.fields) for o in metadata.sort_orders),
    ]
    for what, fields in kept:
        for f in fields:
            source = f.get("source-id")
            if isinstance(source, int) and source in nested:
                raise bad_request(
                    f"metadata file {file}: {what} uses the nested field "
                    f"{path_words(nested[source])}; this catalog partitions and sorts by "
                    "top-level fields only"
                )


@asynccontextmanager
async def drop_on_failure(request: Request, schema: str, name: str) -> AsyncIterator[None]:
    """Drop table ``schema.name`` again when the block fails, then raise what it raised.

    A create that must stand with its data or not at all (a create transaction's table and
    its first snapshot, a registered table and its snapshots) runs its data commits in it.
    """
    try:
        yield
    except Exception:
        drop = DropTableCommand(**{"schema": schema, "name": name, "if_exists": True})
        await execute_batch(request, [drop])
        raise


def logged_times(
    metadata: TableMetadata, line: Sequence[AddedSnapshot], now_ms: int
) -> dict[int, int]:
    """Return when each snapshot of ``line`` last became current, by the file's ``snapshot-log``.

    A registered table keeps the history it came with: these are its snapshots' times in
    the table's ``snapshot-log``. Times run forward along the line and none is after
    ``now_ms`` (the register); a snapshot the log does not name (Iceberg drops the entries
    of expired snapshots) gets the time of the one before it, the first ones that of the
    first named. Empty when the log names none of them: their register times serve.
    """
    logged: dict[int, int] = {}
    for entry in metadata.snapshot_log:
        snapshot_id, at = entry.get("snapshot-id"), entry.get("timestamp-ms")
        if isinstance(snapshot_id, int) and isinstance(at, int) and at >= 0:
            logged[snapshot_id] = at
    known = [logged.get(s.snapshot_id) for s in line]
    first = next((at for at in known if at is not None), None)
    if first is None:
        return {}
    times: dict[int, int] = {}
    floor = first
    for snapshot, at in zip(line, known, strict=True):
        floor = min(max(floor, floor if at is None else at), now_ms)
        times[snapshot.snapshot_id] = floor
    return times

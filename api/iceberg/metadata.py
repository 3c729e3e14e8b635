"""A table's Iceberg metadata, projected from its descriptor; nothing of it is stored.

Field ids are the catalog's column ids (a STRUCT's, ARRAY's or MAP's nested fields have ids
of their own, served in Iceberg's nested types: ``types``), ``last-column-id`` the last id
the table gave out, schema ids its schema versions, the primary key the identifier fields,
snapshots its data commits (``snapshots``). Specs, sort orders, the engines' properties,
column docs and the format version are the table's Iceberg state (``TableDescriptor.iceberg``);
a table without one has one unpartitioned spec and one unsorted order, format version 2.
"""

from __future__ import annotations

import contextlib
import json

from api.iceberg.errors import bad_request
from api.iceberg.models import (
    IcebergSchema,
    PartitionSpec,
    SortOrder,
    StructField,
    TableMetadata,
)
from api.iceberg.properties import table_properties
from api.iceberg.snapshots import Snapshots
from api.iceberg.types import NoCounterpartError, iceberg_type
from catalog.data.iceberg_identity import table_uuid
from catalog.data.iceberg_schemas import served_schema_ids
from catalog.data.iceberg_table import ROW_LINEAGE_FORMAT, IcebergTableState
from catalog.data.warehouse import (
    data_folder,
    metadata_folder,
    on_s3,
    table_folder,
    warehouse_root,
)
from catalog.descriptors import ColumnDescriptor, TableDescriptor, TableVersion, ViewColumn
from schemasync.clock import physical_of


def location_uri(folder: str) -> str:
    """Return a folder as the location served: a ``file://`` URI, or the ``s3://`` one.

    Engines resolve a location by its scheme (Trino finds no file system for a bare path);
    the path is kept as it is (not percent-encoded), so it reads back by stripping the scheme
    (``manifests.stored_path``).
    """
    return folder if on_s3(folder) else f"file://{folder}"


def served_location(table: TableDescriptor, warehouse: str) -> str:
    """Return the location a table is served with.

    A location an engine asked for is answered as it asked (a path or a ``file:`` URI); the
    table's own warehouse folder as a ``file://`` URI (``location_uri``).
    """
    folder = data_folder(table, warehouse)
    if table.location is not None and folder != table_folder(warehouse_root(warehouse), table.id):
        return table.location
    return location_uri(folder)


def metadata_files_folder(table_id: int, warehouse: str) -> str:
    """Return the folder of a table's metadata files, as a ``file://`` URI."""
    return location_uri(metadata_folder(warehouse_root(warehouse), table_id))


def metadata_location(folder: str, catalog_version: int, data_seq: int = 0) -> str:
    """Return the metadata file of a table's state in ``folder`` (``metadata_files`` writes it).

    It names the catalog version that last changed the table and, once the table has data
    commits, the latest one's sequence number (``data_number``).
    """
    data = f"-data-{data_seq}" if data_seq else ""
    return f"{folder}/catalog-v{catalog_version}{data}.metadata.json"


def data_number(table: TableDescriptor, metadata: TableMetadata) -> int:
    """Return the number of the table's latest data commit, which its metadata file names.

    That is the table's last sequence number; for a table with snapshots on other branches
    (they take numbers too, in catalog versions of their own), the sequence number of main's
    current snapshot, which a branch's publication moves without a catalog version.
    """
    if table.iceberg is None or not table.iceberg.branch_snapshots:
        return metadata.last_sequence_number
    current = metadata.current_snapshot_id
    numbers = {s["snapshot-id"]: s["sequence-number"] for s in metadata.snapshots}
    return numbers.get(current, metadata.last_sequence_number) if current is not None else 0


def iceberg_field(column: ColumnDescriptor | ViewColumn, doc: str | None) -> StructField:
    """Return a table's or view's column as the Iceberg field of its id.

    A nested column's type is Iceberg's nested type object, its fields with their ids.

    Raises:
        NoCounterpartError: its type, or a nested field's, has no Iceberg counterpart; the
            message names the column (and the nested field's path).
    """
    try:
        served = iceberg_type(column)
    except NoCounterpartError as e:
        raise NoCounterpartError(f"column {column.name}: {e}") from e
    return StructField(
        id=column.id, name=column.name, required=not column.nullable, type=served, doc=doc
    )


def _schema(table: TableDescriptor, version: TableVersion, schema_id: int) -> IcebergSchema:
    """Return one schema version of ``table`` as the Iceberg schema of id ``schema_id``.

    Raises:
        NoCounterpartError: a column's type has no Iceberg counterpart; the message names
            the column and its type.
    """
    docs = table.iceberg or IcebergTableState()
    fields = [iceberg_field(c, docs.doc_of(c.id)) for c in version.columns]
    present = {c.id for c in version.columns}
    return IcebergSchema(
        schema_id=schema_id,
        identifier_field_ids=[i for i in table.primary_key if i in present],
        fields=fields,
    )


def _schemas(table: TableDescriptor, ids: dict[int, int]) -> list[IcebergSchema]:
    """Return every schema of ``table`` served (``served_schema_ids``), once, the current last.

    An older version with a column Iceberg cannot hold is left out; the current one must
    have a form.

    Raises:
        IcebergError: BadRequestException naming the table, the column and its type when
            a current column's type has no Iceberg counterpart.
    """
    current_id = ids[table.schema_version]
    older = []
    for version in table.versions[:-1]:
        schema_id = ids.get(version.version)
        if schema_id != version.version or schema_id == current_id:
            continue  # removed, or served under an earlier version's id
        with contextlib.suppress(NoCounterpartError):
            older.append(_schema(table, version, schema_id))
    try:
        current = _schema(table, table.versions[-1], current_id)
    except NoCounterpartError as e:
        raise bad_request(f"table {table.name} cannot be served as an Iceberg table: {e}") from e
    return [*older, current]


def _specs(state: IcebergTableState) -> list[PartitionSpec]:
    return [
        PartitionSpec(
            spec_id=s.spec_id,
            fields=[
                {
                    "source-id": f.source_id,
                    "field-id": f.field_id,
                    "name": f.name,
                    "transform": f.transform,
                }
                for f in s.fields
            ],
        )
        for s in state.specs
    ]


def _orders(state: IcebergTableState) -> list[SortOrder]:
    return [
        SortOrder(
            order_id=o.order_id,
            fields=[
                {
                    "source-id": f.source_id,
                    "transform": f.transform,
                    "direction": str(f.direction),
                    "null-order": str(f.null_order),
                }
                for f in o.fields
            ],
        )
        for o in state.sort_orders
    ]


def table_metadata(
    table: TableDescriptor,
    warehouse: str,
    activation_ts: int,
    snapshots: Snapshots | None = None,
) -> TableMetadata:
    """Return ``table``'s Iceberg metadata.

    Args:
        table: the table's descriptor.
        warehouse: the cluster's warehouse, for a table that records no location.
        activation_ts: the activation time of the catalog version read, used when the table
            carries no time of its own last change.
        snapshots: the table's data commits as snapshots (none when not given).

    Raises:
        IcebergError: BadRequestException when a current column has no Iceberg type.
    """
    changed = table.update_ts or activation_ts
    data = snapshots or Snapshots()
    state = table.iceberg or IcebergTableState()
    listed = {s["snapshot-id"] for s in data.snapshots}  # an expired one's statistics go too
    ids = served_schema_ids(table)
    served_snapshots = [
        {**s, "schema-id": ids.get(s["schema-id"], s["schema-id"])} for s in data.snapshots
    ]
    return TableMetadata(
        format_version=state.format_version,
        partition_specs=_specs(state),
        default_spec_id=state.default_spec_id,
        last_partition_id=state.last_partition_id,
        sort_orders=_orders(state),
        default_sort_order_id=state.default_sort_order_id,
        table_uuid=table_uuid(table.id, state.table_uuid),
        location=served_location(table, warehouse),
        last_sequence_number=data.last_sequence_number,
        last_updated_ms=max(physical_of(changed), data.last_commit_ms),
        last_column_id=table.next_column_id - 1,
        schemas=_schemas(table, ids),
        current_schema_id=ids[table.schema_version],
        properties=table_properties(table),
        snapshots=served_snapshots,
        snapshot_log=data.snapshot_log,
        refs=data.refs,
        current_snapshot_id=data.current_snapshot_id,
        statistics=[json.loads(d.document) for d in state.statistics if d.snapshot_id in listed],
        partition_statistics=[
            json.loads(d.document) for d in state.partition_statistics if d.snapshot_id in listed
        ],
        next_row_id=data.next_row_id if state.format_version >= ROW_LINEAGE_FORMAT else None,
    )

"""What the Iceberg routes read: the catalog, a table's metadata and its metadata file.

Reads answer from the node's latest catalog and the tables' data commits recorded (one
snapshot per data commit), or, under a pinned prefix, from the catalog and data commits as of
the pin (``pins``); a table's metadata file is written before it is answered.
"""

from __future__ import annotations

import asyncio

from fastapi import Request

from api.iceberg.metadata import (
    data_number,
    metadata_files_folder,
    metadata_location,
    served_location,
    table_metadata,
)
from api.iceberg.metadata_files import unwritable, write_table_metadata
from api.iceberg.models import TableMetadata
from api.iceberg.pins import pin_of
from api.iceberg.snapshots import ensure_manifests, snapshots_of
from api.server.execution import node_of
from catalog.catalog import Catalog
from catalog.data.files import DataCommit
from catalog.descriptors import TableDescriptor
from catalog.errors import CatalogError


def warehouse_of(request: Request) -> str:
    """Return the cluster's warehouse (where tables created without a location live)."""
    folder = node_of(request).settings.warehouse
    return folder if folder is not None else request.app.state.settings.default_warehouse


async def table_state(
    request: Request, cat: Catalog, table: TableDescriptor, *, refs_only: bool = False
) -> tuple[TableMetadata, list[DataCommit]]:
    """Return the table's metadata as of ``cat`` with the data commits recorded, and those.

    Under a pinned prefix (``pins``), the data commits are those up to the pin's moment.

    The manifests of the Spark source's commits are written first, where missing. A commit
    racing this read may be missing from it; a writer's requirements then fail at its
    commit, as Iceberg's optimistic commits expect.
    """
    node = node_of(request)
    pin = pin_of(request)
    if pin is None:
        commits = await node.data.recorded(table.id)
    else:  # a pinned read: the commits up to its moment, once none can still come
        commits = await node.data.commits_at(table.id, pin.read_ts, history=True)
    location = served_location(table, warehouse_of(request))
    if any(c.iceberg is None for c in commits):  # the Spark source's: manifests written here
        plain = table_metadata(table, warehouse_of(request), cat.activation_ts)
        await ensure_manifests(
            location, plain.schemas[-1], table.columns, commits, plain.partition_specs
        )
    snapshots = snapshots_of(
        location,
        commits,
        horizon_ts=horizon_of(request),
        state=table.iceberg,
        refs_only=refs_only,
    )
    return table_metadata(table, warehouse_of(request), cat.activation_ts, snapshots), commits


async def written_file(
    request: Request, table: TableDescriptor, metadata: TableMetadata
) -> tuple[str, TableMetadata]:
    """Return the metadata file of ``table``'s state and the metadata it holds, written first.

    The file is named by the catalog version that last changed the table (the earliest
    version the node keeps, when that one is compacted away) and its latest data commit.

    Raises:
        IcebergError: ServiceUnavailableException when the warehouse cannot be written.
    """
    version = file_version(request, table.update_ts)
    files = metadata_files_folder(table.id, warehouse_of(request))
    file = metadata_location(files, version, data_number(table, metadata))
    try:
        written = await asyncio.to_thread(write_table_metadata, files, file, metadata)
    except OSError as e:
        raise unwritable(f"the metadata file {file} of table {table.name}", e) from e
    return file, written


def file_version(request: Request, update_ts: int) -> int:
    """Return the catalog version a metadata file is named by: the one that made ``update_ts``.

    That is the version that last changed the table or view, or the earliest version the node
    keeps when that one is compacted away.
    """
    service = node_of(request).service
    try:
        return service.active_catalog_version(update_ts)
    except CatalogError:
        return service.earliest_version


def horizon_of(request: Request) -> int:
    """Return the earliest moment the node still reads (its earliest version's activation)."""
    service = node_of(request).service
    return service.catalog(service.earliest_version).activation_ts


def latest_of(request: Request) -> Catalog:
    """Return the node's latest catalog (what every change is made on)."""
    return node_of(request).service.latest_catalog()


def read_catalog(request: Request) -> Catalog:
    """Return the catalog a read answers from: its pinned prefix's (``pins``), else the latest."""
    pin = pin_of(request)
    return latest_of(request) if pin is None else pin.catalog

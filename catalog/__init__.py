"""The catalog domain, in rooms: the DDL core at the top, data, the node runtime, storage.

The DDL core (this folder): ``Catalog`` (one immutable version), ``descriptors``,
``commands`` (what users ask for), ``entries`` (the deltas the log stores), ``prepare``
(command batch → entries), events, the stored form (``wire``: values and descriptors;
``marshalling``: updates, entries, commands; ``snapshot_format`` and ``snapshots``: a whole
version as one value, and its digest), ``CatalogService`` (reads), ``CatalogManager``
(writes, through ``updatelog.optimistic``). The rooms: ``catalog.data`` (data commits, their
keys, expiry, the Iceberg table identity), ``catalog.runtime`` (``CatalogNode``, its
``NodeOptions``, the node registry, the blocking facade) and ``catalog.storage`` (the
``RelationStore`` of tables and indexes and the decoded-descriptor cache).

May import: updatelog, schemasync. Never imports api or spark.
"""

from typing import TYPE_CHECKING

from catalog import commands
from catalog.catalog import Catalog
from catalog.column_types import ColumnType
from catalog.descriptors import (
    Collation,
    ColumnDescriptor,
    IndexColumn,
    IndexDescriptor,
    IndexKind,
    IndexStatus,
    SchemaDescriptor,
    SystemViewDescriptor,
    SystemViewType,
    TableDescriptor,
    TableVersion,
    ZoneDescriptor,
)
from catalog.entries import UpdateEntry
from catalog.errors import (
    AlreadyExistsError,
    CatalogError,
    ConcurrentUpdateError,
    ErrorCode,
    NotFoundError,
    ValidationError,
    VersionCompactedError,
)
from catalog.events import CatalogEvent
from catalog.prepare import Prepared, apply_entries, prepare
from catalog.update import RequestOutcome, VersionedUpdate

if TYPE_CHECKING:
    from catalog.runtime.node import CatalogNode


def __getattr__(name: str) -> object:
    """Load ``CatalogNode`` on first use: what only reads descriptors never opens a node."""
    if name == "CatalogNode":
        from catalog.runtime.node import CatalogNode

        return CatalogNode
    raise AttributeError(f"module 'catalog' has no attribute {name!r}")


__all__ = [
    "AlreadyExistsError",
    "Catalog",
    "CatalogError",
    "CatalogEvent",
    "CatalogNode",
    "Collation",
    "ColumnDescriptor",
    "ColumnType",
    "ConcurrentUpdateError",
    "ErrorCode",
    "IndexColumn",
    "IndexDescriptor",
    "IndexKind",
    "IndexStatus",
    "NotFoundError",
    "Prepared",
    "RequestOutcome",
    "SchemaDescriptor",
    "SystemViewDescriptor",
    "SystemViewType",
    "TableDescriptor",
    "TableVersion",
    "UpdateEntry",
    "ValidationError",
    "VersionCompactedError",
    "VersionedUpdate",
    "ZoneDescriptor",
    "apply_entries",
    "commands",
    "prepare",
]

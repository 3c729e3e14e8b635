"""The catalog domain: descriptors, commands, update entries and the versioned ``Catalog``.

Owns: ``Catalog`` (one immutable version), descriptors, ``commands`` (what users ask for),
``entries`` (the deltas the log stores), ``prepare`` (command batch → entries), events, the
stored form (``wire``: values and descriptors; ``marshalling``: updates, entries, commands;
``snapshot_format`` and ``snapshots``: a whole version as one value, and its digest),
``store`` (tables and indexes as bytes shared by every version, with the decoded-descriptor
cache), ``CatalogService`` (reads), ``CatalogManager`` (writes), ``CatalogNode`` with its
``NodeOptions``, data commits and the node registry.

May import: updatelog, schemasync. Never imports api or spark.
"""

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

__all__ = [
    "AlreadyExistsError",
    "Catalog",
    "CatalogError",
    "CatalogEvent",
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

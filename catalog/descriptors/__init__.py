"""Descriptors: the frozen pydantic models a catalog version is made of."""

from catalog.descriptors.indexes import (
    Collation,
    IndexColumn,
    IndexDescriptor,
    IndexKind,
    IndexStatus,
)
from catalog.descriptors.principals import PrincipalDescriptor, PrincipalRole
from catalog.descriptors.schemas import SchemaDescriptor
from catalog.descriptors.system_views import SystemViewDescriptor, SystemViewType
from catalog.descriptors.tables import ColumnDescriptor, TableDescriptor, TableVersion
from catalog.descriptors.views import (
    ViewColumn,
    ViewDescriptor,
    ViewLogEntry,
    ViewRepresentation,
    ViewSchema,
    ViewVersion,
)
from catalog.descriptors.zones import ZoneDescriptor

Descriptor = (
    SchemaDescriptor
    | TableDescriptor
    | IndexDescriptor
    | ZoneDescriptor
    | SystemViewDescriptor
    | ViewDescriptor
    | PrincipalDescriptor
)

__all__ = [
    "Collation",
    "ColumnDescriptor",
    "Descriptor",
    "IndexColumn",
    "IndexDescriptor",
    "IndexKind",
    "IndexStatus",
    "PrincipalDescriptor",
    "PrincipalRole",
    "SchemaDescriptor",
    "SystemViewDescriptor",
    "SystemViewType",
    "TableDescriptor",
    "TableVersion",
    "ViewColumn",
    "ViewDescriptor",
    "ViewLogEntry",
    "ViewRepresentation",
    "ViewSchema",
    "ViewVersion",
    "ZoneDescriptor",
]

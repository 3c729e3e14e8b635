"""Descriptors: the frozen pydantic models a catalog version is made of."""

from catalog.descriptors.grants import (
    CATALOG_ID,
    GrantDescriptor,
    GranteeKind,
    Privilege,
    SecurableKind,
)
from catalog.descriptors.indexes import (
    Collation,
    IndexColumn,
    IndexDescriptor,
    IndexKind,
    IndexStatus,
)
from catalog.descriptors.principals import PrincipalDescriptor, PrincipalRole
from catalog.descriptors.roles import RoleDescriptor
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
    | RoleDescriptor
    | GrantDescriptor
)

__all__ = [
    "CATALOG_ID",
    "Collation",
    "ColumnDescriptor",
    "Descriptor",
    "GrantDescriptor",
    "GranteeKind",
    "IndexColumn",
    "IndexDescriptor",
    "IndexKind",
    "IndexStatus",
    "PrincipalDescriptor",
    "PrincipalRole",
    "Privilege",
    "RoleDescriptor",
    "SchemaDescriptor",
    "SecurableKind",
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

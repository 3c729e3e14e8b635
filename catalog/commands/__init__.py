"""Commands: what users ask for. The JSON shape is the public contract; ``op`` is the tag.

Build them in Python (``CreateTable(...)`` is ``CreateTableCommand(...)``) or from JSON-like
dicts with ``parse``. A command's ``entries(ctx)`` validates it against a catalog and returns
the update entries it turns into.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import pydantic
from pydantic import Field, TypeAdapter

from catalog.commands.base import CommandBase, UpdateContext, check_name
from catalog.commands.column_definitions import Column
from catalog.commands.columns import (
    AddColumnsCommand,
    AlterColumnCommand,
    DropColumnsCommand,
    RenameColumnCommand,
)
from catalog.commands.grants import GrantCommand, RevokeCommand
from catalog.commands.iceberg_tables import (
    AlterTableIcebergCommand,
    IcebergTableSpec,
    NewPartitionSpec,
    NewSortOrder,
    PartitionFieldSpec,
    SortFieldSpec,
)
from catalog.commands.indexes import (
    CreateIndexCommand,
    DropIndexCommand,
    IndexColumnSpec,
    MakeIndexAvailableCommand,
    RemoveIndexCommand,
    RenameIndexCommand,
    StartBuildingIndexCommand,
)
from catalog.commands.roles import CreateRoleCommand, DropRoleCommand
from catalog.commands.schemas import (
    AlterSchemaPropertiesCommand,
    CreateSchemaCommand,
    DropSchemaCommand,
)
from catalog.commands.system_views import CreateSystemViewCommand
from catalog.commands.tables import (
    AlterTablePropertiesCommand,
    CreateTableCommand,
    DropTableCommand,
    RenameTableCommand,
)
from catalog.commands.views import (
    AlterViewCommand,
    CreateViewCommand,
    DropViewCommand,
    NewViewSchema,
    RenameViewCommand,
    ViewColumnSpec,
    ViewQuery,
    ViewVersionSpec,
)
from catalog.commands.zones import (
    AlterZoneCommand,
    CreateZoneCommand,
    DropZoneCommand,
    RenameZoneCommand,
    SetDefaultZoneCommand,
)
from catalog.errors import ValidationError
from catalog.model import validation_error_from

CatalogCommand = Annotated[
    CreateSchemaCommand
    | DropSchemaCommand
    | CreateTableCommand
    | DropTableCommand
    | RenameTableCommand
    | AddColumnsCommand
    | DropColumnsCommand
    | AlterColumnCommand
    | RenameColumnCommand
    | CreateIndexCommand
    | DropIndexCommand
    | RenameIndexCommand
    | StartBuildingIndexCommand
    | MakeIndexAvailableCommand
    | RemoveIndexCommand
    | CreateZoneCommand
    | AlterZoneCommand
    | RenameZoneCommand
    | DropZoneCommand
    | SetDefaultZoneCommand
    | CreateSystemViewCommand
    | AlterTablePropertiesCommand
    | AlterTableIcebergCommand
    | AlterSchemaPropertiesCommand
    | CreateViewCommand
    | AlterViewCommand
    | DropViewCommand
    | RenameViewCommand
    | CreateRoleCommand
    | DropRoleCommand
    | GrantCommand
    | RevokeCommand,
    Field(discriminator="op"),
]

_ONE: TypeAdapter[CatalogCommand] = TypeAdapter(CatalogCommand)
_MANY: TypeAdapter[list[CatalogCommand]] = TypeAdapter(list[CatalogCommand])

# Short names, as written in the design's examples: ``c.CreateTable(...)``.
CreateSchema = CreateSchemaCommand
DropSchema = DropSchemaCommand
CreateTable = CreateTableCommand
DropTable = DropTableCommand
RenameTable = RenameTableCommand
AlterTableProperties = AlterTablePropertiesCommand
AddColumns = AddColumnsCommand
DropColumns = DropColumnsCommand
AlterColumn = AlterColumnCommand
RenameColumn = RenameColumnCommand
CreateIndex = CreateIndexCommand
DropIndex = DropIndexCommand
RenameIndex = RenameIndexCommand
StartBuildingIndex = StartBuildingIndexCommand
MakeIndexAvailable = MakeIndexAvailableCommand
RemoveIndex = RemoveIndexCommand
CreateZone = CreateZoneCommand
AlterZone = AlterZoneCommand
RenameZone = RenameZoneCommand
DropZone = DropZoneCommand
SetDefaultZone = SetDefaultZoneCommand
CreateSystemView = CreateSystemViewCommand
AlterTableIceberg = AlterTableIcebergCommand
AlterSchemaProperties = AlterSchemaPropertiesCommand
CreateView = CreateViewCommand
AlterView = AlterViewCommand
DropView = DropViewCommand
RenameView = RenameViewCommand
CreateRole = CreateRoleCommand
DropRole = DropRoleCommand
Grant = GrantCommand
Revoke = RevokeCommand


def parse(obj: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[CommandBase]:
    """Turn a command dict, or a list of them, into commands.

    Raises:
        ValidationError: an unknown ``op``, an unknown or missing field, a wrong type, or a
            command whose shape is invalid (bad name, duplicate columns, ...).
    """
    # Callers hand us decoded JSON, so check the outer shape at run time despite the hints.
    raw: object = obj
    try:
        if isinstance(raw, Mapping):
            return [_ONE.validate_python(raw)]
        if isinstance(raw, list | tuple):
            return list(_MANY.validate_python(list(raw)))
    except pydantic.ValidationError as e:
        raise validation_error_from(e, "command") from e
    raise ValidationError(f"expected a command object or a list of them, got {type(raw).__name__}")


def dump(commands: Sequence[CommandBase]) -> list[dict[str, Any]]:
    """Return the JSON-ready dicts of ``commands`` (what ``parse`` reads back)."""
    return [c.model_dump(mode="json", exclude_unset=False) for c in commands]


__all__ = [
    "AddColumns",
    "AddColumnsCommand",
    "AlterColumn",
    "AlterColumnCommand",
    "AlterSchemaProperties",
    "AlterSchemaPropertiesCommand",
    "AlterTableIceberg",
    "AlterTableIcebergCommand",
    "AlterTableProperties",
    "AlterTablePropertiesCommand",
    "AlterView",
    "AlterViewCommand",
    "AlterZone",
    "AlterZoneCommand",
    "CatalogCommand",
    "Column",
    "CommandBase",
    "CreateIndex",
    "CreateIndexCommand",
    "CreateRole",
    "CreateRoleCommand",
    "CreateSchema",
    "CreateSchemaCommand",
    "CreateSystemView",
    "CreateSystemViewCommand",
    "CreateTable",
    "CreateTableCommand",
    "CreateView",
    "CreateViewCommand",
    "CreateZone",
    "CreateZoneCommand",
    "DropColumns",
    "DropColumnsCommand",
    "DropIndex",
    "DropIndexCommand",
    "DropRole",
    "DropRoleCommand",
    "DropSchema",
    "DropSchemaCommand",
    "DropTable",
    "DropTableCommand",
    "DropView",
    "DropViewCommand",
    "DropZone",
    "DropZoneCommand",
    "Grant",
    "GrantCommand",
    "IcebergTableSpec",
    "IndexColumnSpec",
    "MakeIndexAvailable",
    "MakeIndexAvailableCommand",
    "NewPartitionSpec",
    "NewSortOrder",
    "NewViewSchema",
    "PartitionFieldSpec",
    "RemoveIndex",
    "RemoveIndexCommand",
    "RenameColumn",
    "RenameColumnCommand",
    "RenameIndex",
    "RenameIndexCommand",
    "RenameTable",
    "RenameTableCommand",
    "RenameView",
    "RenameViewCommand",
    "RenameZone",
    "RenameZoneCommand",
    "Revoke",
    "RevokeCommand",
    "SetDefaultZone",
    "SetDefaultZoneCommand",
    "SortFieldSpec",
    "StartBuildingIndex",
    "StartBuildingIndexCommand",
    "UpdateContext",
    "ViewColumnSpec",
    "ViewQuery",
    "ViewVersionSpec",
    "check_name",
    "dump",
    "parse",
]

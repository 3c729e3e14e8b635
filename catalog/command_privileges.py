"""``needs``: the privileges a command takes, on which objects of the catalog it runs on.

Creating takes ``CREATE`` on what will hold the new object (the catalog for a schema, a schema
for a table or view); changing a table, its columns, indexes and properties takes ``ALTER``
on it (an Iceberg engine's refs, snapshot expiry and statistics, which writing data moves,
take ``MODIFY``); dropping takes ``DROP``. Zones and system views are the cluster's own: they take
``ALTER`` on the catalog. Roles, grants and revokes take ``MANAGE_GRANTS`` on the object
granted on (a role's, on the catalog); handing on ``OWNERSHIP`` or ``MANAGE_GRANTS`` itself
takes ``OWNERSHIP``, so the power to grant cannot make itself owner.

An object the command names that is missing needs nothing here: the command itself refuses
it, with the error its callers expect.
"""

from __future__ import annotations

from catalog.catalog import Catalog
from catalog.commands import (
    CreateRoleCommand,
    CreateSchemaCommand,
    CreateSystemViewCommand,
    CreateTableCommand,
    CreateViewCommand,
    DropIndexCommand,
    DropRoleCommand,
    DropSchemaCommand,
    DropTableCommand,
    DropViewCommand,
    MakeIndexAvailableCommand,
    RemoveIndexCommand,
    RenameIndexCommand,
    RenameViewCommand,
    StartBuildingIndexCommand,
)
from catalog.commands.base import CommandBase
from catalog.commands.grants import GrantCommand, RevokeCommand
from catalog.commands.iceberg_tables import AlterTableIcebergCommand
from catalog.commands.schemas import AlterSchemaPropertiesCommand
from catalog.commands.views import AlterViewCommand
from catalog.commands.zones import (
    AlterZoneCommand,
    CreateZoneCommand,
    DropZoneCommand,
    RenameZoneCommand,
    SetDefaultZoneCommand,
)
from catalog.descriptors import CATALOG_ID, Privilege, SecurableKind
from catalog.errors import CatalogError

Need = tuple[Privilege, SecurableKind, int]
"""A privilege on an object, by its kind and id."""

_ON_CATALOG = (
    CreateZoneCommand,
    AlterZoneCommand,
    RenameZoneCommand,
    DropZoneCommand,
    SetDefaultZoneCommand,
    CreateSystemViewCommand,
)
_ON_INDEX = (
    DropIndexCommand,
    RenameIndexCommand,
    StartBuildingIndexCommand,
    MakeIndexAvailableCommand,
    RemoveIndexCommand,
)


def needs(command: CommandBase, catalog: Catalog) -> list[Need]:
    """Return the privileges ``command`` takes on ``catalog``'s objects (module doc)."""
    catalog_need = [(Privilege.ALTER, SecurableKind.CATALOG, CATALOG_ID)]
    if isinstance(command, _ON_CATALOG):
        return catalog_need
    if isinstance(command, CreateSchemaCommand):
        return [(Privilege.CREATE, SecurableKind.CATALOG, CATALOG_ID)]
    if isinstance(command, CreateRoleCommand | DropRoleCommand):
        return [(Privilege.MANAGE_GRANTS, SecurableKind.CATALOG, CATALOG_ID)]
    if isinstance(command, GrantCommand | RevokeCommand):
        try:
            on_id = command.securable_id(catalog)
        except CatalogError:
            return []
        # Handing on the power to grant (or all of it) takes owning the object.
        privilege = (
            Privilege.OWNERSHIP
            if {Privilege.OWNERSHIP, Privilege.MANAGE_GRANTS} & set(command.privileges)
            else Privilege.MANAGE_GRANTS
        )
        if command.on is SecurableKind.ROLE:  # roles are the catalog's
            return [(privilege, SecurableKind.CATALOG, CATALOG_ID)]
        return [(privilege, command.on, on_id)]
    return _schema_needs(command, catalog)


def _schema_needs(command: CommandBase, catalog: Catalog) -> list[Need]:
    """The needs of commands about a schema or an object in one."""
    if isinstance(command, DropSchemaCommand | AlterSchemaPropertiesCommand):
        schema = catalog.find_schema(command.name)
        privilege = Privilege.DROP if isinstance(command, DropSchemaCommand) else Privilege.ALTER
        return [] if schema is None else [(privilege, SecurableKind.SCHEMA, schema.id)]
    if isinstance(command, CreateViewCommand) and command.or_replace:
        replaced = catalog.find_view(command.schema_, command.name)
        if replaced is not None:  # a new version of a view that is there: ALTER on it
            return [(Privilege.ALTER, SecurableKind.VIEW, replaced.id)]
    if isinstance(command, CreateTableCommand | CreateViewCommand):
        schema = catalog.find_schema(command.schema_)
        return [] if schema is None else [(Privilege.CREATE, SecurableKind.SCHEMA, schema.id)]
    if isinstance(command, DropViewCommand | AlterViewCommand | RenameViewCommand):
        view = catalog.find_view(command.schema_, command.name)
        if view is None:
            return []
        privilege = Privilege.DROP if isinstance(command, DropViewCommand) else Privilege.ALTER
        found: list[Need] = [(privilege, SecurableKind.VIEW, view.id)]
        if isinstance(command, RenameViewCommand) and command.new_schema is not None:
            target = catalog.find_schema(command.new_schema)
            if target is not None and target.id != view.schema_id:
                found.append((Privilege.CREATE, SecurableKind.SCHEMA, target.id))
        return found
    if isinstance(command, _ON_INDEX):
        index_id: int | None = getattr(command, "index_id", None)
        index = (
            catalog.find_index_by_id(index_id)
            if index_id is not None
            else catalog.find_index(command.schema_, command.name or "")
        )
        return [] if index is None else [(Privilege.ALTER, SecurableKind.TABLE, index.table_id)]
    schema_name: str | None = getattr(command, "schema_", None)
    table_name = getattr(command, "table", None) or getattr(command, "name", None)
    if schema_name is None or table_name is None:
        return [(Privilege.OWNERSHIP, SecurableKind.CATALOG, CATALOG_ID)]
    table = catalog.find_table(schema_name, table_name)
    if table is None:
        return []
    privilege = Privilege.DROP if isinstance(command, DropTableCommand) else Privilege.ALTER
    if isinstance(command, AlterTableIcebergCommand) and _data_only(command):
        privilege = Privilege.MODIFY
    return [(privilege, SecurableKind.TABLE, table.id)]


_DATA_FIELDS = frozenset(
    {
        "set_refs",
        "remove_refs",
        "add_branch_snapshots",
        "remove_branch_snapshots",
        "expire_below",
        "set_statistics",
        "remove_statistics",
        "set_partition_statistics",
        "remove_partition_statistics",
    }
)
"""What an Iceberg engine changes of a table when it writes data: refs, expiry, statistics."""
_NAMING = frozenset({"op", "schema_", "table", "if_table_exists"})


def _data_only(command: AlterTableIcebergCommand) -> bool:
    """Return whether ``command`` changes only what writing data changes (``MODIFY``)."""
    changed = {
        name
        for name, info in type(command).model_fields.items()
        if getattr(command, name) != info.get_default(call_default_factory=True)
    }
    return changed - _NAMING <= _DATA_FIELDS

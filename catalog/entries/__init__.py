"""Update entries: the small deltas a command turns into, and that the log stores.

``UpdateEntry`` is a discriminated union on the stable ``type`` tag.
"""

from typing import Annotated

from pydantic import Field

from catalog.entries.base import EntryBase
from catalog.entries.grants import DropGrantEntry, NewGrantEntry
from catalog.entries.ids import ObjectIdGenUpdateEntry
from catalog.entries.indexes import (
    DropIndexEntry,
    MakeIndexAvailableEntry,
    NewIndexEntry,
    RemoveIndexEntry,
    RenameIndexEntry,
    StartBuildingIndexEntry,
)
from catalog.entries.principals import (
    AlterPrincipalEntry,
    DropPrincipalEntry,
    NewPrincipalEntry,
)
from catalog.entries.roles import DropRoleEntry, NewRoleEntry
from catalog.entries.schemas import DropSchemaEntry, NewSchemaEntry, SetSchemaPropertiesEntry
from catalog.entries.system_views import NewSystemViewEntry
from catalog.entries.tables import (
    AlterColumnEntry,
    AlterNestedFieldEntry,
    AlterTablePropertiesEntry,
    DropColumnsEntry,
    DropTableEntry,
    NewColumnsEntry,
    NewNestedFieldsEntry,
    NewTableEntry,
    RenameTableEntry,
    SetTableIcebergEntry,
    SetTableLocationEntry,
)
from catalog.entries.views import DropViewEntry, NewViewEntry, RenameViewEntry, ReplaceViewEntry
from catalog.entries.zones import AlterZoneEntry, DropZoneEntry, NewZoneEntry, SetDefaultZoneEntry

UpdateEntry = Annotated[
    NewSchemaEntry
    | DropSchemaEntry
    | NewTableEntry
    | DropTableEntry
    | NewColumnsEntry
    | AlterColumnEntry
    | DropColumnsEntry
    | RenameTableEntry
    | NewIndexEntry
    | StartBuildingIndexEntry
    | MakeIndexAvailableEntry
    | DropIndexEntry
    | RemoveIndexEntry
    | RenameIndexEntry
    | NewZoneEntry
    | AlterZoneEntry
    | DropZoneEntry
    | SetDefaultZoneEntry
    | ObjectIdGenUpdateEntry
    | AlterTablePropertiesEntry
    | NewSystemViewEntry
    | SetTableIcebergEntry
    | SetSchemaPropertiesEntry
    | SetTableLocationEntry
    | NewViewEntry
    | DropViewEntry
    | ReplaceViewEntry
    | RenameViewEntry
    | NewPrincipalEntry
    | AlterPrincipalEntry
    | DropPrincipalEntry
    | NewRoleEntry
    | DropRoleEntry
    | NewGrantEntry
    | DropGrantEntry
    | NewNestedFieldsEntry
    | AlterNestedFieldEntry,
    Field(discriminator="type"),
]

__all__ = [
    "AlterColumnEntry",
    "AlterNestedFieldEntry",
    "AlterPrincipalEntry",
    "AlterTablePropertiesEntry",
    "AlterZoneEntry",
    "DropColumnsEntry",
    "DropGrantEntry",
    "DropIndexEntry",
    "DropPrincipalEntry",
    "DropRoleEntry",
    "DropSchemaEntry",
    "DropTableEntry",
    "DropViewEntry",
    "DropZoneEntry",
    "EntryBase",
    "MakeIndexAvailableEntry",
    "NewColumnsEntry",
    "NewGrantEntry",
    "NewIndexEntry",
    "NewNestedFieldsEntry",
    "NewPrincipalEntry",
    "NewRoleEntry",
    "NewSchemaEntry",
    "NewSystemViewEntry",
    "NewTableEntry",
    "NewViewEntry",
    "NewZoneEntry",
    "ObjectIdGenUpdateEntry",
    "RemoveIndexEntry",
    "RenameIndexEntry",
    "RenameTableEntry",
    "RenameViewEntry",
    "ReplaceViewEntry",
    "SetDefaultZoneEntry",
    "SetSchemaPropertiesEntry",
    "SetTableIcebergEntry",
    "SetTableLocationEntry",
    "StartBuildingIndexEntry",
    "UpdateEntry",
]

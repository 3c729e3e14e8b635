"""A version's changes in words: "created table SALES.ORDERS, 3 columns", not entry kinds.

``describe`` reads a version's entries with the catalogs before and after it (names of objects
a change dropped are the ones they had before), one phrase per object changed, in the order
of the entries: several entries about one table's columns become one phrase ("added columns
NOTE, SHIPPED to SALES.ORDERS"), and a version that changed several tables says so first ("2
tables in one transaction"). Bookkeeping entries (the object id counter) say nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog.catalog import Catalog
from catalog.descriptors import GrantDescriptor, GranteeKind
from catalog.descriptors.nested import path_words, walk
from catalog.entries import (
    AlterColumnEntry,
    AlterNestedFieldEntry,
    AlterPrincipalEntry,
    AlterTablePropertiesEntry,
    AlterZoneEntry,
    DropColumnsEntry,
    DropGrantEntry,
    DropIndexEntry,
    DropPrincipalEntry,
    DropRoleEntry,
    DropSchemaEntry,
    DropTableEntry,
    DropViewEntry,
    DropZoneEntry,
    EntryBase,
    MakeIndexAvailableEntry,
    NewColumnsEntry,
    NewGrantEntry,
    NewIndexEntry,
    NewNestedFieldsEntry,
    NewPrincipalEntry,
    NewRoleEntry,
    NewSchemaEntry,
    NewSystemViewEntry,
    NewTableEntry,
    NewViewEntry,
    NewZoneEntry,
    RemoveIndexEntry,
    RenameIndexEntry,
    RenameTableEntry,
    RenameViewEntry,
    ReplaceViewEntry,
    SetDefaultZoneEntry,
    SetSchemaPropertiesEntry,
    SetTableIcebergEntry,
    SetTableLocationEntry,
    StartBuildingIndexEntry,
)
from catalog.grant_names import grant_words, grantee_name

_COLUMN_VERBS: dict[type[EntryBase], str] = {
    NewColumnsEntry: "added",
    DropColumnsEntry: "dropped",
    AlterColumnEntry: "altered",
    NewNestedFieldsEntry: "added",
    AlterNestedFieldEntry: "altered",
}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


class _Names:
    """Qualified names of objects as of the catalogs before and after a version."""

    def __init__(self, before: Catalog, after: Catalog) -> None:
        self.before, self.after = before, after
        self.made_grants: dict[int, GrantDescriptor] = {}
        """Grants the version made (one it also takes back is in neither catalog)."""
        self.made_roles: dict[int, str] = {}
        self._paths: dict[tuple[int, int], dict[int, str]] = {}
        """Each table's columns and nested fields by id, as paths, per catalog."""

    def table(self, table_id: int, *, before_first: bool = False) -> str:
        order = (self.before, self.after) if before_first else (self.after, self.before)
        for cat in order:
            if cat.has_table(table_id):
                table = cat.table_by_id(table_id)
                return f"{cat.schema_by_id(table.schema_id).name}.{table.name}"
        return f"table {table_id}"

    def column(self, table_id: int, column_id: int, *, after_first: bool = False) -> str:
        """Return a column's name, or a nested field's path."""
        order = (self.after, self.before) if after_first else (self.before, self.after)
        for cat in order:
            if cat.has_table(table_id):
                key = (id(cat), table_id)
                paths = self._paths.get(key)
                if paths is None:
                    columns = cat.table_by_id(table_id).columns
                    paths = self._paths[key] = {f.id: path_words(p) for p, f in walk(columns)}
                if column_id in paths:
                    return paths[column_id]
        return f"#{column_id}"

    def index(self, index_id: int) -> str:
        for cat in (self.after, self.before):
            found = cat.find_index_by_id(index_id)
            if found is not None:
                return f"{cat.schema_by_id(found.schema_id).name}.{found.name}"
        return f"index {index_id}"

    def index_table(self, entry: EntryBase) -> int | None:
        """Return the table of the index an index entry is about (None: not an index's)."""
        if isinstance(entry, NewIndexEntry):
            return entry.index.table_id
        index_id = getattr(entry, "index_id", None)
        if not isinstance(index_id, int):
            return None
        for cat in (self.after, self.before):
            found = cat.find_index_by_id(index_id)
            if found is not None:
                return found.table_id
        return None

    def schema(self, schema_id: int) -> str:
        for cat in (self.after, self.before):
            found = cat.find_schema_by_id(schema_id)
            if found is not None:
                return found.name
        return f"schema {schema_id}"

    def view(self, view_id: int, *, before_first: bool = False) -> str:
        order = (self.before, self.after) if before_first else (self.after, self.before)
        for cat in order:
            found = cat.find_view_by_id(view_id)
            if found is not None:
                return f"{cat.schema_by_id(found.schema_id).name}.{found.name}"
        return f"view {view_id}"

    def principal(self, principal_id: int) -> str:
        for cat in (self.before, self.after):
            found = cat.find_principal_by_id(principal_id)
            if found is not None:
                return found.name
        return f"principal {principal_id}"

    def zone(self, zone_id: int) -> str:
        for cat in (self.after, self.before):
            for zone in cat.zones():
                if zone.id == zone_id:
                    return zone.name
        return f"zone {zone_id}"


def _phrase(entry: EntryBase, names: _Names) -> str | None:
    """Return what one entry did in words (None: bookkeeping, or said with others)."""
    if isinstance(entry, NewSchemaEntry):
        return f"created schema {entry.schema_.name}"
    if isinstance(entry, DropSchemaEntry):
        return f"dropped schema {names.schema(entry.schema_id)}"
    if isinstance(entry, SetSchemaPropertiesEntry):
        return f"changed the properties of schema {names.schema(entry.schema_id)}"
    if isinstance(entry, NewTableEntry):
        table = entry.table
        name = f"{names.schema(table.schema_id)}.{table.name}"
        verb = "replaced" if names.before.has_table(table.id) else "created"
        return f"{verb} table {name}, {_plural(len(table.columns), 'column')}"
    if isinstance(entry, DropTableEntry):
        return f"dropped table {names.table(entry.table_id)}"
    if isinstance(entry, RenameTableEntry):
        was = names.table(entry.table_id, before_first=True)
        return f"renamed table {was} to {entry.new_name}"
    if isinstance(entry, AlterTablePropertiesEntry):
        return f"changed the properties of table {names.table(entry.table_id)}"
    if isinstance(entry, SetTableIcebergEntry):
        return f"changed the Iceberg metadata of table {names.table(entry.table_id)}"
    if isinstance(entry, SetTableLocationEntry):
        return f"moved table {names.table(entry.table_id)} to {entry.location}"
    if isinstance(entry, NewIndexEntry):
        owner = names.table(entry.index.table_id)
        return f"created index {entry.index.name} on {owner}"
    if isinstance(entry, RenameIndexEntry):
        return f"renamed index {names.index(entry.index_id)} to {entry.new_name}"
    if isinstance(entry, StartBuildingIndexEntry):
        return f"started building index {names.index(entry.index_id)}"
    if isinstance(entry, MakeIndexAvailableEntry):
        return f"made index {names.index(entry.index_id)} available"
    if isinstance(entry, DropIndexEntry):
        return f"dropped index {names.index(entry.index_id)}"
    if isinstance(entry, RemoveIndexEntry):
        return f"removed index {names.index(entry.index_id)}"
    if isinstance(entry, NewZoneEntry):
        return f"created zone {entry.zone.name}"
    if isinstance(entry, AlterZoneEntry):
        return f"altered zone {entry.zone.name}"
    if isinstance(entry, DropZoneEntry):
        return f"dropped zone {names.zone(entry.zone_id)}"
    if isinstance(entry, SetDefaultZoneEntry):
        return f"made {names.zone(entry.zone_id)} the default zone"
    if isinstance(entry, NewSystemViewEntry):
        return f"registered system view SYSTEM.{entry.system_view.name}"
    return _view_phrase(entry, names)


def _view_phrase(entry: EntryBase, names: _Names) -> str | None:
    if isinstance(entry, NewViewEntry):
        view = entry.view
        columns = _plural(len(view.columns), "column")
        return f"created view {names.schema(view.schema_id)}.{view.name}, {columns}"
    if isinstance(entry, DropViewEntry):
        return f"dropped view {names.view(entry.view_id, before_first=True)}"
    if isinstance(entry, RenameViewEntry):
        was = names.view(entry.view_id, before_first=True)
        return f"renamed view {was} to {names.schema(entry.schema_id)}.{entry.new_name}"
    if isinstance(entry, ReplaceViewEntry):
        what = "replaced" if entry.added_versions else "changed"
        return f"{what} view {names.view(entry.view_id)}"
    return _principal_phrase(entry, names)


def _principal_phrase(entry: EntryBase, names: _Names) -> str | None:
    if isinstance(entry, NewPrincipalEntry):
        return f"created principal {entry.principal.name} ({entry.principal.role})"
    if isinstance(entry, AlterPrincipalEntry):
        found = entry.principal
        return f"altered principal {found.name}: {found.role}, secret {found.credential_version}"
    if isinstance(entry, DropPrincipalEntry):
        return f"dropped principal {names.principal(entry.principal_id)}"
    return _grant_phrase(entry, names)


def _grant_phrase(entry: EntryBase, names: _Names) -> str | None:
    if isinstance(entry, NewRoleEntry):
        return f"created role {entry.role.name}"
    if isinstance(entry, DropRoleEntry):
        made = names.made_roles.get(entry.role_id)
        dropped = made or grantee_name(GranteeKind.ROLE, entry.role_id, names.before)
        return f"dropped role {dropped}"
    if isinstance(entry, NewGrantEntry):
        return f"granted {grant_words(entry.grant, names.after, names.before)}"
    if isinstance(entry, DropGrantEntry):
        grant = names.made_grants.get(entry.grant_id) or names.before.grant_by_id(entry.grant_id)
        return f"revoked {grant_words(grant, names.before, names.after)}"
    return None


def _column_names(entry: EntryBase, names: _Names, table_id: int) -> list[str]:
    if isinstance(entry, NewColumnsEntry):
        return [c.name for c in entry.columns]
    if isinstance(entry, DropColumnsEntry):
        return [names.column(table_id, c) for c in entry.column_ids]
    if isinstance(entry, AlterColumnEntry):
        return [entry.column.name]
    if isinstance(entry, NewNestedFieldsEntry):
        parent = names.column(table_id, entry.parent_id, after_first=True)
        return [f"{parent}.{f.name}" for f in entry.fields]
    if isinstance(entry, AlterNestedFieldEntry):
        return [names.column(table_id, entry.field_id, after_first=True)]
    return []


def _table_of(entry: EntryBase) -> int | None:
    if isinstance(entry, NewTableEntry):
        return entry.table.id
    table_id = getattr(entry, "table_id", None)
    return table_id if isinstance(table_id, int) else None


def describe(entries: Sequence[EntryBase], before: Catalog, after: Catalog) -> list[str]:
    """Return what a version's ``entries`` did, in words, one phrase per change.

    Args:
        entries: the version's entries, in order.
        before: the catalog at the version before.
        after: the catalog at the version.
    """
    names = _Names(before, after)
    names.made_grants = {e.grant.id: e.grant for e in entries if isinstance(e, NewGrantEntry)}
    names.made_roles = {e.role.id: e.role.name for e in entries if isinstance(e, NewRoleEntry)}
    implied = {  # a table created, dropped or renamed takes its indexes with it: unsaid
        e.table.id if isinstance(e, NewTableEntry) else getattr(e, "table_id")  # noqa: B009
        for e in entries
        if isinstance(e, NewTableEntry | DropTableEntry | RenameTableEntry)
    }
    # One slot per phrase, in the order of the entries: a column change's slot gathers the
    # names of every column its kind of change touches in that table.
    slots: dict[str | tuple[str, int], list[str]] = {}
    for entry in entries:
        verb = next((v for t, v in _COLUMN_VERBS.items() if isinstance(entry, t)), None)
        if verb is not None:
            table_id = getattr(entry, "table_id")  # noqa: B009 - every column entry has one
            slots.setdefault((verb, table_id), []).extend(_column_names(entry, names, table_id))
        elif names.index_table(entry) not in implied:
            phrase = _phrase(entry, names)
            if phrase is not None:
                slots.setdefault(phrase, [])
    said = [
        slot if isinstance(slot, str) else _columns_phrase(slot[0], listed, names.table(slot[1]))
        for slot, listed in slots.items()
    ]
    tables = {t for t in map(_table_of, entries) if t is not None}
    if len(tables) > 1:
        said.insert(0, f"{len(tables)} tables in one transaction")
    return said


def _columns_phrase(verb: str, listed: list[str], table: str) -> str:
    word = "column" if len(listed) == 1 else "columns"
    preposition = {"added": "to", "dropped": "from", "altered": "of"}[verb]
    return f"{verb} {word} {', '.join(listed)} {preposition} {table}"

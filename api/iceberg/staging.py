"""Create transactions: a staged create, then one commit that creates the table.

An engine that creates a table with its data (``CREATE TABLE ... AS SELECT``) or builds it
before it exists (DuckDB's ``CREATE TABLE``) first asks for the table's metadata without
creating it (``stage-create``): the answer (``staged_metadata``) is the metadata the table
would have, with a fresh table uuid and the location it will get, and nothing is written but
the location's empty engine folders. The engine then writes its data files under that
location and commits with the requirement ``assert-create`` and the create's updates
(``CreateChanges``): assign-uuid, upgrade-format-version, add-schema, set-current-schema,
add-spec, set-default-spec, add-sort-order, set-default-sort-order, set-location,
set-properties, and, for a table created with data, add-snapshot and set-snapshot-ref
(branch main). A transaction that evolved the table before its commit (a schema, spec or
order added after the first) creates it with the schema current at the commit and every spec
and order it added, in order, so the ids its data files name are the table's.

The table is created as one catalog version, with the uuid the engine assigned. Its
location is the one the staged create asked for (``catalog.data.locations``' rules, checked
again when the table is created), else ``<warehouse>/table_<id>``, its id the next object
id of the catalog it is created in, so the staged answer names the folder the table would
get in the latest catalog; ``set-location`` naming such a folder must name the one the
table gets in the catalog its batch is judged on (as a path or a ``file:`` URI;
``CreateChanges.precondition``). Another object created in between fails the commit with
409 ``CommitFailedException``: the engine's data files are in a folder that is no longer the
table's, and nothing is created (a staged create that writes no data before its commit,
DuckDB's, just runs again). A commit that also adds a
snapshot makes it the table's first data commit right after the create; if that data
commit is refused, the table is dropped again, so the create stands with its data or not at
all (a reader may see the empty table in between).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence

from api.iceberg.creation import (
    SERVED_FORMAT_VERSIONS,
    SERVED_ONLY,
    create_table_command,
    new_order,
    new_spec,
)
from api.iceberg.errors import bad_request
from api.iceberg.manifests import stored_path
from api.iceberg.metadata import table_metadata
from api.iceberg.models import (
    CreateTableRequest,
    IcebergSchema,
    PartitionSpec,
    SortOrder,
    TableMetadata,
)
from api.iceberg.nested_types import source_paths
from api.iceberg.properties import FORMAT_VERSION_PROPERTY
from api.iceberg.requirements import AssertCreate, TableRequirement
from api.iceberg.updates import (
    AddPartitionSpecUpdate,
    AddSchemaUpdate,
    AddSortOrderUpdate,
    AssignUUIDUpdate,
    SetCurrentSchemaUpdate,
    SetDefaultSortOrderUpdate,
    SetDefaultSpecUpdate,
    SetLocationUpdate,
    SetPropertiesUpdate,
    SetSnapshotRefUpdate,
    SnapshotUpdate,
    TableUpdate,
    UpgradeFormatVersionUpdate,
)
from catalog.catalog import Catalog
from catalog.commands.iceberg_tables import AlterTableIcebergCommand
from catalog.commands.tables import CreateTableCommand
from catalog.data.warehouse import data_folder, folder_of, warehouse_root
from catalog.errors import ConcurrentUpdateError, ErrorCode, ValidationError
from catalog.manager import Precondition
from catalog.prepare import prepare

LAST_ADDED = -1
INITIAL_SCHEMA_ID = 0
_TABLE_FOLDER = re.compile(r"table_\d+")


def with_uuid(command: CreateTableCommand, table_uuid: str) -> CreateTableCommand:
    """Return ``command`` creating its table with the engine's ``table_uuid``.

    Raises:
        ValidationError: not a uuid in canonical form.
    """
    if command.iceberg is None:
        return command
    spec = command.iceberg.model_copy(update={"table_uuid": table_uuid})
    # Validated again: model_copy does not validate.
    checked = type(spec).model_validate(spec.model_dump())
    return command.model_copy(update={"iceberg": checked})


def staged_metadata(
    cat: Catalog, schema: str, body: CreateTableRequest, warehouse: str
) -> TableMetadata:
    """Return the metadata the table ``body`` asks for would have; nothing is created.

    The table is checked as its create would be (names, types, spec, order, location),
    given a fresh uuid and the location it asks for or that of the next object id.

    Raises:
        IcebergError: BadRequestException for what a create refuses.
        CatalogError: the schema is missing, the table exists, or the command is refused.
    """
    asked = body.model_copy(update={"stage_create": False})
    command = with_uuid(create_table_command(schema, asked), str(uuid.uuid4()))
    prepared = prepare(cat, [command], warehouse=warehouse_root(warehouse))
    metadata = table_metadata(
        prepared.catalog.table(schema, body.name), warehouse, cat.activation_ts
    )
    return first_schema_numbered_zero(metadata)


def first_schema_numbered_zero(metadata: TableMetadata) -> TableMetadata:
    """Return a staged table's metadata with its one schema numbered 0, as Iceberg would.

    Iceberg numbers a new table's first schema 0. The table gets its first catalog schema
    version when its create commits; until then an engine holds the staged metadata, and
    DuckDB looks its schema up by that number.
    """
    (schema,) = metadata.schemas
    first = schema.model_copy(update={"schema_id": INITIAL_SCHEMA_ID})
    return metadata.model_copy(update={"schemas": [first], "current_schema_id": INITIAL_SCHEMA_ID})


def same_folder(asked: str, location: str) -> bool:
    """Return whether two locations name one folder (each a path or a URI)."""
    return stored_path(asked) == stored_path(location)


def is_create(requirements: Sequence[TableRequirement]) -> bool:
    """Return whether a commit is a create transaction's (it asserts the table is new).

    Raises:
        IcebergError: BadRequestException for ``assert-create`` with other requirements.
    """
    if not any(isinstance(r, AssertCreate) for r in requirements):
        return False
    if len(requirements) != 1:
        raise bad_request("assert-create is a create transaction's only requirement")
    return True


class CreateChanges:
    """What a create transaction's updates ask for: the table, its uuid and location."""

    def __init__(self, name: str, updates: Sequence[TableUpdate]) -> None:
        """Read the updates of a create commit for table ``name``.

        Raises:
            IcebergError: BadRequestException for an update a create does not make, or a
                default spec, order or schema that is not the one added.
        """
        self.name = name
        self.table_uuid: str | None = None
        self.location: str | None = None
        self.properties: dict[str, str] = {}
        self.snapshots: list[TableUpdate] = []
        schemas: list[IcebergSchema] = []
        specs: list[PartitionSpec] = []
        orders: list[SortOrder] = []
        chosen: dict[str, int] = {}
        for update in updates:
            if isinstance(update, AssignUUIDUpdate):
                self.table_uuid = update.uuid
            elif isinstance(update, UpgradeFormatVersionUpdate):
                if update.format_version not in SERVED_FORMAT_VERSIONS:
                    raise bad_request(f"table {name}: {SERVED_ONLY}, not {update.format_version}")
                self.properties[FORMAT_VERSION_PROPERTY] = str(update.format_version)
            elif isinstance(update, AddSchemaUpdate):
                schemas.append(update.schema_)
            elif isinstance(update, AddPartitionSpecUpdate):
                specs.append(update.spec)
            elif isinstance(update, AddSortOrderUpdate):
                orders.append(update.sort_order)
            elif isinstance(update, SetCurrentSchemaUpdate):
                chosen["schema"] = self._chosen(
                    "set-current-schema", update.schema_id, schemas, "schema_id"
                )
            elif isinstance(update, SetDefaultSpecUpdate):
                chosen["spec"] = self._chosen("set-default-spec", update.spec_id, specs, "spec_id")
            elif isinstance(update, SetDefaultSortOrderUpdate):
                chosen["order"] = self._chosen(
                    "set-default-sort-order", update.sort_order_id, orders, "order_id"
                )
            elif isinstance(update, SetLocationUpdate):
                self.location = update.location
            elif isinstance(update, SetPropertiesUpdate):
                self.properties.update(update.updates)
            elif isinstance(update, SnapshotUpdate | SetSnapshotRefUpdate):
                self.snapshots.append(update)
            else:
                raise bad_request(
                    f"table {name}: update {update.action} is not part of a create transaction"
                )
        if not schemas:
            raise bad_request(f"table {name}: a create transaction adds a schema")
        # The table is created with the schema current at the commit (the others' fields
        # are the same ids), its first spec and order, and then the specs and orders added
        # after them, whose ids its data files' manifests name.
        self.schema = schemas[chosen.get("schema", len(schemas) - 1)]
        self.spec = specs[0] if specs else None
        self.order = orders[0] if orders else None
        self.later_specs, self.later_orders = specs[1:], orders[1:]
        self.default_spec = self._default("spec", chosen, len(specs))
        self.default_order = self._default("sort order", chosen, len(orders))

    def _chosen(self, what: str, asked: int, added: Sequence[object], member: str) -> int:
        """Return the index among ``added`` of the one ``asked`` names (-1: the last)."""
        ids = [getattr(a, member) for a in added]
        if asked == LAST_ADDED and added:
            return len(added) - 1
        if asked in ids:
            return ids.index(asked)
        if asked == 0 and not added:
            return 0
        raise bad_request(
            f"table {self.name}: {what} {asked} names none of the create's own; a create "
            "transaction makes what it adds the default (-1)"
        )

    def _default(self, what: str, chosen: dict[str, int], added: int) -> int | None:
        """Return the default among later specs (or orders) as -1, None for the first.

        Raises:
            IcebergError: BadRequestException for a default neither the first nor the last.
        """
        index = chosen.get("spec" if what == "spec" else "order", added - 1)
        if added <= 1 or index == 0:
            return None
        if index != added - 1:
            raise bad_request(
                f"table {self.name}: a create transaction's default {what} is its first or its last"
            )
        return LAST_ADDED

    def command(self, schema: str, warehouse: str) -> CreateTableCommand:
        """Return the command creating the table, at ``set-location``'s location.

        A location that is a table folder of the warehouse (``<warehouse>/table_<id>``, what
        a staged create without a location answered) is the one the table gets, checked by
        ``precondition``; any other is asked for as the table's own.

        Raises:
            IcebergError: BadRequestException for what a create refuses.
            ValidationError: a name, column, transform, uuid or location the catalog refuses.
        """
        body = CreateTableRequest(
            name=self.name,
            schema_=self.schema,
            partition_spec=self.spec,
            write_order=self.order,
            properties=self.properties,
            location=None if self._in_table_folder(warehouse) else self.location,
        )
        command = create_table_command(schema, body)
        return command if self.table_uuid is None else with_uuid(command, self.table_uuid)

    def later_command(self, schema: str) -> AlterTableIcebergCommand | None:
        """Return the command adding the specs and orders added after the first, if any.

        Raises:
            IcebergError: BadRequestException for a spec or order naming no field.
        """
        if not self.later_specs and not self.later_orders:
            return None
        names = source_paths(self.name, self.schema.fields)
        return AlterTableIcebergCommand(
            **{"schema": schema, "table": self.name},
            add_specs=tuple(new_spec(names, spec) for spec in self.later_specs),
            default_spec_id=self.default_spec,
            add_sort_orders=tuple(new_order(names, order) for order in self.later_orders),
            default_sort_order_id=self.default_order,
        )

    def precondition(
        self, schema: str, command: CreateTableCommand, warehouse: str
    ) -> Precondition | None:
        """Return the check that the table gets the location the engine was given.

        The check creates the table in the catalog its batch is judged on, as the batch
        will, and compares the folder it gets with ``set-location``'s.
        """
        asked = self.location
        if asked is None or not self._in_table_folder(warehouse):
            return None

        def check(current: Catalog) -> None:
            if not same_folder(asked, _created_folder(current, schema, command, warehouse)):
                raise_moved(self.name, asked)

        return check

    def _in_table_folder(self, warehouse: str) -> bool:
        """Return whether ``set-location`` names a table folder ``<warehouse>/table_<id>``."""
        if self.location is None:
            return False
        try:
            parent, _, name = folder_of(self.location).rpartition("/")
        except ValidationError:
            return False
        return parent == warehouse_root(warehouse) and _TABLE_FOLDER.fullmatch(name) is not None


def _created_folder(cat: Catalog, schema: str, command: CreateTableCommand, warehouse: str) -> str:
    """Return the folder the table ``command`` creates gets when created in ``cat``."""
    prepared = prepare(cat, [command], warehouse=warehouse_root(warehouse))
    return str(data_folder(prepared.catalog.table(schema, command.name), warehouse))


def raise_moved(name: str, location: str) -> None:
    """Refuse a create whose staged location went to another object meanwhile.

    Raises:
        ConcurrentUpdateError: PRECONDITION_FAILED, always.
    """
    raise ConcurrentUpdateError(
        f"table {name}: the location {location} it was staged with went to another object "
        "created meanwhile; nothing was created: stage the create again and retry",
        code=ErrorCode.PRECONDITION_FAILED,
    )

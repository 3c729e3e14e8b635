"""A table commit: its requirements checked, its updates turned into catalog commands.

The body is a list of requirements and a list of updates, one model per kind of each
(``requirements``, ``updates``). Requirements are checked (each kind's ``check``) against
the table's projected metadata; one that does not hold fails the commit
(``CommitFailedException``) before anything is written. They are checked again against the
very catalog version the commit's batch is judged on (``unchanged_since_read``), so another
writer's change that lands in between fails the commit too, as Iceberg's optimistic commits
require. The updates that change a table's schema (``add-schema`` with
``set-current-schema``), its properties (``set-properties``, ``remove-properties``: the
catalog's own by ``alter_table_properties``, any other kept verbatim), its specs and orders
(``add-spec``, ``set-default-spec``, ``remove-partition-specs``, ``add-sort-order``,
``set-default-sort-order``) or its format version (``upgrade-format-version``) record
themselves (``apply``) and become catalog commands, applied as one batch: one catalog
version. A commit that adds a snapshot is a data commit (``appends``) and makes no other
change. Every other update (location, a branch moved back) is refused by its kind and nothing is
written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import Field

from api.iceberg.creation import new_order, new_spec
from api.iceberg.errors import IcebergError, bad_request
from api.iceberg.evolution import schema_commands
from api.iceberg.metadata import table_metadata
from api.iceberg.models import IcebergModel, IcebergSchema, TableIdentifier, TableMetadata
from api.iceberg.nested_types import source_paths
from api.iceberg.properties import properties_command, split_properties
from api.iceberg.refs import snapshot_fields
from api.iceberg.requirements import TableRequirement
from api.iceberg.snapshots import Snapshots
from api.iceberg.updates import CommitChanges, TableUpdate
from catalog.catalog import Catalog
from catalog.commands import CommandBase
from catalog.commands.columns import DropColumnsCommand
from catalog.commands.iceberg_tables import AlterTableIcebergCommand
from catalog.data.warehouse import folder_of
from catalog.descriptors import TableDescriptor
from catalog.errors import ConcurrentUpdateError, ErrorCode
from catalog.manager import Precondition


class CommitTableRequest(IcebergModel):
    """``POST /v1/namespaces/{namespace}/tables/{table}``."""

    identifier: TableIdentifier | None = None
    requirements: list[TableRequirement] = Field(default_factory=list)
    updates: list[TableUpdate] = Field(default_factory=list)


def check_requirements(
    requirements: Sequence[TableRequirement], metadata: TableMetadata, table: str
) -> None:
    """Check every requirement of a commit against the table's current metadata.

    Raises:
        IcebergError: CommitFailedException naming the first that fails.
    """
    for requirement in requirements:
        requirement.check(metadata, table)


def unchanged_since_read(
    requirements: Sequence[TableRequirement],
    table_id: int,
    warehouse: str,
    table: str,
    snapshots: Snapshots | Callable[[TableDescriptor], Snapshots],
) -> Precondition:
    """Return the check that holds a commit to its requirements when its batch is judged.

    The table's snapshots are those read before (a batch of commands adds none), listed as
    the judged version's table lists them (its tags, branches and expiry) when ``snapshots``
    is a function of the table.

    Raises (when called):
        ConcurrentUpdateError: PRECONDITION_FAILED, a requirement no longer holds.
        NotFoundError: TABLE_NOT_FOUND, the table was dropped meanwhile.
    """

    def check(current: Catalog) -> None:
        found = current.table_by_id(table_id)
        listed = snapshots(found) if callable(snapshots) else snapshots
        try:
            check_requirements(
                requirements,
                table_metadata(found, warehouse, current.activation_ts, listed),
                table,
            )
        except IcebergError as e:
            raise ConcurrentUpdateError(e.message, code=ErrorCode.PRECONDITION_FAILED) from e

    return check


def commit_commands(
    schema_name: str,
    table: TableDescriptor,
    metadata: TableMetadata,
    updates: Sequence[TableUpdate],
    *,
    replace: bool = False,
) -> list[CommandBase]:
    """Return the catalog commands a commit's updates make, in order (possibly none).

    A replace (``replaces``) drops its columns last, once the new default spec and order no
    longer use them, and may add required fields, make fields required or bring back a
    dropped field's id (``evolution``).

    Raises:
        IcebergError: BadRequestException for an update the catalog does not make.
        ValidationError: a new column or property value the catalog refuses.
    """
    changes = CommitChanges()
    for update in updates:
        update.apply(changes)
    commands: list[CommandBase] = []
    drops: list[CommandBase] = []
    schema = changes.new_schema(metadata.current_schema_id, metadata.schemas)
    if schema is not None:
        commands += schema_commands(schema_name, table, schema, replace=replace)
        if replace:
            drops = [c for c in commands if isinstance(c, DropColumnsCommand)]
            commands = [c for c in commands if not isinstance(c, DropColumnsCommand)]
    properties = properties_command(
        schema_name, table.name, changes.set_properties, changes.removed_properties
    )
    if properties is not None:
        commands.append(properties)
    current = schema or metadata.schemas[-1]
    iceberg = _iceberg_command(schema_name, table.name, changes, current)
    branched = {b.snapshot_id for b in table.iceberg.branch_snapshots} if table.iceberg else set()
    snapshot_changes = snapshot_fields(changes, metadata, f"{schema_name}.{table.name}", branched)
    if snapshot_changes:
        iceberg = iceberg or AlterTableIcebergCommand(
            **{"schema": schema_name, "table": table.name}
        )
        iceberg = iceberg.model_copy(update=snapshot_changes)
    docs = _docs(table, schema) if schema is not None else {}
    if docs:
        iceberg = iceberg or AlterTableIcebergCommand(
            **{"schema": schema_name, "table": table.name}
        )
        iceberg = iceberg.model_copy(update={"column_docs": docs})
    if changes.location is not None and _moved(changes.location, metadata, table.name):
        iceberg = iceberg or AlterTableIcebergCommand(
            **{"schema": schema_name, "table": table.name}
        )
        iceberg = iceberg.model_copy(update={"location": changes.location})
    if iceberg is not None:
        commands.append(iceberg)
    return commands + drops


def _iceberg_command(
    schema_name: str, table: str, changes: CommitChanges, current: IcebergSchema
) -> AlterTableIcebergCommand | None:
    """Return the command making the commit's Iceberg state changes, or None for none.

    Specs and orders name columns by the fields of ``current``, the schema current after the
    commit; the command names them by name, the catalog keeps their ids.
    """
    fields = source_paths(table, current.fields)
    _, set_others = split_properties(changes.set_properties)
    _, removed_others = split_properties(dict.fromkeys(changes.removed_properties, ""))
    specs = tuple(new_spec(fields, spec) for spec in changes.specs)
    orders = tuple(new_order(fields, order) for order in changes.orders)
    asked = (
        specs
        or orders
        or set_others
        or removed_others
        or changes.removed_specs
        or changes.default_spec is not None
        or changes.default_order is not None
        or changes.format_version is not None
    )
    if not asked:
        return None
    return AlterTableIcebergCommand(
        **{"schema": schema_name, "table": table},
        add_specs=specs,
        default_spec_id=changes.default_spec,
        remove_spec_ids=tuple(changes.removed_specs),
        add_sort_orders=orders,
        default_sort_order_id=changes.default_order,
        set_properties=set_others,
        remove_properties=tuple(removed_others),
        format_version=changes.format_version,
    )


def _moved(location: str, metadata: TableMetadata, table: str) -> bool:
    """Return whether ``set-location`` moves the table.

    Raises:
        ValidationError: a location that is not a local path or a ``file:`` or ``s3:`` URI.
        IcebergError: BadRequestException for a table with snapshots: the catalog records
            each data file by its path in the table's folder, so its files stay there.
    """
    if folder_of(location) == folder_of(metadata.location):
        return False
    if metadata.current_snapshot_id is not None:
        raise bad_request(
            f"table {table} has snapshots, whose files the catalog records by their path in "
            f"its location {metadata.location}: set-location moves only a table without data"
        )
    return True


def _docs(table: TableDescriptor, schema: IcebergSchema) -> dict[str, str]:
    """Return the column docs a new schema changes, by field name ("" removes one)."""
    state = table.iceberg
    changed = {}
    for f in schema.fields:
        had = state.doc_of(f.id) if state is not None else None
        if (f.doc or None) != had:
            changed[f.name] = f.doc or ""
    return changed

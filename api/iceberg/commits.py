"""A table commit: its requirements checked, its updates turned into catalog commands.

Requirements are checked against the table's projected metadata; one that does not hold
fails the commit (``CommitFailedException``) before anything is written. They are checked
again against the very catalog version the commit's batch is judged on
(``unchanged_since_read``), so another writer's change that lands in between fails the commit
too, as Iceberg's optimistic commits require. The updates that
change a table's schema (``add-schema`` with ``set-current-schema``), its properties
(``set-properties``, ``remove-properties``: the catalog's own by ``alter_table_properties``,
any other kept verbatim), its specs and orders (``add-spec``, ``set-default-spec``,
``remove-partition-specs``, ``add-sort-order``, ``set-default-sort-order``) or its format
version (``upgrade-format-version``) become catalog commands, applied as one batch: one
catalog version. A commit that adds a snapshot is a data commit (``appends``) and makes no
other change. Every other update (location, a branch moved back) is refused and nothing is
written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from api.iceberg.creation import SERVED_FORMAT_VERSION, SERVED_ONLY, new_order, new_spec
from api.iceberg.errors import IcebergError, bad_request, commit_failed
from api.iceberg.evolution import schema_commands
from api.iceberg.metadata import table_metadata
from api.iceberg.models import IcebergSchema, TableMetadata, TableRequirement, TableUpdate
from api.iceberg.properties import properties_command, split_properties
from api.iceberg.snapshots import Snapshots
from catalog.catalog import Catalog
from catalog.commands import CommandBase
from catalog.commands.iceberg_tables import (
    AlterTableIcebergCommand,
    NewPartitionSpec,
    NewSortOrder,
)
from catalog.descriptors import TableDescriptor
from catalog.errors import ConcurrentUpdateError, ErrorCode
from catalog.manager import Precondition

T = TypeVar("T")

LAST_ADDED = -1
"""``set-current-schema``'s id for "the schema this commit added"."""

NOT_MADE = (
    "this catalog's Iceberg REST catalog changes a table's schema, properties, partition "
    "specs, sort orders and format version, and adds snapshots to branch main; a table "
    "keeps its location"
)


def _required(value: T | None, requirement: TableRequirement, member: str) -> T:
    if value is None:
        raise bad_request(f"requirement {requirement.type} needs {member}")
    return value


def _fails(requirement: TableRequirement, metadata: TableMetadata) -> str | None:
    """Return why ``requirement`` does not hold of ``metadata``, or None when it holds.

    Raises:
        IcebergError: BadRequestException for an unknown requirement or a missing member.
    """
    kind = requirement.type
    if kind == "assert-create":
        return "the table already exists"
    if kind == "assert-table-uuid":
        uuid = _required(requirement.uuid, requirement, "uuid")
        return None if uuid == metadata.table_uuid else f"table uuid is {metadata.table_uuid}"
    if kind == "assert-ref-snapshot-id":
        ref = _required(requirement.ref, requirement, "ref")
        at = metadata.refs.get(ref, {}).get("snapshot-id")
        if at == requirement.snapshot_id:
            return None
        if at is None:
            return f"branch or tag {ref} does not exist (the table has no snapshot on it)"
        if requirement.snapshot_id is None:
            return f"branch {ref} exists, at snapshot {at}"
        return f"branch {ref} is at snapshot {at}, not {requirement.snapshot_id}"
    expected: dict[str, tuple[int | None, int, str]] = {
        "assert-current-schema-id": (
            requirement.current_schema_id,
            metadata.current_schema_id,
            "current-schema-id",
        ),
        "assert-last-assigned-field-id": (
            requirement.last_assigned_field_id,
            metadata.last_column_id,
            "last-assigned-field-id",
        ),
        "assert-last-assigned-partition-id": (
            requirement.last_assigned_partition_id,
            metadata.last_partition_id,
            "last-assigned-partition-id",
        ),
        "assert-default-spec-id": (
            requirement.default_spec_id,
            metadata.default_spec_id,
            "default-spec-id",
        ),
        "assert-default-sort-order-id": (
            requirement.default_sort_order_id,
            metadata.default_sort_order_id,
            "default-sort-order-id",
        ),
    }
    if kind not in expected:
        raise bad_request(f"unknown commit requirement {kind}")
    asked, actual, member = expected[kind]
    asked = _required(asked, requirement, member)
    return None if asked == actual else f"{member} is {actual}, not {asked}"


def check_requirements(
    requirements: Sequence[TableRequirement], metadata: TableMetadata, table: str
) -> None:
    """Check every requirement of a commit against the table's current metadata.

    Raises:
        IcebergError: CommitFailedException naming the first that fails; BadRequestException
            for a malformed one.
    """
    for requirement in requirements:
        reason = _fails(requirement, metadata)
        if reason is not None:
            raise commit_failed(
                f"requirement {requirement.type} failed for table {table}: {reason}; nothing "
                "was written: load the table again and retry"
            )


def unchanged_since_read(
    requirements: Sequence[TableRequirement],
    table_id: int,
    warehouse: str,
    table: str,
    snapshots: Snapshots,
) -> Precondition:
    """Return the check that holds a commit to its requirements when its batch is judged.

    The table's snapshots are those read before (a batch of commands adds none).

    Raises (when called):
        ConcurrentUpdateError: PRECONDITION_FAILED, a requirement no longer holds.
        NotFoundError: TABLE_NOT_FOUND, the table was dropped meanwhile.
    """

    def check(current: Catalog) -> None:
        found = current.table_by_id(table_id)
        try:
            check_requirements(
                requirements,
                table_metadata(found, warehouse, current.activation_ts, snapshots),
                table,
            )
        except IcebergError as e:
            raise ConcurrentUpdateError(e.message, code=ErrorCode.PRECONDITION_FAILED) from e

    return check


@dataclass
class _Changes:
    """What a commit's updates ask for."""

    added: list[IcebergSchema] = field(default_factory=list)
    current: int | None = None
    set_properties: dict[str, str] = field(default_factory=dict)
    removed_properties: list[str] = field(default_factory=list)
    specs: list[TableUpdate] = field(default_factory=list)
    orders: list[TableUpdate] = field(default_factory=list)
    default_spec: int | None = None
    default_order: int | None = None
    removed_specs: list[int] = field(default_factory=list)
    format_version: int | None = None

    def take(self, update: TableUpdate) -> None:
        """Record one update.

        Raises:
            IcebergError: BadRequestException for an update this catalog does not make.
        """
        action = update.action
        if self._take_iceberg(update):
            return
        if action == "add-schema" and update.schema_ is not None:
            self.added.append(update.schema_)
        elif action == "set-current-schema" and update.schema_id is not None:
            self.current = update.schema_id
        elif action == "set-properties" and update.updates is not None:
            self.set_properties.update(update.updates)
        elif action == "remove-properties" and update.removals is not None:
            self.removed_properties += update.removals
        elif action in ("add-schema", "set-current-schema", "set-properties", "remove-properties"):
            raise bad_request(f"update {action} is missing its members")
        else:
            raise bad_request(f"update {action} is refused: {NOT_MADE}")

    def _take_iceberg(self, update: TableUpdate) -> bool:
        """Record an update of the table's Iceberg state; return False for any other."""
        members: dict[str, object] = {
            "add-spec": update.spec,
            "set-default-spec": update.spec_id,
            "add-sort-order": update.sort_order,
            "set-default-sort-order": update.sort_order_id,
            "remove-partition-specs": update.spec_ids,
            "upgrade-format-version": update.format_version,
        }
        action = update.action
        if action not in members:
            return False
        if members[action] is None:
            raise bad_request(f"update {action} is missing its members")
        if action == "add-spec":
            self.specs.append(update)
        elif action == "add-sort-order":
            self.orders.append(update)
        elif action == "set-default-spec":
            self.default_spec = update.spec_id
        elif action == "set-default-sort-order":
            self.default_order = update.sort_order_id
        elif action == "remove-partition-specs":
            self.removed_specs += update.spec_ids or []
        elif update.format_version != SERVED_FORMAT_VERSION:
            raise bad_request(f"upgrade-format-version {update.format_version}: {SERVED_ONLY}")
        else:
            self.format_version = update.format_version
        return True

    def iceberg_command(
        self, schema_name: str, table: str, fields: dict[int, str]
    ) -> AlterTableIcebergCommand | None:
        """Return the command making the Iceberg state changes, or None when there are none.

        Args:
            schema_name: the table's schema.
            table: the table's name.
            fields: the names of the fields of the schema current after the commit, by id.
        """
        _, set_others = split_properties(self.set_properties)
        _, removed_others = split_properties(dict.fromkeys(self.removed_properties, ""))
        specs: list[NewPartitionSpec] = [
            new_spec(fields, u.spec) for u in self.specs if u.spec is not None
        ]
        orders: list[NewSortOrder] = [
            new_order(fields, u.sort_order) for u in self.orders if u.sort_order is not None
        ]
        asked = (
            specs
            or orders
            or set_others
            or removed_others
            or self.removed_specs
            or self.default_spec is not None
            or self.default_order is not None
            or self.format_version is not None
        )
        if not asked:
            return None
        return AlterTableIcebergCommand(
            **{"schema": schema_name, "table": table},
            add_specs=tuple(specs),
            default_spec_id=self.default_spec,
            remove_spec_ids=tuple(self.removed_specs),
            add_sort_orders=tuple(orders),
            default_sort_order_id=self.default_order,
            set_properties=set_others,
            remove_properties=tuple(removed_others),
            format_version=self.format_version,
        )

    def new_schema(self, metadata: TableMetadata) -> IcebergSchema | None:
        """Return the schema the commit makes current, or None when it keeps the current one.

        Raises:
            IcebergError: BadRequestException for a schema added but not made current, or
                an older schema made current again.
        """
        if self.current is None:
            if self.added:
                raise bad_request(
                    "this catalog keeps only the schemas a table has had: an added schema "
                    "must be made current in the same commit (set-current-schema)"
                )
            return None
        if self.current == LAST_ADDED:
            if not self.added:
                raise bad_request("set-current-schema -1 needs a schema added in this commit")
            return self.added[-1]
        for schema in reversed(self.added):
            if schema.schema_id == self.current:
                return schema
        if self.current == metadata.current_schema_id:
            return None
        raise bad_request(
            f"schema {self.current} cannot be made current: a table's schema moves forward "
            "only; add the schema you want instead"
        )


def commit_commands(
    schema_name: str,
    table: TableDescriptor,
    metadata: TableMetadata,
    updates: Sequence[TableUpdate],
) -> list[CommandBase]:
    """Return the catalog commands a commit's updates make, in order (possibly none).

    Raises:
        IcebergError: BadRequestException for an update the catalog does not make.
        ValidationError: a new column or property value the catalog refuses.
    """
    changes = _Changes()
    for update in updates:
        changes.take(update)
    commands: list[CommandBase] = []
    schema = changes.new_schema(metadata)
    if schema is not None:
        commands += schema_commands(schema_name, table, schema)
    properties = properties_command(
        schema_name, table.name, changes.set_properties, changes.removed_properties
    )
    if properties is not None:
        commands.append(properties)
    current = schema or metadata.schemas[-1]
    fields = {f.id: f.name for f in current.fields}
    iceberg = changes.iceberg_command(schema_name, table.name, fields)
    if schema is not None:
        docs = _docs(table, schema)
        if docs:
            iceberg = iceberg or AlterTableIcebergCommand(
                **{"schema": schema_name, "table": table.name}
            )
            iceberg = iceberg.model_copy(update={"column_docs": docs})
    if iceberg is not None:
        commands.append(iceberg)
    return commands


def _docs(table: TableDescriptor, schema: IcebergSchema) -> dict[str, str]:
    """Return the column docs a new schema changes, by field name ("" removes one)."""
    state = table.iceberg
    changed = {}
    for f in schema.fields:
        had = state.doc_of(f.id) if state is not None else None
        if (f.doc or None) != had:
            changed[f.name] = f.doc or ""
    return changed

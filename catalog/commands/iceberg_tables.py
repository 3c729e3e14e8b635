"""The Iceberg state of a table: what ``create_table`` gives it, and ``alter_table_iceberg``.

Commands name columns by name, as every command does; the state keeps their ids (see
``catalog.data.iceberg_table``), so a later rename keeps specs and orders valid.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import ClassVar, Literal, Self

from pydantic import Field, model_validator

from catalog.commands.base import Name, TableCommand, UpdateContext
from catalog.data.iceberg_refs import (
    BranchSnapshot,
    RefType,
    SnapshotRef,
    StatisticsDocument,
    check_ref_name,
)
from catalog.data.iceberg_schemas import current_schema_id, versions_served_as
from catalog.data.iceberg_table import (
    DEFAULT_FORMAT_VERSION,
    FORMAT_VERSIONS,
    LAST_UNPARTITIONED_ID,
    UNPARTITIONED_SPEC_ID,
    UNSORTED,
    UNSORTED_ORDER_ID,
    ColumnDoc,
    IcebergTableState,
    NullOrder,
    PartitionField,
    PartitionSpec,
    SortDirection,
    SortField,
    SortOrder,
    check_new_order,
    check_new_spec,
    check_state,
    transform_kind,
)
from catalog.data.locations import checked_location
from catalog.data.warehouse import folder_of
from catalog.descriptors import ColumnDescriptor, TableDescriptor
from catalog.descriptors.schemas import PUBLIC_SCHEMA
from catalog.entries import EntryBase, SetTableIcebergEntry, SetTableLocationEntry
from catalog.errors import ErrorCode, NotFoundError, ValidationError
from catalog.model import Model
from catalog.properties import changed_properties, properties_of

LAST_ADDED = -1
"""A default spec or order id meaning "the one this command added" (Iceberg's ``-1``)."""

_NAME_SUFFIX = {"bucket": "bucket", "truncate": "trunc", "void": "null"}


class PartitionFieldSpec(Model):
    """A partition field as asked: a transform of a column (by name).

    ``name`` defaults to Iceberg's (``ID``, ``ID_bucket``, ``AT_day``, ...); ``field_id`` to
    the id a field of the same column and transform had, else the next one.
    """

    source: str
    transform: str = "identity"
    name: str | None = None
    field_id: int | None = None

    @model_validator(mode="after")
    def _check(self) -> Self:
        transform_kind(self.transform)
        return self

    def field_name(self) -> str:
        """Return the field's name, Iceberg's default when none was given."""
        if self.name is not None:
            return self.name
        kind = transform_kind(self.transform)
        if kind == "identity":
            return self.source
        return f"{self.source}_{_NAME_SUFFIX.get(kind, kind)}"


class NewPartitionSpec(Model):
    """A partition spec as asked; ``spec_id`` defaults to the next one (so does one taken)."""

    spec_id: int | None = None
    fields: tuple[PartitionFieldSpec, ...] = ()


class SortFieldSpec(Model):
    """A sort field as asked; nulls come first ascending and last descending by default."""

    source: str
    transform: str = "identity"
    direction: SortDirection = SortDirection.ASC
    null_order: NullOrder | None = None

    @model_validator(mode="after")
    def _check(self) -> Self:
        transform_kind(self.transform)
        return self


class NewSortOrder(Model):
    """A sort order as asked; ``order_id`` defaults to the next one (so does one taken)."""

    order_id: int | None = None
    fields: tuple[SortFieldSpec, ...] = ()


class IcebergTableSpec(Model):
    """The Iceberg state a table is created with (``CreateTableCommand.iceberg``).

    As Iceberg does on create, the spec becomes spec 0 with field ids from 1000, and the
    order becomes order 1 (or the unsorted order 0 when it has no fields). A table registered
    from an Iceberg metadata file instead keeps the file's specs, orders, refs, properties
    and uuid as they are (``registered``; its column docs are ``column_docs``).
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("table_uuid", "registered")
    """Fields appended to the stored form after its first format; older payloads lack them."""

    format_version: int = DEFAULT_FORMAT_VERSION
    partition_spec: NewPartitionSpec | None = None
    sort_order: NewSortOrder | None = None
    properties: dict[str, str] = Field(default_factory=dict)
    column_docs: dict[str, str] = Field(default_factory=dict)
    """Column name → documentation."""
    table_uuid: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The ``table-uuid`` the engine assigned (a create transaction's); None: the catalog's.

    Left out of the stored command when None, so a command without one is stored as before."""
    registered: IcebergTableState | None = Field(default=None, exclude_if=lambda v: v is None)
    """A registered table's whole state, from its metadata file; None: made as on create."""

    @model_validator(mode="after")
    def _check_uuid(self) -> Self:
        if self.table_uuid is not None:
            try:
                canonical = str(uuid.UUID(self.table_uuid))
            except ValueError as e:
                raise ValidationError(f"table uuid {self.table_uuid!r} is not a uuid") from e
            if canonical != self.table_uuid:
                raise ValidationError(
                    f"table uuid {self.table_uuid!r} is not in canonical form ({canonical})"
                )
        return self

    def state(self, table: str, columns: Sequence[ColumnDescriptor]) -> IcebergTableState:
        """Return the state a new table with ``columns`` starts with.

        Raises:
            ValidationError: a rule of ``check_state`` or an unsuitable source column.
        """
        if self.registered is not None:
            edit = _Edit(table, columns, self.registered)
            edit.set_docs(self.column_docs)
            check_state(edit.state)
            check_new_spec(edit.state.default_spec, columns)
            check_new_order(edit.state.default_sort_order, columns)
            return edit.state
        empty = IcebergTableState(format_version=self.format_version, specs=(), sort_orders=())
        edit = _Edit(table, columns, empty)
        spec = self.partition_spec or NewPartitionSpec()
        edit.add_spec(spec.model_copy(update={"spec_id": UNPARTITIONED_SPEC_ID}), fresh=True)
        order = self.sort_order or NewSortOrder()
        edit.add_order(order.model_copy(update={"order_id": 1 if order.fields else 0}))
        if edit.state.sort_order(UNSORTED_ORDER_ID) is None:
            edit.state = edit.state.model_copy(
                update={"sort_orders": (UNSORTED, *edit.state.sort_orders)}
            )
        edit.state = edit.state.model_copy(
            update={
                "default_spec_id": UNPARTITIONED_SPEC_ID,
                "default_sort_order_id": 1 if order.fields else UNSORTED_ORDER_ID,
                "properties": properties_of(self.properties),
                "table_uuid": self.table_uuid,
            }
        )
        edit.set_docs(self.column_docs)
        check_state(edit.state)
        return edit.state


class _Edit:
    """A state being changed by one command, against the table's current columns."""

    def __init__(
        self, table: str, columns: Sequence[ColumnDescriptor], state: IcebergTableState
    ) -> None:
        self.table = table
        self.columns = columns
        self.state = state

    def column(self, name: str) -> ColumnDescriptor:
        found = next((c for c in self.columns if c.name == name), None)
        if found is None:
            raise NotFoundError(
                f"table {self.table} has no column {name}", code=ErrorCode.COLUMN_NOT_FOUND
            )
        return found

    def add_spec(self, new: NewPartitionSpec, *, fresh: bool = False) -> int:
        """Add a spec (or find an equal one) and return its id."""
        state = self.state
        known = {f.field_id: (f.source_id, f.transform) for s in state.specs for f in s.fields}
        by_field = {v: k for k, v in known.items()}
        last = state.last_partition_id
        fields = []
        for asked in new.fields:
            source = self.column(asked.source).id
            meant = (source, asked.transform)
            field_id = None if fresh else asked.field_id
            if field_id is None:
                field_id = by_field.get(meant)
            if field_id is None:
                field_id = max(last, LAST_UNPARTITIONED_ID) + 1
            elif field_id <= state.last_partition_id and known.get(field_id) != meant:
                raise ValidationError(
                    f"table {self.table}: partition field id {field_id} was assigned before to "
                    "another field; a new field takes an id above the last assigned "
                    f"{state.last_partition_id}"
                )
            last = max(last, field_id)
            fields.append(
                PartitionField(
                    source_id=source,
                    field_id=field_id,
                    name=asked.field_name(),
                    transform=asked.transform,
                )
            )
        for spec in state.specs:
            if spec.fields == tuple(fields):
                return spec.spec_id
        spec_id = new.spec_id
        # An id taken meanwhile (a racing commit added a spec) is a hint, as Iceberg takes
        # it: the spec gets the next id, and the commit names it by -1.
        if spec_id is None or state.spec(spec_id) is not None:
            spec_id = max((s.spec_id for s in state.specs), default=-1) + 1
        spec = PartitionSpec(spec_id=spec_id, fields=tuple(fields))
        check_new_spec(spec, self.columns)
        self.state = state.model_copy(
            update={"specs": (*state.specs, spec), "last_partition_id": last}
        )
        return spec_id

    def add_order(self, new: NewSortOrder) -> int:
        """Add a sort order (or find an equal one) and return its id."""
        state = self.state
        fields = tuple(
            SortField(
                source_id=self.column(f.source).id,
                transform=f.transform,
                direction=f.direction,
                null_order=f.null_order
                or (
                    NullOrder.NULLS_FIRST
                    if f.direction is SortDirection.ASC
                    else NullOrder.NULLS_LAST
                ),
            )
            for f in new.fields
        )
        if not fields and state.sort_order(UNSORTED_ORDER_ID) is not None:
            return UNSORTED_ORDER_ID
        for order in state.sort_orders:
            if order.fields == fields:
                return order.order_id
        order_id = new.order_id
        if order_id is None or state.sort_order(order_id) is not None:  # as a spec's (above)
            order_id = max((o.order_id for o in state.sort_orders), default=0) + 1
        order = SortOrder(order_id=order_id, fields=fields)
        check_new_order(order, self.columns)
        self.state = state.model_copy(update={"sort_orders": (*state.sort_orders, order)})
        return order_id

    def set_docs(self, docs: dict[str, str]) -> None:
        """Set column docs by column name (an empty doc removes one)."""
        if not docs:
            return
        by_id = {d.column_id: d.doc for d in self.state.column_docs}
        for name, doc in docs.items():
            column_id = self.column(name).id
            if doc:
                by_id[column_id] = doc
            else:
                by_id.pop(column_id, None)
        column_docs = tuple(ColumnDoc(column_id=i, doc=by_id[i]) for i in sorted(by_id))
        self.state = self.state.model_copy(update={"column_docs": column_docs})


class AlterTableIcebergCommand(TableCommand):
    """Change what Iceberg engines keep of a table; its schema version stays.

    In order: add partition specs and sort orders (an equal one already kept is reused), set
    the default spec and order (``-1``: the last one added here), remove specs other than
    the default, set then remove properties (any name, kept verbatim; the catalog's own
    properties are changed by ``alter_table_properties``), set column docs (an empty doc
    removes one) and upgrade the format version (never down). A table without Iceberg state
    (made by the catalog's SQL) starts from the default one: unpartitioned and unsorted.
    """

    op: Literal["alter_table_iceberg"] = "alter_table_iceberg"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    table: Name
    add_specs: tuple[NewPartitionSpec, ...] = ()
    default_spec_id: int | None = None
    remove_spec_ids: tuple[int, ...] = ()
    add_sort_orders: tuple[NewSortOrder, ...] = ()
    default_sort_order_id: int | None = None
    set_properties: dict[str, str] = Field(default_factory=dict)
    remove_properties: tuple[str, ...] = ()
    column_docs: dict[str, str] = Field(default_factory=dict)
    format_version: int | None = None
    if_table_exists: bool = False
    set_refs: tuple[SnapshotRef, ...] = ()
    """Tags and branches to set (never ``main``); the API checks their snapshots exist."""
    remove_refs: tuple[str, ...] = ()
    """Tags and branches to remove (never ``main``; one the table lacks is ignored)."""
    expire_below: int | None = None
    """Raise the expiry mark: snapshots below this sequence number are no longer listed."""
    set_statistics: tuple[StatisticsDocument, ...] = ()
    remove_statistics: tuple[int, ...] = ()
    """Snapshot ids whose statistics file goes."""
    set_partition_statistics: tuple[StatisticsDocument, ...] = ()
    remove_partition_statistics: tuple[int, ...] = ()
    remove_schemas: tuple[int, ...] = ()
    """Iceberg schema ids no longer served (``served_schema_ids``): every schema version
    served under one is removed; never the current one."""
    location: str | None = Field(
        default=None, min_length=1, max_length=4096, exclude_if=lambda v: v is None
    )
    """The table's new location (``catalog.data.locations``' rules); None: it stays (and it
    is left out of the stored command)."""
    add_branch_snapshots: tuple[BranchSnapshot, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Snapshots written to a branch other than main, in order (the API checks each is made
    on the one before, the first on the branch's head); ids the table lists are refused."""
    remove_branch_snapshots: tuple[int, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Branch snapshots no longer listed (never one a ref names; ids not held are ignored)."""

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = (
        "set_refs",
        "remove_refs",
        "expire_below",
        "set_statistics",
        "remove_statistics",
        "set_partition_statistics",
        "remove_partition_statistics",
        "remove_schemas",
        "location",
        "add_branch_snapshots",
        "remove_branch_snapshots",
    )

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.format_version is not None and self.format_version not in FORMAT_VERSIONS:
            raise ValidationError(
                f"Iceberg format version {self.format_version} is not one of "
                f"{', '.join(map(str, FORMAT_VERSIONS))}"
            )
        for name in (*(r.name for r in self.set_refs), *self.remove_refs):
            check_ref_name(name, self.table)
        for ref in self.set_refs:
            if ref.type is RefType.TAG and (
                ref.max_snapshot_age_ms is not None or ref.min_snapshots_to_keep is not None
            ):
                raise ValidationError(
                    f"table {self.table}: tag {ref.name} cannot have max-snapshot-age-ms or "
                    "min-snapshots-to-keep; those are a branch's"
                )
        return self

    def entries_for(self, ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:  # noqa: D102
        before = table.iceberg or IcebergTableState()
        edit = _Edit(table.name, table.columns, before)
        specs = [edit.add_spec(s) for s in self.add_specs]
        orders = [edit.add_order(o) for o in self.add_sort_orders]
        changes: dict[str, object] = {}
        if self.default_spec_id is not None:
            changes["default_spec_id"] = _chosen(self.default_spec_id, specs, "spec")
        if self.default_sort_order_id is not None:
            changes["default_sort_order_id"] = _chosen(self.default_sort_order_id, orders, "order")
        edit.state = edit.state.model_copy(update=changes)
        if self.remove_spec_ids:
            default = edit.state.default_spec_id
            if default in self.remove_spec_ids:
                raise ValidationError(
                    f"table {table.name}: partition spec {default} is the default; it cannot "
                    "be removed"
                )
            kept = tuple(s for s in edit.state.specs if s.spec_id not in self.remove_spec_ids)
            edit.state = edit.state.model_copy(update={"specs": kept})
        properties = changed_properties(
            edit.state.properties, self.set_properties, self.remove_properties
        )
        edit.state = edit.state.model_copy(update={"properties": properties})
        edit.set_docs(self.column_docs)
        if self.format_version is not None:
            if self.format_version < edit.state.format_version:
                raise ValidationError(
                    f"table {table.name} has Iceberg format version "
                    f"{edit.state.format_version}; it cannot go down to {self.format_version}"
                )
            edit.state = edit.state.model_copy(update={"format_version": self.format_version})
        edit.state = _snapshot_changes(self, table, edit.state)
        check_state(edit.state)
        entries: list[EntryBase] = []
        if edit.state != before:
            entries.append(SetTableIcebergEntry(table_id=table.id, iceberg=edit.state))
        if self.location is not None:
            moved = checked_location(
                ctx.catalog, ctx.warehouse, self.location, table.id, table.name
            )
            if table.location is None or folder_of(moved) != folder_of(table.location):
                entries.append(SetTableLocationEntry(table_id=table.id, location=moved))
        return entries


def _chosen(asked: int, added: list[int], what: str) -> int:
    if asked != LAST_ADDED:
        return asked
    if not added:
        raise ValidationError(f"default {what} -1 means the last one added, and none was added")
    return added[-1]


def _snapshot_changes(
    command: AlterTableIcebergCommand, table: TableDescriptor, state: IcebergTableState
) -> IcebergTableState:
    """Return ``state`` with the command's refs, expiry mark, statistics and schemas applied."""
    refs = {r.name: r for r in state.refs}
    for name in command.remove_refs:
        refs.pop(name, None)
    refs.update((r.name, r) for r in command.set_refs)
    expired = state.expired_below
    if command.expire_below is not None:
        expired = max(expired, command.expire_below)
    removing = versions_served_as(table, command.remove_schemas)
    if table.schema_version in removing:
        raise ValidationError(
            f"table {table.name}: schema {current_schema_id(table)} is the current schema; it "
            "cannot be removed"
        )
    removed = set(state.removed_schemas) | removing
    return state.model_copy(
        update={
            "refs": tuple(refs[n] for n in sorted(refs)),
            "branch_snapshots": _branch_snapshots(command, table.name, state, refs.values()),
            "expired_below": expired,
            "statistics": _documents(
                state.statistics, command.set_statistics, command.remove_statistics
            ),
            "partition_statistics": _documents(
                state.partition_statistics,
                command.set_partition_statistics,
                command.remove_partition_statistics,
            ),
            "removed_schemas": tuple(sorted(removed)),
        }
    )


def _branch_snapshots(
    command: AlterTableIcebergCommand,
    table: str,
    state: IcebergTableState,
    refs: Iterable[SnapshotRef],
) -> tuple[BranchSnapshot, ...]:
    """Return the table's branch snapshots once the command's are added and removed.

    Raises:
        ValidationError: an added snapshot's id is one the table holds already, or a
            removed one is named by a ref (once the command's ref changes are made).
    """
    named = {r.snapshot_id: r for r in refs}
    for snapshot_id in command.remove_branch_snapshots:
        if snapshot_id in named:
            ref = named[snapshot_id]
            raise ValidationError(
                f"table {table}: snapshot {snapshot_id} is {ref.type} {ref.name}'s; remove "
                f"the {ref.type} first"
            )
    kept = [
        b for b in state.branch_snapshots if b.snapshot_id not in command.remove_branch_snapshots
    ]
    held = {b.snapshot_id for b in kept}
    for added in command.add_branch_snapshots:
        if added.snapshot_id in held:
            raise ValidationError(
                f"table {table}: snapshot {added.snapshot_id} is committed already; "
                "a new snapshot needs a new id"
            )
        held.add(added.snapshot_id)
        kept.append(added)
    return tuple(kept)


def _documents(
    held: tuple[StatisticsDocument, ...],
    added: tuple[StatisticsDocument, ...],
    removed: tuple[int, ...],
) -> tuple[StatisticsDocument, ...]:
    """Return ``held`` with ``removed`` snapshots' documents dropped, then ``added`` set."""
    by_snapshot = {d.snapshot_id: d for d in held if d.snapshot_id not in removed}
    by_snapshot.update((d.snapshot_id, d) for d in added)
    return tuple(by_snapshot[i] for i in sorted(by_snapshot))

"""What Iceberg engines keep per table, kept by the catalog: specs, orders, properties.

The catalog owns a table's columns, key and its own properties; Iceberg owns its partition
specs, sort orders, the other table properties and its format version, and the catalog keeps
those verbatim under the log's rules (``TableDescriptor.iceberg``; changed by
``alter_table_iceberg``). Fields reference columns by id, so a rename keeps them valid.

Iceberg's rules, checked here (``check_state``, ``check_new_spec``, ``check_new_order``):
partition field ids are above 999 and name one field for the table's life (a field id
names the same source and transform in every spec; ``last_partition_id`` only grows); spec
and order ids are unique; the defaults exist; order 0 is the unsorted order; a new spec or
order references current columns with a transform that suits the column's type; a column the
default spec or default order uses cannot be dropped (``check_columns_dropped``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar, Protocol

from pydantic import Field

from catalog.column_types import PLAIN_TYPES, ColumnType
from catalog.data.iceberg_refs import BranchSnapshot, SnapshotRef, StatisticsDocument
from catalog.errors import ValidationError
from catalog.model import Model
from catalog.properties import Properties, properties_dict


class ColumnLike(Protocol):
    """What the checks read of a column (a ``ColumnDescriptor``; no import, no cycle)."""

    @property
    def id(self) -> int: ...  # noqa: D102

    @property
    def name(self) -> str: ...  # noqa: D102

    @property
    def type(self) -> ColumnType: ...  # noqa: D102


FORMAT_VERSIONS = (1, 2, 3)
"""The Iceberg format versions a table may record."""
ROW_LINEAGE_FORMAT = 3
"""The first Iceberg format version whose snapshots assign row ids (``next-row-id``)."""
DEFAULT_FORMAT_VERSION = 2
UNPARTITIONED_SPEC_ID = 0
UNSORTED_ORDER_ID = 0
LAST_UNPARTITIONED_ID = 999
"""The last partition field id of a table never partitioned; the first field gets 1000."""


class SortDirection(enum.StrEnum):
    """The direction of a sort field (Iceberg's spelling; stable wire values)."""

    ASC = "asc"
    DESC = "desc"


class NullOrder(enum.StrEnum):
    """Where a sort field puts nulls (Iceberg's spelling; stable wire values)."""

    NULLS_FIRST = "nulls-first"
    NULLS_LAST = "nulls-last"


class PartitionField(Model):
    """One field of a partition spec: a transform of a source column."""

    source_id: int
    field_id: int
    name: str
    transform: str


class PartitionSpec(Model):
    """A partition spec; the unpartitioned spec has no fields."""

    spec_id: int
    fields: tuple[PartitionField, ...] = ()


class SortField(Model):
    """One field of a sort order."""

    source_id: int
    transform: str
    direction: SortDirection
    null_order: NullOrder


class SortOrder(Model):
    """A sort order; order 0 is the unsorted order and has no fields."""

    order_id: int
    fields: tuple[SortField, ...] = ()


class ColumnDoc(Model):
    """The documentation an engine gave a column (Iceberg's ``doc``)."""

    column_id: int
    doc: str


UNPARTITIONED = PartitionSpec(spec_id=UNPARTITIONED_SPEC_ID)
UNSORTED = SortOrder(order_id=UNSORTED_ORDER_ID)


class IcebergTableState(Model):
    """A table's Iceberg state: what a table without one is served as, by default."""

    format_version: int = DEFAULT_FORMAT_VERSION
    specs: tuple[PartitionSpec, ...] = (UNPARTITIONED,)
    default_spec_id: int = UNPARTITIONED_SPEC_ID
    last_partition_id: int = LAST_UNPARTITIONED_ID
    sort_orders: tuple[SortOrder, ...] = (UNSORTED,)
    default_sort_order_id: int = UNSORTED_ORDER_ID
    properties: Properties = ()
    """Iceberg table properties other than the catalog's own, kept verbatim, sorted by name."""
    column_docs: tuple[ColumnDoc, ...] = ()
    """Column documentation by column id, sorted by id."""
    table_uuid: str | None = None
    """The ``table-uuid`` the engine that created the table assigned (a create transaction's
    ``assign-uuid``, a registered table's own); None: the catalog's (``iceberg_identity``)."""
    refs: tuple[SnapshotRef, ...] = ()
    """Tags and branches other than ``main``, sorted by name (``catalog.data.iceberg_refs``)."""
    expired_below: int = 0
    """Snapshots with a lower sequence number are no longer listed, unless a ref names them."""
    statistics: tuple[StatisticsDocument, ...] = ()
    """Statistics files, one per snapshot, sorted by snapshot id, kept verbatim."""
    partition_statistics: tuple[StatisticsDocument, ...] = ()
    """Partition statistics files, one per snapshot, sorted by snapshot id, kept verbatim."""
    removed_schemas: tuple[int, ...] = ()
    """Schema versions no longer served to Iceberg engines (the catalog still keeps them)."""
    rows_from: int = Field(default=0, ge=0, exclude_if=lambda v: v == 0)
    """The schema version from which the table's rows count: files written with an earlier
    schema version are no longer rows of the table (a replace that made columns required
    removed them, so no reader finds a null in a NOT NULL column); 0: every file counts (and
    it is left out of a command that holds the state, which is stored as before)."""
    branch_snapshots: tuple[BranchSnapshot, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Snapshots written to branches other than ``main``, in the order they were committed
    (``catalog.data.iceberg_refs``); a read of the table never sees them. Left out of a command
    that holds the state when there are none."""

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = (
        "table_uuid",
        "refs",
        "expired_below",
        "statistics",
        "partition_statistics",
        "removed_schemas",
        "rows_from",
        "branch_snapshots",
    )
    """Fields appended to the stored form after its first format; older payloads lack them."""

    def spec(self, spec_id: int) -> PartitionSpec | None:
        """Return the spec of id ``spec_id``, if any."""
        return next((s for s in self.specs if s.spec_id == spec_id), None)

    def sort_order(self, order_id: int) -> SortOrder | None:
        """Return the sort order of id ``order_id``, if any."""
        return next((o for o in self.sort_orders if o.order_id == order_id), None)

    @property
    def default_spec(self) -> PartitionSpec:
        """Return the default spec (``check_state`` makes sure it exists)."""
        return self.spec(self.default_spec_id) or UNPARTITIONED

    @property
    def default_sort_order(self) -> SortOrder:
        """Return the default sort order (``check_state`` makes sure it exists)."""
        return self.sort_order(self.default_sort_order_id) or UNSORTED

    def property_map(self) -> dict[str, str]:
        """Return the properties as a map."""
        return properties_dict(self.properties)

    def doc_of(self, column_id: int) -> str | None:
        """Return the doc of a column, if it has one."""
        return next((d.doc for d in self.column_docs if d.column_id == column_id), None)


_TRANSFORM = re.compile(r"(identity|year|month|day|hour|void|bucket\[(\d+)\]|truncate\[(\d+)\])")
_TIMES = (ColumnType.TIMESTAMP, ColumnType.TIMESTAMP_TZ)
_INTEGERS = (ColumnType.INT8, ColumnType.INT16, ColumnType.INT32, ColumnType.INT64)
_SUITS: dict[str, tuple[ColumnType, ...]] = {
    "identity": PLAIN_TYPES,
    "void": PLAIN_TYPES,
    "bucket": (
        *_INTEGERS,
        ColumnType.DECIMAL,
        ColumnType.DATE,
        ColumnType.TIME,
        *_TIMES,
        ColumnType.STRING,
        ColumnType.BYTES,
        ColumnType.UUID,
    ),
    "truncate": (*_INTEGERS, ColumnType.DECIMAL, ColumnType.STRING, ColumnType.BYTES),
    "year": (ColumnType.DATE, *_TIMES),
    "month": (ColumnType.DATE, *_TIMES),
    "day": (ColumnType.DATE, *_TIMES),
    "hour": _TIMES,
}


def transform_kind(transform: str) -> str:
    """Return the kind of an Iceberg transform (``bucket`` for ``bucket[16]``).

    Raises:
        ValidationError: not a transform: identity, bucket[N], truncate[W], year, month,
            day, hour or void, with N and W positive.
    """
    match = _TRANSFORM.fullmatch(transform)
    width = match and (match.group(2) or match.group(3))
    if match is None or (width is not None and int(width) < 1):
        raise ValidationError(
            f"{transform!r} is not an Iceberg transform: use identity, bucket[N], truncate[W], "
            "year, month, day, hour or void (N and W positive)"
        )
    return transform.split("[")[0]


def check_transform(transform: str, column: ColumnLike, what: str) -> None:
    """Check that ``transform`` parses and suits ``column``'s type.

    Raises:
        ValidationError: it does not parse, or the column's type does not take it.
    """
    kind = transform_kind(transform)
    if column.type not in _SUITS[kind]:
        raise ValidationError(
            f"{what}: transform {transform} does not apply to column {column.name} of type "
            f"{column.type}"
        )


def _column(columns: Sequence[ColumnLike], source_id: int, what: str) -> ColumnLike:
    found = next((c for c in columns if c.id == source_id), None)
    if found is None:
        raise ValidationError(f"{what}: source column id {source_id} is not a column of the table")
    return found


def check_new_spec(spec: PartitionSpec, columns: Sequence[ColumnLike]) -> None:
    """Check that a spec being added references current columns with suitable transforms.

    Raises:
        ValidationError: a source is not a current column, or its transform does not suit it.
    """
    what = f"partition spec {spec.spec_id}"
    for f in spec.fields:
        check_transform(f.transform, _column(columns, f.source_id, what), f"{what}, field {f.name}")


def check_new_order(order: SortOrder, columns: Sequence[ColumnLike]) -> None:
    """Check that a sort order being added references current columns with suitable transforms.

    Raises:
        ValidationError: a source is not a current column, or its transform does not suit it.
    """
    what = f"sort order {order.order_id}"
    for f in order.fields:
        check_transform(f.transform, _column(columns, f.source_id, what), what)


def _unique(ids: Iterable[int], what: str) -> None:
    seen: set[int] = set()
    for i in ids:
        if i in seen:
            raise ValidationError(f"{what} {i} is given twice")
        seen.add(i)


def check_state(state: IcebergTableState) -> None:
    """Check the rules a whole Iceberg state keeps, whatever its columns.

    Raises:
        ValidationError: an unknown format version, a repeated or negative spec or order id,
            a missing default, a partition field id at or below 999 or above the last
            assigned one, a field id naming two different fields, a repeated field name in a
            spec, one transform of a column twice in a spec, or an unsorted order id 0 with fields.
    """
    if state.format_version not in FORMAT_VERSIONS:
        raise ValidationError(
            f"Iceberg format version {state.format_version} is not one of "
            f"{', '.join(map(str, FORMAT_VERSIONS))}"
        )
    _unique((s.spec_id for s in state.specs), "partition spec id")
    _unique((o.order_id for o in state.sort_orders), "sort order id")
    if any(s.spec_id < 0 for s in state.specs) or any(o.order_id < 0 for o in state.sort_orders):
        raise ValidationError("partition spec and sort order ids are not negative")
    if state.spec(state.default_spec_id) is None:
        raise ValidationError(f"the default partition spec {state.default_spec_id} does not exist")
    if state.sort_order(state.default_sort_order_id) is None:
        raise ValidationError(
            f"the default sort order {state.default_sort_order_id} does not exist"
        )
    unsorted = state.sort_order(UNSORTED_ORDER_ID)
    if unsorted is not None and unsorted.fields:
        raise ValidationError("sort order 0 is the unsorted order: it has no fields")
    if any(not o.fields for o in state.sort_orders if o.order_id != UNSORTED_ORDER_ID):
        raise ValidationError("a sort order other than 0 has fields")
    if state.last_partition_id < LAST_UNPARTITIONED_ID:
        raise ValidationError(f"the last partition id is at least {LAST_UNPARTITIONED_ID}")
    fields: dict[int, tuple[int, str]] = {}
    for spec in state.specs:
        names = [f.name for f in spec.fields]
        if len(set(names)) != len(names):
            raise ValidationError(f"partition spec {spec.spec_id} repeats a field name")
        meanings = [(f.source_id, f.transform) for f in spec.fields]
        if len(set(meanings)) != len(meanings):
            raise ValidationError(
                f"partition spec {spec.spec_id} partitions twice by one transform of a column"
            )
        _unique((f.field_id for f in spec.fields), f"partition spec {spec.spec_id}: field id")
        for f in spec.fields:
            transform_kind(f.transform)
            if not LAST_UNPARTITIONED_ID < f.field_id <= state.last_partition_id:
                raise ValidationError(
                    f"partition field {f.name}: its id {f.field_id} must be above "
                    f"{LAST_UNPARTITIONED_ID} and at most the last assigned partition id "
                    f"{state.last_partition_id}"
                )
            meant = fields.setdefault(f.field_id, (f.source_id, f.transform))
            if meant != (f.source_id, f.transform):
                raise ValidationError(
                    f"partition field id {f.field_id} already names another field of the "
                    "table (source and transform); a new field takes a new id"
                )


def check_columns_dropped(
    state: IcebergTableState | None, gone: Mapping[int, str], table: str
) -> None:
    """Refuse to drop a column the default partition spec or the default sort order uses.

    Args:
        state: the table's Iceberg state (None: nothing to check).
        gone: the ids of the columns dropped, with their names.
        table: the table's name, for the message.

    Raises:
        ValidationError: a dropped column is a source of the default spec or order.
    """
    if state is None:
        return
    for f in state.default_spec.fields:
        if f.source_id in gone:
            raise ValidationError(
                f"table {table}: column {gone[f.source_id]} cannot be dropped: the default "
                f"partition spec partitions by it (field {f.name}); make a spec without it "
                "the default first"
            )
    for s in state.default_sort_order.fields:
        if s.source_id in gone:
            raise ValidationError(
                f"table {table}: column {gone[s.source_id]} cannot be dropped: the default "
                "sort order sorts by it; make an order without it the default first"
            )

"""``TableDescriptor``, its ``ColumnDescriptor``s and the history of its schema versions."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from catalog.column_types import ColumnType, DefaultValue, TypeParams
from catalog.data.iceberg_table import IcebergTableState
from catalog.model import Model

INITIAL_TABLE_VERSION = 1

SHARED_COLUMNS = 65_536
"""Distinct columns ``shared_column`` keeps; past that the oldest are forgotten."""


class ColumnDescriptor(Model):
    """A column. Its ``id`` is unique within its table and never reused.

    Its default is a constant (``default``) or a function called for each row that gives
    none (``default_function``, such as ``RAND_UUID``; primary-key columns only), not both.

    A ``STRUCT``, ``ARRAY`` or ``MAP`` column holds ``fields``, each a column of its own with
    an id from the table's id space (Iceberg's rule): a struct's named fields, an array's one
    ``element``, a map's ``key`` and ``value`` (``catalog.descriptors.nested``). Nested
    fields take no default.
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("default_function", "fields")
    """Fields appended to the stored form after its first format; older payloads lack them."""

    id: int
    name: str
    type: ColumnType
    nullable: bool = True
    precision: int | None = None
    scale: int | None = None
    length: int | None = None
    default: DefaultValue | None = None
    default_function: str | None = None
    fields: tuple[ColumnDescriptor, ...] = ()

    @property
    def params(self) -> TypeParams:
        """Return the type with its parameters."""
        return TypeParams(self.type, self.precision, self.scale, self.length)


_shared: dict[tuple[Any, ...], ColumnDescriptor] = {}
_shared_lock = threading.Lock()


def shared_column(
    *,
    id: int,
    name: str,
    type: ColumnType,
    nullable: bool,
    precision: int | None,
    scale: int | None,
    length: int | None,
    default: DefaultValue | None,
    default_function: str | None = None,
    fields: tuple[ColumnDescriptor, ...] = (),
) -> ColumnDescriptor:
    """Return the column with these fields: one object for all equal columns.

    Columns are immutable, and a large catalog repeats a few dozen of them across its tables
    (``ID BIGINT NOT NULL`` at position 0, ...): sharing them saves memory and leaves the
    garbage collector fewer objects to walk. The default's class (``True`` is not ``1``) and
    a float's exact bits (``-0.0`` is not ``0.0``) are part of what must be equal.
    """
    exact = default.hex() if isinstance(default, float) else default
    key = (
        id,
        name,
        type,
        nullable,
        precision,
        scale,
        length,
        default.__class__,
        exact,
        default_function,
        fields,
    )
    found = _shared.get(key)
    if found is not None:
        return found
    column = ColumnDescriptor.model_construct(
        id=id,
        name=name,
        type=type,
        nullable=nullable,
        precision=precision,
        scale=scale,
        length=length,
        default=default,
        default_function=default_function,
        fields=fields,
    )
    with _shared_lock:
        _shared[key] = column
        while len(_shared) > SHARED_COLUMNS:
            del _shared[next(iter(_shared))]
    return column


class TableVersion(Model):
    """The columns of one schema version of a table."""

    version: int
    columns: tuple[ColumnDescriptor, ...]


DEFAULT_STALE_ROWS_FRACTION = 0.2
"""A table's default share of a partition's rows changed before its statistics are stale."""
DEFAULT_MIN_STALE_ROWS_COUNT = 500
"""A table's default least number of rows changed before its statistics are stale."""


class TableDescriptor(Model):
    """A table: where it lives, its key, and every schema version it has had.

    ``versions[-1]`` is the current schema. The table's schema version starts at 1 and is
    bumped only by column changes; renames, index changes and properties leave it alone.
    ``storage_profile`` is one of its zone's, or None for the zone's first (its default);
    ``stale_rows_fraction`` and ``min_stale_rows_count`` say when the statistics of
    a partition are stale (Ignite's table properties). ``location`` is where its data lives,
    fixed when it is created. A table an Iceberg engine created may have no primary key
    (``primary_key`` and ``colocation_columns`` empty, ``pk_index_id`` None): the catalog's
    key rules apply only to tables that have one.
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = (
        "storage_profile",
        "stale_rows_fraction",
        "min_stale_rows_count",
        "update_ts",
        "location",
        "iceberg",
    )
    """Fields appended to the stored form after its first format; older payloads lack them."""

    id: int
    schema_id: int
    name: str
    zone_id: int
    pk_index_id: int | None
    """The primary-key index, created with the table; None for a table without a key."""
    primary_key: tuple[int, ...]
    """Primary-key column ids, in key order; empty for a table without a key (a table an
    Iceberg engine created without identifier fields)."""
    colocation_columns: tuple[int, ...]
    """Column ids rows are partitioned by: a non-empty subset of the primary key, or empty for
    a table without a key (its rows are spread by a hash of all their values)."""
    next_column_id: int
    versions: tuple[TableVersion, ...]
    storage_profile: str | None = None
    stale_rows_fraction: float = DEFAULT_STALE_ROWS_FRACTION
    min_stale_rows_count: int = DEFAULT_MIN_STALE_ROWS_COUNT
    update_ts: int = 0
    """The activation timestamp of the version that last changed it (Ignite's causality token;
    0 when that version was written before versions stamped their objects)."""
    location: str | None = None
    """The folder of its data, in the cluster's warehouse (``catalog.data.warehouse``); None for a
    table created in a cluster without a warehouse setting."""
    iceberg: IcebergTableState | None = None
    """What Iceberg engines keep of the table (specs, orders, their properties, format
    version); None for a table no engine gave any (served unpartitioned and unsorted)."""

    @property
    def has_primary_key(self) -> bool:
        """Return True unless the table was created without a primary key."""
        return bool(self.primary_key)

    @property
    def schema_version(self) -> int:
        """Return the current schema version."""
        return self.versions[-1].version

    @property
    def rows_from(self) -> int:
        """Return the schema version from which the table's rows count (``IcebergTableState``)."""
        return 0 if self.iceberg is None else self.iceberg.rows_from

    @property
    def columns(self) -> tuple[ColumnDescriptor, ...]:
        """Return the columns of the current schema version."""
        return self.versions[-1].columns

    def column(self, name: str) -> ColumnDescriptor | None:
        """Return the current column named ``name``, if any."""
        for c in self.versions[-1].columns:
            if c.name == name:
                return c
        return None

    def column_by_id(self, column_id: int) -> ColumnDescriptor | None:
        """Return the current column with id ``column_id``, if any."""
        for c in self.versions[-1].columns:
            if c.id == column_id:
                return c
        return None

    def version(self, schema_version: int) -> TableVersion:
        """Return the columns of one of this table's schema versions.

        Raises:
            KeyError: the table never had that schema version.
        """
        index = schema_version - self.versions[0].version
        if 0 <= index < len(self.versions):
            return self.versions[index]
        raise KeyError(f"table {self.name} has no schema version {schema_version}")

    def current(self) -> TableDescriptor:
        """Return this table with only its current schema version (what answers carry)."""
        if len(self.versions) == 1:
            return self
        return self.model_copy(update={"versions": self.versions[-1:]})

    def column_names(self, column_ids: tuple[int, ...]) -> list[str]:
        """Return the current names of ``column_ids``, in order."""
        by_id = {c.id: c.name for c in self.versions[-1].columns}
        return [by_id[i] for i in column_ids]

    def with_columns(
        self, columns: tuple[ColumnDescriptor, ...], next_column_id: int
    ) -> TableDescriptor:
        """Return a copy with ``columns`` as a new schema version."""
        new_version = TableVersion.model_construct(version=self.schema_version + 1, columns=columns)
        return self.model_copy(
            update={"versions": (*self.versions, new_version), "next_column_id": next_column_id}
        )

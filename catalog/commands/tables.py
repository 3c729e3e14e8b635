"""Commands that create, drop and rename tables."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, model_validator

from catalog.column_types import functional_default_refused
from catalog.commands.base import (
    CommandBase,
    ExistingObjectCommand,
    Name,
    TableCommand,
    UpdateContext,
    ensure_relation_name_free,
    existing_table,
    pk_index_name,
    schema_for_new,
    unique,
)
from catalog.commands.column_definitions import (
    Column,
    check_column_count,
    check_not_nested,
    column_descriptors,
)
from catalog.commands.iceberg_tables import IcebergTableSpec
from catalog.commands.indexes import index_columns
from catalog.commands.zones import created_default_zone
from catalog.data.locations import checked_location
from catalog.data.warehouse import table_location
from catalog.descriptors import (
    Collation,
    IndexDescriptor,
    IndexKind,
    IndexStatus,
    TableDescriptor,
    TableVersion,
    ZoneDescriptor,
)
from catalog.descriptors.nested import all_ids
from catalog.descriptors.schemas import PUBLIC_SCHEMA
from catalog.descriptors.tables import (
    DEFAULT_MIN_STALE_ROWS_COUNT,
    DEFAULT_STALE_ROWS_FRACTION,
    INITIAL_TABLE_VERSION,
)
from catalog.entries import (
    AlterTablePropertiesEntry,
    DropTableEntry,
    EntryBase,
    NewIndexEntry,
    NewTableEntry,
    ObjectIdGenUpdateEntry,
    RemoveIndexEntry,
    RenameIndexEntry,
    RenameTableEntry,
)
from catalog.errors import ValidationError

StaleRowsFraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
"""The share of a partition's rows changed before its statistics are stale: 0 to 1."""
MinStaleRowsCount = Annotated[int, Field(ge=0)]
"""The least number of rows changed before a partition's statistics are stale."""


class CreateTableCommand(CommandBase):
    """``CREATE TABLE``: columns, a NOT NULL primary key, colocation columns and a zone.

    The primary-key index is created AVAILABLE with the table, named ``primary_key_name``
    (SQL's ``CONSTRAINT name PRIMARY KEY``) or else ``<TABLE>_PK``. A sorted key
    (``primary_key_kind`` SORTED) may give each key column's collation in
    ``primary_key_collations`` (default ASC_NULLS_FIRST). Colocation columns default to the
    primary key; the zone defaults to the catalog's default zone. A storage profile, when
    given, must be one of the zone's; none given means the zone's first (its default). The
    staleness properties are Ignite's table properties (see ``AlterTablePropertiesCommand``).

    A table without a primary key is created only when asked explicitly: ``keyless`` true
    with an empty ``primary_key`` (what an Iceberg engine's table without identifier fields
    is). It has no key index (``pk_index_id`` None) and no colocation columns (its rows are
    spread by a hash of all their values); the key options must then be left out. The
    catalog's SQL never sets ``keyless``, so its ``CREATE TABLE`` still needs a key.
    ``iceberg`` is the state an Iceberg engine creates the table with (partition spec, sort
    order, properties, column docs; see ``IcebergTableSpec``); a table created with it numbers
    its columns from 1, as Iceberg readers expect, where other tables number them from 0.
    ``location`` is the folder asked for (``catalog.data.locations``' rules; None: the
    table's folder in the warehouse). A table registered from an Iceberg metadata file keeps
    its field ids (``column_ids``, one per column, in order), its current schema id
    (``schema_version``) and its ``last_column_id``.
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = (
        "location",
        "column_ids",
        "schema_version",
        "last_column_id",
    )
    """Fields appended to the stored form after its first format; older payloads lack them."""

    op: Literal["create_table"] = "create_table"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    name: Name
    columns: tuple[Column, ...] = Field(min_length=1)
    primary_key: tuple[Name, ...]
    primary_key_kind: IndexKind = IndexKind.HASH
    primary_key_name: Name | None = None
    primary_key_collations: tuple[Collation, ...] | None = None
    colocation_columns: tuple[Name, ...] | None = None
    zone: Name | None = None
    if_not_exists: bool = False
    storage_profile: Name | None = None
    stale_rows_fraction: StaleRowsFraction = DEFAULT_STALE_ROWS_FRACTION
    min_stale_rows_count: MinStaleRowsCount = DEFAULT_MIN_STALE_ROWS_COUNT
    keyless: bool = False
    iceberg: IcebergTableSpec | None = None
    # Each left out of the stored command at its default, so a command without it is stored
    # as before.
    location: str | None = Field(
        default=None, min_length=1, max_length=4096, exclude_if=lambda v: v is None
    )
    column_ids: tuple[Annotated[int, Field(ge=0, le=2**31 - 1)], ...] = Field(
        default=(), exclude_if=lambda v: not v
    )
    schema_version: int = Field(
        default=INITIAL_TABLE_VERSION,
        ge=INITIAL_TABLE_VERSION,
        exclude_if=lambda v: v == INITIAL_TABLE_VERSION,
    )
    last_column_id: int = Field(default=0, ge=0, le=2**31 - 1, exclude_if=lambda v: v == 0)

    @model_validator(mode="after")
    def _check(self) -> Self:
        unique(tuple(c.name for c in self.columns), "column name")
        if self.column_ids:
            if len(self.column_ids) != len(self.columns):
                raise ValidationError(
                    f"table {self.name}: column_ids gives {len(self.column_ids)} ids for "
                    f"{len(self.columns)} columns"
                )
            unique(tuple(str(i) for i in self.column_ids), "column id")
        if self.keyless:
            self._check_keyless()
        elif not self.primary_key:
            raise ValidationError(
                f"primary_key: table {self.name} needs at least one primary-key column (a "
                "table without a key is created only with keyless true)"
            )
        unique(self.primary_key, "primary-key column")
        by_name = {c.name: c for c in self.columns}
        for c in self.columns:
            if c.default_function is not None and c.name not in self.primary_key:
                raise functional_default_refused(c.name)
        for name in self.primary_key:
            column = by_name.get(name)
            if column is None:
                raise ValidationError(f"primary-key column {name} is not a column of the table")
            if column.nullable:
                raise ValidationError(f"primary-key column {name} must be NOT NULL")
            check_not_nested(column, "a primary key")
        collations = self.primary_key_collations
        if collations is not None:
            if self.primary_key_kind is not IndexKind.SORTED:
                raise ValidationError(
                    "a hash primary key takes no collations; declare it sorted "
                    "(PRIMARY KEY USING SORTED) to order its columns"
                )
            if len(collations) != len(self.primary_key):
                raise ValidationError(
                    f"the primary key has {len(self.primary_key)} columns and "
                    f"{len(collations)} collations; give one collation per key column"
                )
        if self.colocation_columns is not None:
            if not self.colocation_columns:
                raise ValidationError("colocation columns must not be empty")
            unique(self.colocation_columns, "colocation column")
            for name in self.colocation_columns:
                if name not in self.primary_key:
                    raise ValidationError(f"colocation column {name} is not a primary-key column")
        if self.primary_key_name is None:
            pk_index_name(self.name)
        return self

    def _check_keyless(self) -> None:
        given = [
            name
            for name, value in (
                ("primary_key", self.primary_key),
                ("primary_key_name", self.primary_key_name),
                ("primary_key_collations", self.primary_key_collations),
                ("colocation_columns", self.colocation_columns),
            )
            if value
        ]
        if self.primary_key_kind is not IndexKind.HASH:
            given.append("primary_key_kind")
        if given:
            raise ValidationError(
                f"table {self.name} is created keyless: it takes no {', '.join(given)}"
            )

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        cat = ctx.catalog
        schema = schema_for_new(cat, self.schema_, self.name, self.if_not_exists, cat.find_table)
        if schema is None:
            return []
        check_column_count(self.name, sum(c.field_count() for c in self.columns))
        if self.keyless:
            return self._keyless_entries(ctx, schema.id)
        pk_name = self.primary_key_name or pk_index_name(self.name)
        if pk_name == self.name:
            raise ValidationError(
                f"the primary-key index of table {self.name} cannot have the table's name "
                "(tables and indexes of a schema share one namespace)"
            )
        ensure_relation_name_free(cat, schema, pk_name)
        table, zone_entries = self._table(ctx, schema.id, keyless=False)
        assert table.pk_index_id is not None  # a keyed table's index id follows its own
        primary_key = table.primary_key
        collations = self.primary_key_collations or (None,) * len(primary_key)
        table_id, pk_index_id = table.id, table.pk_index_id
        pk_index = IndexDescriptor(
            id=pk_index_id,
            schema_id=schema.id,
            table_id=table_id,
            name=pk_name,
            kind=self.primary_key_kind,
            unique=True,
            columns=index_columns(self.primary_key_kind, zip(primary_key, collations, strict=True)),
            status=IndexStatus.AVAILABLE,
            created_with_table=True,
        )
        return [
            *zone_entries,
            NewTableEntry(table=table),
            NewIndexEntry(index=pk_index),
            ObjectIdGenUpdateEntry(delta=2),
        ]

    def _keyless_entries(self, ctx: UpdateContext, schema_id: int) -> list[EntryBase]:
        table, zone_entries = self._table(ctx, schema_id, keyless=True)
        return [*zone_entries, NewTableEntry(table=table), ObjectIdGenUpdateEntry(delta=1)]

    def _table(
        self, ctx: UpdateContext, schema_id: int, *, keyless: bool
    ) -> tuple[TableDescriptor, list[EntryBase]]:
        """Return the new table, with the entries creating its zone when it is created here."""
        cat = ctx.catalog
        zone, zone_entries = self._zone(ctx)
        profile = self.storage_profile
        if profile is not None and profile not in zone.storage_profiles:
            raise ValidationError(
                f"zone {zone.name} has no storage profile {profile}; its profiles are "
                f"{', '.join(zone.storage_profiles)}"
            )
        # The counter's own int when no zone took an id: each kept table shares it (32 B less).
        table_id = cat.object_id_gen + 1 if zone_entries else cat.object_id_gen
        first = 0 if self.iceberg is None else 1
        numbers = self.column_ids or tuple(range(first, first + len(self.columns)))
        next_id = max(first + len(self.columns), max(numbers) + 1, self.last_column_id + 1)
        columns, next_id = column_descriptors(self.columns, numbers, next_id)
        if len(all_ids(columns)) != sum(c.field_count() for c in self.columns):
            raise ValidationError(f"table {self.name}: two columns or nested fields share an id")
        ids = {c.name: c.id for c in columns}
        iceberg = None if self.iceberg is None else self.iceberg.state(self.name, columns)
        location = None if ctx.warehouse is None else table_location(ctx.warehouse, table_id)
        if self.location is not None:
            location = checked_location(cat, ctx.warehouse, self.location, table_id, self.name)
        table = TableDescriptor(
            id=table_id,
            schema_id=schema_id,
            name=self.name,
            zone_id=zone.id,
            pk_index_id=None if keyless else table_id + 1,
            primary_key=tuple(ids[n] for n in self.primary_key),
            colocation_columns=tuple(ids[n] for n in self.colocation_columns or self.primary_key),
            next_column_id=next_id,
            versions=(TableVersion(version=self.schema_version, columns=columns),),
            storage_profile=profile,
            stale_rows_fraction=self.stale_rows_fraction,
            min_stale_rows_count=self.min_stale_rows_count,
            location=location,
            iceberg=iceberg,
        )
        return table, zone_entries

    def _zone(self, ctx: UpdateContext) -> tuple[ZoneDescriptor, list[EntryBase]]:
        """Return the table's zone, with the entries creating it when it is created here."""
        if self.zone is not None:
            return ctx.catalog.zone(self.zone), []
        zone = ctx.catalog.default_zone()
        if zone is None:
            return created_default_zone(ctx)
        return zone, []


class DropTableCommand(ExistingObjectCommand[TableDescriptor]):
    """``DROP TABLE``: removes the table and every one of its indexes."""

    op: Literal["drop_table"] = "drop_table"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    name: Name
    if_exists: bool = False

    def find(self, ctx: UpdateContext) -> TableDescriptor | None:  # noqa: D102
        return existing_table(ctx.catalog, self.schema_, self.name, self.if_exists)

    def entries_for(self, ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:  # noqa: D102
        return drop_table_entries(ctx, table)


def drop_table_entries(ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:
    """Return the entries that remove ``table`` and all of its indexes (any status)."""
    entries: list[EntryBase] = [
        RemoveIndexEntry(index_id=index.id) for index in ctx.catalog.table_indexes(table.id)
    ]
    entries.append(DropTableEntry(table_id=table.id))
    return entries


class RenameTableCommand(ExistingObjectCommand[TableDescriptor]):
    """``ALTER TABLE ... RENAME TO``: renames the table and its primary-key index.

    The key index is renamed ``<NEW>_PK`` whatever it was named, as in Ignite. With
    ``if_exists``, a missing table is no error.
    """

    op: Literal["rename_table"] = "rename_table"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    name: Name
    new_name: Name
    if_exists: bool = False

    @model_validator(mode="after")
    def _check(self) -> Self:
        pk_index_name(self.new_name)
        return self

    def find(self, ctx: UpdateContext) -> TableDescriptor | None:  # noqa: D102
        return existing_table(ctx.catalog, self.schema_, self.name, self.if_exists)

    def entries_for(self, ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:  # noqa: D102
        cat = ctx.catalog
        schema = cat.schema(self.schema_)
        ensure_relation_name_free(cat, schema, self.new_name)
        renamed: list[EntryBase] = [RenameTableEntry(table_id=table.id, new_name=self.new_name)]
        if table.pk_index_id is None:  # a table without a key has no key index to rename
            return renamed
        pk_name = pk_index_name(self.new_name)
        ensure_relation_name_free(cat, schema, pk_name)
        return [*renamed, RenameIndexEntry(index_id=table.pk_index_id, new_name=pk_name)]


class AlterTablePropertiesCommand(TableCommand):
    """``ALTER TABLE ... SET (MIN STALE ROWS n, STALE ROWS FRACTION f)``: Ignite's properties.

    Properties left out are unchanged; the schema version stays. With ``if_table_exists``, a
    missing table is no error.
    """

    op: Literal["alter_table_properties"] = "alter_table_properties"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    table: Name
    stale_rows_fraction: StaleRowsFraction | None = None
    min_stale_rows_count: MinStaleRowsCount | None = None
    if_table_exists: bool = False

    def entries_for(self, ctx: UpdateContext, table: TableDescriptor) -> list[EntryBase]:  # noqa: D102
        fraction, count = self.stale_rows_fraction, self.min_stale_rows_count
        if fraction == table.stale_rows_fraction:
            fraction = None
        if count == table.min_stale_rows_count:
            count = None
        if fraction is None and count is None:
            return []
        return [
            AlterTablePropertiesEntry(
                table_id=table.id, stale_rows_fraction=fraction, min_stale_rows_count=count
            )
        ]

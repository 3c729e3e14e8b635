"""Commands that create, drop and rename indexes, and move them through their lifecycle."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Literal, Self

from pydantic import Field, model_validator

from catalog.commands.base import (
    CommandBase,
    ExistingObjectCommand,
    Name,
    UpdateContext,
    ensure_relation_name_free,
    existing_index,
    schema_for_new,
    unique,
)
from catalog.commands.column_definitions import check_not_nested
from catalog.descriptors import (
    Collation,
    IndexColumn,
    IndexDescriptor,
    IndexKind,
    IndexStatus,
)
from catalog.descriptors.schemas import PUBLIC_SCHEMA
from catalog.entries import (
    DropIndexEntry,
    EntryBase,
    MakeIndexAvailableEntry,
    NewIndexEntry,
    ObjectIdGenUpdateEntry,
    RemoveIndexEntry,
    RenameIndexEntry,
    StartBuildingIndexEntry,
)
from catalog.errors import ErrorCode, NotFoundError, ValidationError
from catalog.model import Model


def index_columns(
    kind: IndexKind, columns: Iterable[tuple[int, Collation | None]]
) -> tuple[IndexColumn, ...]:
    """Return an index's columns from ``(column id, collation)`` pairs.

    A sorted index's column takes its collation, ASC_NULLS_FIRST when none is given; a hash
    index's columns have none.
    """
    if kind is not IndexKind.SORTED:
        return tuple(IndexColumn(column_id=i, collation=None) for i, _ in columns)
    return tuple(
        IndexColumn(column_id=i, collation=c or Collation.ASC_NULLS_FIRST) for i, c in columns
    )


class IndexColumnSpec(Model):
    """An indexed column with an optional collation (sorted indexes only)."""

    name: Name
    collation: Collation | None = None


class CreateIndexCommand(CommandBase):
    """``CREATE INDEX``: hash or sorted (default), optionally unique.

    ``columns`` are names, or ``{"name": ..., "collation": ...}`` for sorted indexes
    (default collation ASC_NULLS_FIRST). A unique index must contain every colocation column.
    On an existing table the index starts REGISTERED and must be built; created in the same
    batch as its table it starts AVAILABLE.
    """

    op: Literal["create_index"] = "create_index"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    table: Name
    name: Name
    columns: tuple[Name | IndexColumnSpec, ...] = Field(min_length=1)
    kind: IndexKind = IndexKind.SORTED
    unique: bool = False
    if_not_exists: bool = False

    @model_validator(mode="after")
    def _check(self) -> Self:
        unique(tuple(spec.name for spec in self.column_specs), "index column")
        if self.kind is IndexKind.HASH and any(s.collation for s in self.column_specs):
            raise ValidationError("a hash index takes no collations")
        return self

    @property
    def column_specs(self) -> tuple[IndexColumnSpec, ...]:
        """Return the columns, each as an ``IndexColumnSpec``."""
        return tuple(IndexColumnSpec(name=c) if isinstance(c, str) else c for c in self.columns)

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        cat = ctx.catalog
        schema = schema_for_new(cat, self.schema_, self.name, self.if_not_exists, cat.find_index)
        if schema is None:
            return []
        table = cat.table(schema.name, self.table)
        chosen: list[tuple[int, Collation | None]] = []
        for spec in self.column_specs:
            column = table.column(spec.name)
            if column is None:
                raise NotFoundError(
                    f"column {spec.name} not found in table {table.name}",
                    code=ErrorCode.COLUMN_NOT_FOUND,
                )
            check_not_nested(column, "an index")
            chosen.append((column.id, spec.collation))
        columns = index_columns(self.kind, chosen)
        if self.unique:
            indexed = {c.column_id for c in columns}
            missing = [i for i in table.colocation_columns if i not in indexed]
            if missing:
                names = ", ".join(table.column_names(tuple(missing)))
                raise ValidationError(
                    f"a unique index must contain every colocation column; missing: {names}"
                )
        with_table = not ctx.base.has_table(table.id)  # created earlier in this same batch
        index = IndexDescriptor(
            id=cat.object_id_gen,
            schema_id=schema.id,
            table_id=table.id,
            name=self.name,
            kind=self.kind,
            unique=self.unique,
            columns=tuple(columns),
            status=IndexStatus.AVAILABLE if with_table else IndexStatus.REGISTERED,
            created_with_table=with_table,
        )
        return [NewIndexEntry(index=index), ObjectIdGenUpdateEntry(delta=1)]


class DropIndexCommand(ExistingObjectCommand[IndexDescriptor]):
    """``DROP INDEX``: an AVAILABLE index moves to STOPPING; one never made available is removed.

    The primary-key index cannot be dropped (drop the table instead).
    """

    op: Literal["drop_index"] = "drop_index"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    name: Name
    if_exists: bool = False

    def find(self, ctx: UpdateContext) -> IndexDescriptor | None:  # noqa: D102
        return existing_index(ctx.catalog, self.schema_, self.name, self.if_exists)

    def entries_for(self, ctx: UpdateContext, index: IndexDescriptor) -> list[EntryBase]:  # noqa: D102
        if ctx.catalog.table_by_id(index.table_id).pk_index_id == index.id:
            raise ValidationError(f"cannot drop primary-key index {index.name}")
        if index.status is IndexStatus.AVAILABLE:
            return [DropIndexEntry(index_id=index.id)]
        return [RemoveIndexEntry(index_id=index.id)]


class RenameIndexCommand(ExistingObjectCommand[IndexDescriptor]):
    """``ALTER INDEX ... RENAME TO``. With ``if_exists``, a missing index is no error."""

    op: Literal["rename_index"] = "rename_index"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    name: Name
    new_name: Name
    if_exists: bool = False

    def find(self, ctx: UpdateContext) -> IndexDescriptor | None:  # noqa: D102
        return existing_index(ctx.catalog, self.schema_, self.name, self.if_exists)

    def entries_for(self, ctx: UpdateContext, index: IndexDescriptor) -> list[EntryBase]:  # noqa: D102
        schema = ctx.catalog.schema(self.schema_)
        ensure_relation_name_free(ctx.catalog, schema, self.new_name)
        return [RenameIndexEntry(index_id=index.id, new_name=self.new_name)]


class _IndexStatusCommand(CommandBase):
    """One step of an index's lifecycle.

    The index is named by ``index_id`` (as the index builder does) or by ``schema`` and
    ``name`` (as a person does), not both.
    """

    index_id: int | None = None
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    name: Name | None = None
    from_status: ClassVar[IndexStatus]
    by_name: ClassVar[bool] = True

    @model_validator(mode="after")
    def _named_once(self) -> Self:
        op = getattr(self, "op", "")
        if self.name is not None and not self.by_name:
            raise ValidationError(f"{op} takes index_id: a STOPPING index has given up its name")
        if (self.index_id is None) == (self.name is None):
            raise ValidationError(
                f"{op} names its index by index_id, or by name (with its schema); give one of them"
            )
        return self

    def _index(self, ctx: UpdateContext) -> IndexDescriptor:
        if self.index_id is not None:
            index = ctx.catalog.index_by_id(self.index_id)
        else:
            assert self.name is not None
            index = ctx.catalog.index(self.schema_, self.name)
        if index.status is not self.from_status:
            raise ValidationError(
                f"index {index.name} (id {index.id}) is {index.status}, "
                f"expected {self.from_status}",
                code=ErrorCode.INDEX_STATUS_CONFLICT,
            )
        return index


class StartBuildingIndexCommand(_IndexStatusCommand):
    """Move a REGISTERED index to BUILDING (issued by the index builder)."""

    op: Literal["start_building_index"] = "start_building_index"
    from_status: ClassVar[IndexStatus] = IndexStatus.REGISTERED

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        return [StartBuildingIndexEntry(index_id=self._index(ctx).id)]


class MakeIndexAvailableCommand(_IndexStatusCommand):
    """Move a BUILDING index to AVAILABLE (issued once the build finished)."""

    op: Literal["make_index_available"] = "make_index_available"
    from_status: ClassVar[IndexStatus] = IndexStatus.BUILDING

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        return [MakeIndexAvailableEntry(index_id=self._index(ctx).id)]


class RemoveIndexCommand(_IndexStatusCommand):
    """Remove a STOPPING index for good (issued once no reader can still use it)."""

    op: Literal["remove_index"] = "remove_index"
    from_status: ClassVar[IndexStatus] = IndexStatus.STOPPING
    by_name: ClassVar[bool] = False

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        return [RemoveIndexEntry(index_id=self._index(ctx).id)]

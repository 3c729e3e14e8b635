"""``CREATE VIEW``, ``DROP VIEW``, renames and the changes Iceberg engines commit to views.

A view's query is stored exactly as given, one text per SQL dialect, and never run by the
catalog; its columns are what the engine that made it says the query yields. Views share
their schema's names with tables and indexes.
"""

from __future__ import annotations

import time
import uuid
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from catalog.column_types import ColumnType, resolve_params
from catalog.commands.base import (
    CommandBase,
    ExistingObjectCommand,
    Name,
    UpdateContext,
    check_not_system,
    ensure_relation_name_free,
    unique,
    user_schema,
)
from catalog.commands.column_definitions import check_column_count
from catalog.commands.view_changes import LAST_ADDED, ViewChange
from catalog.descriptors.schemas import PUBLIC_SCHEMA
from catalog.descriptors.views import (
    ViewColumn,
    ViewDescriptor,
    ViewRepresentation,
    ViewVersion,
)
from catalog.entries import (
    DropViewEntry,
    EntryBase,
    NewViewEntry,
    ObjectIdGenUpdateEntry,
    RenameViewEntry,
)
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError, ValidationError
from catalog.model import Model
from catalog.properties import properties_of

MAX_QUERY_LENGTH = 1 << 20
"""The longest query text a view keeps (1 MiB): every node holds every view in memory."""
MAX_QUERIES = 16
"""The most dialects one version of a view has."""

Dialect = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]
"""A dialect name: ``spark``, ``trino``... (letters, digits, ``_``, ``.``, ``-``)."""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class ViewColumnSpec(Model):
    """One column a view's query yields: a name, a type and an optional comment."""

    name: Name
    type: ColumnType
    nullable: bool = True
    precision: int | None = None
    scale: int | None = None
    length: int | None = None
    doc: str | None = Field(default=None, max_length=4096)

    def to_column(self, field_id: int) -> ViewColumn:
        """Return the stored column with Iceberg field id ``field_id``.

        Raises:
            ValidationError: parameters the type does not take, or out of range.
        """
        params = resolve_params(self.type, self.precision, self.scale, self.length)
        return ViewColumn(
            id=field_id,
            name=self.name,
            type=self.type,
            nullable=self.nullable,
            precision=params.precision,
            scale=params.scale,
            length=params.length,
            doc=self.doc,
        )


class ViewQuery(Model):
    """A view's query in one dialect, kept exactly as given."""

    dialect: Dialect
    sql: str = Field(min_length=1, max_length=MAX_QUERY_LENGTH)

    @model_validator(mode="after")
    def _check(self) -> Self:
        if not self.sql.strip():
            raise ValidationError(f"the {self.dialect} query of a view is blank")
        return self


def _columns(
    specs: tuple[ViewColumnSpec, ...], field_ids: tuple[int, ...]
) -> tuple[ViewColumn, ...]:
    ids = field_ids or tuple(range(1, len(specs) + 1))
    return tuple(c.to_column(i) for c, i in zip(specs, ids, strict=True))


class ViewVersionSpec(Model):
    """A version of a view as asked for: its queries, names and schema (-1: the one just added)."""

    schema_id: int = Field(default=LAST_ADDED, ge=LAST_ADDED)
    queries: tuple[ViewQuery, ...] = Field(min_length=1, max_length=MAX_QUERIES)
    default_namespace: tuple[Name, ...] | None = None
    """Where the query's unqualified names resolve (None: the view's own schema)."""
    default_catalog: str | None = Field(default=None, max_length=256)
    summary: dict[str, str] = Field(default_factory=dict)
    timestamp_ms: int = Field(default_factory=_now_ms, ge=0)

    def to_version(self, home: str) -> ViewVersion:
        """Return the version to add (its id is given when it is added)."""
        return ViewVersion(
            version_id=LAST_ADDED,
            timestamp_ms=self.timestamp_ms,
            schema_id=self.schema_id,
            representations=tuple(
                ViewRepresentation(dialect=q.dialect, sql=q.sql) for q in self.queries
            ),
            default_namespace=(home,) if self.default_namespace is None else self.default_namespace,
            default_catalog=self.default_catalog,
            summary=properties_of(self.summary),
        )


def _check_columns(
    view: str, columns: tuple[ViewColumnSpec, ...], field_ids: tuple[int, ...]
) -> None:
    unique(tuple(c.name for c in columns), f"column name in view {view}")
    check_column_count(view, len(columns))
    if field_ids and len(field_ids) != len(columns):
        raise ValidationError(f"view {view}: {len(field_ids)} field ids for {len(columns)} columns")
    unique(tuple(str(i) for i in field_ids), f"field id in view {view}")


class CreateViewCommand(CommandBase):
    """``CREATE [OR REPLACE] VIEW schema.name (columns) AS query``, a query per dialect.

    With ``or_replace``, an existing view of the name gets a new current version (its
    history, id and uuid stay); with ``if_not_exists`` an existing view makes it a no-op.
    A table or index of the name is an error either way.
    """

    op: Literal["create_view"] = "create_view"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    name: Name
    columns: tuple[ViewColumnSpec, ...] = Field(min_length=1)
    version: ViewVersionSpec
    properties: dict[str, str] = Field(default_factory=dict)
    or_replace: bool = False
    if_not_exists: bool = False
    location: str | None = Field(default=None, min_length=1, max_length=4096)
    field_ids: tuple[Annotated[int, Field(ge=0, le=2**31 - 1)], ...] = ()
    """The Iceberg field id of each column, in order (empty: numbered from 1)."""
    at_ms: int = Field(default_factory=_now_ms, ge=0)
    """When it was asked for (the log's time of a version made current again)."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        _check_columns(self.name, self.columns, self.field_ids)
        if self.or_replace and self.if_not_exists:
            raise ValidationError(
                f"view {self.name}: OR REPLACE and IF NOT EXISTS exclude each other"
            )
        if self.version.schema_id != LAST_ADDED:
            raise ValidationError(f"view {self.name}: a new version's schema is its columns (-1)")
        return self

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        cat = ctx.catalog
        schema = user_schema(cat, self.schema_)
        existing = cat.find_view(schema.name, self.name)
        if existing is not None and self.if_not_exists:
            return []
        if existing is not None and not self.or_replace:
            raise AlreadyExistsError(
                f"view {schema.name}.{self.name} already exists", code=ErrorCode.VIEW_EXISTS
            )
        if existing is None:
            ensure_relation_name_free(cat, schema, self.name)
            blank = ViewDescriptor(
                id=cat.object_id_gen,
                schema_id=schema.id,
                name=self.name,
                uuid=str(uuid.uuid4()),
                location=self.location,
                current_version_id=0,
                versions=(),
                schemas=(),
                log=(),
            )
            change = ViewChange(blank, name=f"{schema.name}.{self.name}", now_ms=self.at_ms)
        else:
            change = ViewChange(existing, name=f"{schema.name}.{self.name}", now_ms=self.at_ms)
        change.add_schema(_columns(self.columns, self.field_ids))
        change.add_version(self.version.to_version(schema.name))
        change.set_current(LAST_ADDED)
        change.change_properties(self.properties, ())
        if self.location is not None:
            change.location = self.location
        if existing is None:
            return [NewViewEntry(view=change.view()), ObjectIdGenUpdateEntry(delta=1)]
        entry = change.entry(existing.id)
        return [] if entry is None else [entry]


class NewViewSchema(Model):
    """A schema an Iceberg engine adds to a view: its columns with their field ids."""

    columns: tuple[ViewColumnSpec, ...] = Field(min_length=1)
    field_ids: tuple[Annotated[int, Field(ge=0, le=2**31 - 1)], ...] = ()

    @model_validator(mode="after")
    def _check(self) -> Self:
        _check_columns("schema", self.columns, self.field_ids)
        return self


class AlterViewCommand(ExistingObjectCommand[ViewDescriptor]):
    """Change a view as an Iceberg engine's commit says, in Iceberg's order of updates.

    Schemas are added first, then versions, then the current version is chosen; properties
    and the location change last. ``expected_uuid`` is the engine's ``assert-view-uuid``.
    """

    op: Literal["alter_view"] = "alter_view"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    name: Name
    expected_uuid: str | None = None
    add_schemas: tuple[NewViewSchema, ...] = ()
    add_versions: tuple[ViewVersionSpec, ...] = ()
    current_version_id: int | None = None
    set_properties: dict[str, str] = Field(default_factory=dict)
    remove_properties: tuple[str, ...] = ()
    location: str | None = Field(default=None, min_length=1, max_length=4096)
    at_ms: int = Field(default_factory=_now_ms, ge=0)
    """When it was asked for (the log's time of a version made current again)."""

    def find(self, ctx: UpdateContext) -> ViewDescriptor | None:  # noqa: D102
        return existing_view(ctx, self.schema_, self.name, if_exists=False)

    def entries_for(self, ctx: UpdateContext, view: ViewDescriptor) -> list[EntryBase]:  # noqa: D102
        qualified = f"{self.schema_}.{self.name}"
        if self.expected_uuid is not None and self.expected_uuid != view.uuid:
            raise ValidationError(
                f"view {qualified} has uuid {view.uuid}, not {self.expected_uuid}",
                code=ErrorCode.PRECONDITION_FAILED,
            )
        both = sorted(set(self.set_properties) & set(self.remove_properties))
        if both:
            raise ValidationError(f"view {qualified}: property {both[0]} is both set and removed")
        change = ViewChange(view, name=qualified, now_ms=self.at_ms)
        for schema in self.add_schemas:
            change.add_schema(_columns(schema.columns, schema.field_ids))
        for version in self.add_versions:
            change.add_version(version.to_version(self.schema_))
        if self.current_version_id is not None:
            change.set_current(self.current_version_id)
        change.change_properties(self.set_properties, self.remove_properties)
        if self.location is not None:
            change.location = self.location
        entry = change.entry(view.id)
        return [] if entry is None else [entry]


def existing_view(
    ctx: UpdateContext, schema: str, name: str, *, if_exists: bool
) -> ViewDescriptor | None:
    """Return view ``schema.name`` to change; with ``if_exists`` a missing one is None.

    Raises:
        NotFoundError: SCHEMA_NOT_FOUND or VIEW_NOT_FOUND.
        ValidationError: the schema is a system schema.
    """
    cat = ctx.catalog
    if if_exists and cat.find_schema(schema) is None:
        check_not_system(schema)
        return None
    found = cat.find_view(user_schema(cat, schema).name, name)
    if found is None and not if_exists:
        raise NotFoundError(f"view {schema}.{name} not found", code=ErrorCode.VIEW_NOT_FOUND)
    return found


class DropViewCommand(ExistingObjectCommand[ViewDescriptor]):
    """``DROP VIEW [IF EXISTS] schema.name``."""

    op: Literal["drop_view"] = "drop_view"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    name: Name
    if_exists: bool = False

    def find(self, ctx: UpdateContext) -> ViewDescriptor | None:  # noqa: D102
        return existing_view(ctx, self.schema_, self.name, if_exists=self.if_exists)

    def entries_for(self, ctx: UpdateContext, view: ViewDescriptor) -> list[EntryBase]:  # noqa: D102
        return [DropViewEntry(view_id=view.id)]


class RenameViewCommand(ExistingObjectCommand[ViewDescriptor]):
    """``ALTER VIEW schema.name RENAME TO new_name``, optionally into another schema."""

    op: Literal["rename_view"] = "rename_view"
    schema_: Name = Field(default=PUBLIC_SCHEMA, alias="schema")
    name: Name
    new_name: Name
    new_schema: Name | None = None
    """The schema it moves to (None: it stays in its own)."""
    if_exists: bool = False

    def find(self, ctx: UpdateContext) -> ViewDescriptor | None:  # noqa: D102
        return existing_view(ctx, self.schema_, self.name, if_exists=self.if_exists)

    def entries_for(self, ctx: UpdateContext, view: ViewDescriptor) -> list[EntryBase]:  # noqa: D102
        target = user_schema(ctx.catalog, self.new_schema or self.schema_)
        if target.id == view.schema_id and self.new_name == view.name:
            return []
        if ctx.catalog.find_view(target.name, self.new_name) is not None:
            raise AlreadyExistsError(
                f"view {target.name}.{self.new_name} already exists", code=ErrorCode.VIEW_EXISTS
            )
        ensure_relation_name_free(ctx.catalog, target, self.new_name)
        return [RenameViewEntry(view_id=view.id, schema_id=target.id, new_name=self.new_name)]


__all__ = [
    "AlterViewCommand",
    "CreateViewCommand",
    "DropViewCommand",
    "NewViewSchema",
    "RenameViewCommand",
    "ViewColumnSpec",
    "ViewQuery",
    "ViewVersionSpec",
]

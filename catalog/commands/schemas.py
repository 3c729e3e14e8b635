"""Commands that create and drop schemas."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from catalog.commands.base import CommandBase, Name, UpdateContext
from catalog.commands.tables import drop_table_entries
from catalog.descriptors import SchemaDescriptor
from catalog.descriptors.schemas import SYSTEM_SCHEMAS
from catalog.entries import (
    DropSchemaEntry,
    DropViewEntry,
    EntryBase,
    NewSchemaEntry,
    ObjectIdGenUpdateEntry,
    SetSchemaPropertiesEntry,
)
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError, ValidationError
from catalog.properties import changed_properties, named_properties, properties_of


class CreateSchemaCommand(CommandBase):
    """``CREATE SCHEMA``; the reserved system schema names are refused (even IF NOT EXISTS).

    ``properties`` are kept verbatim (an Iceberg namespace's, such as ``owner``).
    """

    op: Literal["create_schema"] = "create_schema"
    name: Name
    if_not_exists: bool = False
    properties: dict[str, str] = Field(default_factory=dict)

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        if self.name in SYSTEM_SCHEMAS:
            raise ValidationError(f"{self.name} is a reserved system schema; it cannot be created")
        if ctx.catalog.find_schema(self.name) is not None:
            if self.if_not_exists:
                return []
            raise AlreadyExistsError(
                f"schema {self.name} already exists", code=ErrorCode.SCHEMA_EXISTS
            )
        schema = SchemaDescriptor(
            id=ctx.catalog.object_id_gen,
            name=self.name,
            properties=properties_of(self.properties),
        )
        return [NewSchemaEntry(schema=schema), ObjectIdGenUpdateEntry(delta=1)]


class DropSchemaCommand(CommandBase):
    """``DROP SCHEMA [CASCADE]``: a non-empty schema needs CASCADE; system schemas stay.

    ``PUBLIC`` is an ordinary schema here, as in Ignite: dropped, it can be created again.
    """

    op: Literal["drop_schema"] = "drop_schema"
    name: Name
    cascade: bool = False
    if_exists: bool = False

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        if self.name in SYSTEM_SCHEMAS:
            raise ValidationError(f"{self.name} is a system schema; it cannot be dropped")
        schema = ctx.catalog.find_schema(self.name)
        if schema is None:
            if self.if_exists:
                return []
            raise NotFoundError(f"schema {self.name} not found", code=ErrorCode.SCHEMA_NOT_FOUND)
        tables = ctx.catalog.schema_tables(schema.id)
        views = ctx.catalog.schema_views(schema.id)
        if (tables or views) and not self.cascade:
            raise ValidationError(
                f"schema {schema.name} is not empty; use CASCADE",
                code=ErrorCode.SCHEMA_NOT_EMPTY,
            )
        entries: list[EntryBase] = [DropViewEntry(view_id=v.id) for v in views]
        for table in tables:
            entries.extend(drop_table_entries(ctx, table))
        entries.append(DropSchemaEntry(schema_id=schema.id))
        return entries


class AlterSchemaPropertiesCommand(CommandBase):
    """Set and remove a schema's properties (removals first; a missing name is no error).

    System schemas keep none. An unchanged set of properties is a no-op.
    """

    op: Literal["alter_schema_properties"] = "alter_schema_properties"
    name: Name
    set_properties: dict[str, str] = Field(default_factory=dict)
    remove_properties: tuple[str, ...] = ()
    if_exists: bool = False

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        if self.name in SYSTEM_SCHEMAS:
            raise ValidationError(f"{self.name} is a system schema; it cannot be changed")
        schema = ctx.catalog.find_schema(self.name)
        if schema is None:
            if self.if_exists:
                return []
            raise NotFoundError(f"schema {self.name} not found", code=ErrorCode.SCHEMA_NOT_FOUND)
        both = sorted(set(self.set_properties) & set(self.remove_properties))
        if both:
            raise ValidationError(
                f"schema {self.name}: {named_properties(both)} are both set and removed"
            )
        properties = changed_properties(
            schema.properties, self.set_properties, self.remove_properties
        )
        if properties == schema.properties:
            return []
        return [SetSchemaPropertiesEntry(schema_id=schema.id, properties=properties)]

"""Commands that create and drop schemas."""

from __future__ import annotations

from typing import Literal

from catalog.commands.base import CommandBase, Name, UpdateContext
from catalog.commands.tables import drop_table_entries
from catalog.descriptors import SchemaDescriptor
from catalog.descriptors.schemas import PROTECTED_SCHEMAS
from catalog.entries import DropSchemaEntry, EntryBase, NewSchemaEntry, ObjectIdGenUpdateEntry
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError, ValidationError


class CreateSchemaCommand(CommandBase):
    """``CREATE SCHEMA``."""

    op: Literal["create_schema"] = "create_schema"
    name: Name
    if_not_exists: bool = False

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        if ctx.catalog.find_schema(self.name) is not None:
            if self.if_not_exists:
                return []
            raise AlreadyExistsError(
                f"schema {self.name} already exists", code=ErrorCode.SCHEMA_EXISTS
            )
        schema = SchemaDescriptor(id=ctx.catalog.object_id_gen, name=self.name)
        return [NewSchemaEntry(schema=schema), ObjectIdGenUpdateEntry(delta=1)]


class DropSchemaCommand(CommandBase):
    """``DROP SCHEMA [CASCADE]``: a non-empty schema needs CASCADE; PUBLIC and SYSTEM stay."""

    op: Literal["drop_schema"] = "drop_schema"
    name: Name
    cascade: bool = False
    if_exists: bool = False

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        schema = ctx.catalog.find_schema(self.name)
        if schema is None:
            if self.if_exists:
                return []
            raise NotFoundError(f"schema {self.name} not found", code=ErrorCode.SCHEMA_NOT_FOUND)
        if schema.name in PROTECTED_SCHEMAS:
            raise ValidationError(f"schema {schema.name} cannot be dropped")
        tables = ctx.catalog.schema_tables(schema.id)
        if tables and not self.cascade:
            raise ValidationError(
                f"schema {schema.name} is not empty; use CASCADE",
                code=ErrorCode.SCHEMA_NOT_EMPTY,
            )
        entries: list[EntryBase] = []
        for table in tables:
            entries.extend(drop_table_entries(ctx, table))
        entries.append(DropSchemaEntry(schema_id=schema.id))
        return entries

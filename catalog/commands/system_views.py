"""``CREATE SYSTEM VIEW``: a node of the database registers a view of its own state."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from catalog.commands.base import CommandBase, Name, UpdateContext, unique
from catalog.commands.column_definitions import Column, check_column_count
from catalog.descriptors import SystemViewDescriptor, SystemViewType
from catalog.descriptors.schemas import SYSTEM_SCHEMA
from catalog.entries import EntryBase, NewSystemViewEntry, ObjectIdGenUpdateEntry
from catalog.errors import AlreadyExistsError, ErrorCode


class CreateSystemViewCommand(CommandBase):
    """Register the system view ``SYSTEM.name`` with its columns and where its rows come from.

    Nodes send it as they start, each with its own views (as Ignite's nodes do). The same
    definition registered again changes nothing; another definition under the name replaces
    the view, with a new id, in one version.
    """

    op: Literal["create_system_view"] = "create_system_view"
    name: Name
    columns: tuple[Column, ...] = Field(min_length=1)
    view_type: SystemViewType

    @model_validator(mode="after")
    def _check(self) -> Self:
        unique(tuple(c.name for c in self.columns), "column")
        check_column_count(self.name, len(self.columns))
        return self

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        cat = ctx.catalog
        system = cat.schema(SYSTEM_SCHEMA)
        view = SystemViewDescriptor(
            id=cat.object_id_gen,
            schema_id=system.id,
            name=self.name,
            columns=tuple(c.to_descriptor(i) for i, c in enumerate(self.columns)),
            view_type=self.view_type,
        )
        existing = cat.find_system_view(self.name)
        if existing is not None and existing.same_definition(view):
            return []
        if existing is None and cat.relation_id(system.id, self.name) is not None:
            raise AlreadyExistsError(
                f"a table or index named {self.name} already exists in {SYSTEM_SCHEMA}",
                code=ErrorCode.TABLE_EXISTS,
            )
        return [NewSystemViewEntry(system_view=view), ObjectIdGenUpdateEntry(delta=1)]

"""Commands that create and drop roles."""

from __future__ import annotations

from typing import Literal

from catalog.commands.base import CommandBase, ExistingObjectCommand, Name, UpdateContext
from catalog.descriptors import RoleDescriptor
from catalog.entries import DropRoleEntry, EntryBase, NewRoleEntry, ObjectIdGenUpdateEntry
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError


class CreateRoleCommand(CommandBase):
    """``CREATE ROLE``: a role, holding nothing until it is granted privileges."""

    op: Literal["create_role"] = "create_role"
    name: Name
    if_not_exists: bool = False

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        catalog = ctx.catalog
        if catalog.find_role(self.name) is not None:
            if self.if_not_exists:
                return []
            raise AlreadyExistsError(f"role {self.name} already exists", code=ErrorCode.ROLE_EXISTS)
        role = RoleDescriptor(id=catalog.object_id_gen, name=self.name)
        return [NewRoleEntry(role=role), ObjectIdGenUpdateEntry(delta=1)]


class DropRoleCommand(ExistingObjectCommand[RoleDescriptor]):
    """``DROP ROLE``: the role, the grants to it and its grants to others go together."""

    op: Literal["drop_role"] = "drop_role"
    name: str
    if_exists: bool = False

    def find(self, ctx: UpdateContext) -> RoleDescriptor | None:  # noqa: D102
        found = ctx.catalog.find_role(self.name)
        if found is None and not self.if_exists:
            raise NotFoundError(f"role {self.name} not found", code=ErrorCode.ROLE_NOT_FOUND)
        return found

    def entries_for(self, ctx: UpdateContext, found: RoleDescriptor) -> list[EntryBase]:  # noqa: D102
        return [DropRoleEntry(role_id=found.id)]

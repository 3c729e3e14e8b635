"""Commands that create, alter and drop service principals.

The server makes a principal's client id and secret and gives the command only the secret's
hash (``hash_secret``): the secret is shown once, to whoever created or rotated it, and kept
nowhere. These commands are not among the JSON commands a writer may send (``CatalogCommand``):
only an admin's principal calls build them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from catalog.commands.base import CommandBase, ExistingObjectCommand, Name, UpdateContext
from catalog.descriptors import PrincipalDescriptor, PrincipalRole
from catalog.entries import (
    AlterPrincipalEntry,
    DropPrincipalEntry,
    EntryBase,
    NewPrincipalEntry,
    ObjectIdGenUpdateEntry,
)
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError

ClientId = Annotated[str, Field(min_length=16, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
SecretHash = Annotated[str, Field(min_length=1, max_length=256)]


class _PrincipalCommand(ExistingObjectCommand[PrincipalDescriptor]):
    """A command about the principal ``name``; with ``if_exists`` it may be missing."""

    name: str
    if_exists: bool

    def find(self, ctx: UpdateContext) -> PrincipalDescriptor | None:
        found = ctx.catalog.find_principal(self.name)
        if found is None and not self.if_exists:
            raise NotFoundError(
                f"principal {self.name} not found", code=ErrorCode.PRINCIPAL_NOT_FOUND
            )
        return found


class CreatePrincipalCommand(CommandBase):
    """Create a service principal with a role, a client id and its first secret's hash."""

    op: Literal["create_principal"] = "create_principal"
    name: Name
    role: PrincipalRole
    client_id: ClientId
    secret_hash: SecretHash = Field(repr=False)

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        catalog = ctx.catalog
        if catalog.find_principal(self.name) is not None:
            raise AlreadyExistsError(
                f"principal {self.name} already exists", code=ErrorCode.PRINCIPAL_EXISTS
            )
        if catalog.find_principal_by_client(self.client_id) is not None:
            raise AlreadyExistsError(
                "another principal has this client id", code=ErrorCode.PRINCIPAL_EXISTS
            )
        principal = PrincipalDescriptor(
            id=catalog.object_id_gen,
            name=self.name,
            role=self.role,
            client_id=self.client_id,
            secret_hash=self.secret_hash,
        )
        return [NewPrincipalEntry(principal=principal), ObjectIdGenUpdateEntry(delta=1)]


class AlterPrincipalCommand(_PrincipalCommand):
    """Give a principal another role, or a new secret (its earlier tokens stop working)."""

    op: Literal["alter_principal"] = "alter_principal"
    name: str
    role: PrincipalRole | None = None
    secret_hash: SecretHash | None = Field(default=None, repr=False)
    if_exists: bool = False

    def entries_for(  # noqa: D102
        self, ctx: UpdateContext, found: PrincipalDescriptor
    ) -> list[EntryBase]:
        changes: dict[str, object] = {}
        if self.role is not None and self.role != found.role:
            changes["role"] = self.role
        if self.secret_hash is not None:
            changes["secret_hash"] = self.secret_hash
            changes["credential_version"] = found.credential_version + 1
        if not changes:
            return []
        return [AlterPrincipalEntry(principal=found.model_copy(update=changes))]


class DropPrincipalCommand(_PrincipalCommand):
    """Remove a principal: from its version on, none of its tokens is accepted."""

    op: Literal["drop_principal"] = "drop_principal"
    name: str
    if_exists: bool = False

    def entries_for(  # noqa: D102
        self, ctx: UpdateContext, found: PrincipalDescriptor
    ) -> list[EntryBase]:
        return [DropPrincipalEntry(principal_id=found.id)]

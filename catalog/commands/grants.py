"""``GRANT`` and ``REVOKE``: privileges on objects, to principals and roles, as catalog commands.

An object is named by ``on`` and ``name`` (a table or view also by ``schema``); a grantee by
``to`` (``user``: a principal; ``role``) and ``grantee``. A role is granted as ``USAGE`` on it
(``on: role``). Both commands take several privileges at once; granting what is already held,
or revoking what is not, changes nothing. Grants are kept by the ids of their object and
grantee, so a rename keeps them, and a drop takes them away (``catalog.prepare``).

Whether the caller may grant is decided where the caller is known (the server: ``MANAGE_GRANTS``
on the object); these commands check what the catalog alone can: that the object, the
grantee and the privilege fit, that roles form no cycle, and that the catalog keeps an owner.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from catalog.access import held_roles
from catalog.catalog import Catalog
from catalog.commands.base import CommandBase, UpdateContext
from catalog.descriptors import (
    CATALOG_ID,
    GrantDescriptor,
    GranteeKind,
    Privilege,
    SecurableKind,
)
from catalog.descriptors.grants import PRIVILEGES_ON
from catalog.entries import DropGrantEntry, EntryBase, NewGrantEntry, ObjectIdGenUpdateEntry
from catalog.errors import ErrorCode, ValidationError
from catalog.storage.grants import grant_key


class _GrantCommand(CommandBase):
    """What a grant and a revoke share: privileges, an object and a grantee."""

    privileges: tuple[Privilege, ...] = Field(min_length=1, max_length=len(Privilege))
    on: SecurableKind
    schema_: str | None = Field(default=None, alias="schema")
    name: str | None = None
    to: GranteeKind
    grantee: str

    @model_validator(mode="after")
    def _fits(self) -> _GrantCommand:
        needs_name = self.on is not SecurableKind.CATALOG
        if needs_name != (self.name is not None):
            raise ValidationError(
                f"a grant on {self.on} {'needs' if needs_name else 'takes no'} name"
            )
        in_schema = self.on in (SecurableKind.TABLE, SecurableKind.VIEW)
        if in_schema != (self.schema_ is not None):
            raise ValidationError(
                f"a grant on {self.on} {'needs' if in_schema else 'takes no'} schema"
            )
        refused = sorted(set(self.privileges) - PRIVILEGES_ON[self.on])
        if refused:
            raise ValidationError(
                f"{', '.join(refused)} cannot be granted on a {self.on}; it may be granted "
                f"{', '.join(sorted(PRIVILEGES_ON[self.on]))}"
            )
        return self

    def securable_id(self, catalog: Catalog) -> int:
        """Return the id of the object named (SCHEMA/TABLE/VIEW/ROLE_NOT_FOUND if missing)."""
        kind, name = self.on, self.name or ""
        if kind is SecurableKind.CATALOG:
            return CATALOG_ID
        if kind is SecurableKind.SCHEMA:
            return catalog.schema(name).id
        if kind is SecurableKind.ROLE:
            return catalog.role(name).id
        schema = self.schema_ or ""
        if kind is SecurableKind.TABLE:
            return catalog.table(schema, name).id
        return catalog.view(schema, name).id

    def grantee_id(self, catalog: Catalog) -> int:
        """Return the id of the grantee named (PRINCIPAL/ROLE_NOT_FOUND if missing)."""
        if self.to is GranteeKind.USER:
            return catalog.principal(self.grantee).id
        return catalog.role(self.grantee).id

    def keys(
        self, catalog: Catalog
    ) -> list[tuple[Privilege, SecurableKind, int, GranteeKind, int]]:
        """Return what each privilege's grant is, as ``grant_key`` tells grants apart."""
        on_id, to_id = self.securable_id(catalog), self.grantee_id(catalog)
        return [(p, self.on, on_id, self.to, to_id) for p in dict.fromkeys(self.privileges)]


class GrantCommand(_GrantCommand):
    """``GRANT privileges ON object TO USER|ROLE grantee`` (a role: ``GRANT ROLE r TO ...``).

    With ``if_created``, the grant is made only when the object was created by an earlier
    command of the same batch: how the server makes a creator the owner of what it created,
    and not of what ``IF NOT EXISTS`` found already there.
    """

    op: Literal["grant"] = "grant"
    if_created: bool = False

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        catalog = ctx.catalog
        keys = self.keys(catalog)
        if self.if_created and object_exists(ctx.base, self.on, keys[0][2]):
            return []
        if self.on is SecurableKind.ROLE:
            _refuse_cycle(catalog, keys[0][2], self.to, keys[0][4], self.name or "", self.grantee)
        entries: list[EntryBase] = []
        next_id = catalog.object_id_gen
        for privilege, on, on_id, to, to_id in keys:
            if (privilege, on, on_id, to, to_id) in catalog.access.by_key:
                continue
            grant = GrantDescriptor(
                id=next_id, privilege=privilege, on=on, on_id=on_id, to=to, to_id=to_id
            )
            entries.append(NewGrantEntry(grant=grant))
            next_id += 1
        if entries:
            entries.append(ObjectIdGenUpdateEntry(delta=next_id - catalog.object_id_gen))
        return entries


class RevokeCommand(_GrantCommand):
    """``REVOKE privileges ON object FROM USER|ROLE grantee``."""

    op: Literal["revoke"] = "revoke"

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        catalog = ctx.catalog
        by_key = catalog.access.by_key
        entries: list[EntryBase] = []
        for key in self.keys(catalog):
            grant_id = by_key.get(key)
            if grant_id is not None:
                refuse_last_catalog_owner(catalog, catalog.grant_by_id(grant_id), {grant_id})
                entries.append(DropGrantEntry(grant_id=grant_id))
        return entries


def object_exists(catalog: Catalog, kind: SecurableKind, object_id: int) -> bool:
    """Return whether ``catalog`` holds the object grants name by ``kind`` and ``object_id``."""
    if kind is SecurableKind.CATALOG:
        return True
    if kind is SecurableKind.SCHEMA:
        return catalog.find_schema_by_id(object_id) is not None
    if kind is SecurableKind.TABLE:
        return catalog.find_table_by_id(object_id) is not None
    if kind is SecurableKind.VIEW:
        return catalog.find_view_by_id(object_id) is not None
    return object_id in catalog.access.roles


def _refuse_cycle(
    catalog: Catalog, role_id: int, to: GranteeKind, to_id: int, role: str, grantee: str
) -> None:
    """Refuse granting role ``role_id`` to role ``to_id`` if that one is, or holds, it."""
    if to is not GranteeKind.ROLE:
        return
    if to_id == role_id or to_id in held_roles(catalog.access, [(GranteeKind.ROLE, role_id)]):
        raise ValidationError(
            f"granting role {role} to role {grantee} would make a cycle: "
            + ("a role cannot hold itself" if to_id == role_id else f"{role} holds {grantee}"),
            code=ErrorCode.ROLE_CYCLE,
        )


def refuse_last_catalog_owner(catalog: Catalog, grant: GrantDescriptor, removed: set[int]) -> None:
    """Refuse removing ``grant`` if it is among the catalog's last ``OWNERSHIP`` grants.

    ``removed`` is every grant the same change removes. A catalog nobody was made owner of
    may stay so (the admin role holds every privilege); once it has owners, one stays.

    Raises:
        ValidationError: LAST_CATALOG_OWNER.
    """
    if grant_key(grant)[:3] != (Privilege.OWNERSHIP, SecurableKind.CATALOG, CATALOG_ID):
        return
    owners = catalog.access.on.get((SecurableKind.CATALOG, CATALOG_ID), ())
    left = [
        i
        for i in owners
        if i not in removed and catalog.access.grants[i].privilege is Privilege.OWNERSHIP
    ]
    if not left:
        raise ValidationError(
            "the catalog would have no owner left: grant OWNERSHIP ON CATALOG to another "
            "principal or role first",
            code=ErrorCode.LAST_CATALOG_OWNER,
        )

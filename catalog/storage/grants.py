"""``Access``: a catalog version's roles and grants, found by id, by object and by grantee.

Persistent maps that versions share until a role or grant changes. Grants are found three
ways: by id (entries remove them so), by the object they are on (an access check looks at an
object and what holds it), and by grantee (a role's members, a principal's roles). Each
lookup is one map read, so a check costs a handful of them however many grants there are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from immutables import Map

from catalog.descriptors.grants import GrantDescriptor, GranteeKind, Privilege, SecurableKind
from catalog.descriptors.roles import RoleDescriptor

Securable = tuple[SecurableKind, int]
Grantee = tuple[GranteeKind, int]
GrantKey = tuple[Privilege, SecurableKind, int, GranteeKind, int]
"""What makes a grant the same grant: privilege, object and grantee."""


def grant_key(grant: GrantDescriptor) -> GrantKey:
    """Return what tells ``grant`` apart from every other grant."""
    return grant.privilege, grant.on, grant.on_id, grant.to, grant.to_id


_Index = Map[Any, tuple[int, ...]]


def _added(index: _Index, key: Any, grant_id: int) -> _Index:
    return index.set(key, (*index.get(key, ()), grant_id))


def _removed(index: _Index, key: Any, grant_id: int) -> _Index:
    left = tuple(i for i in index.get(key, ()) if i != grant_id)
    return index.set(key, left) if left else index.delete(key)


@dataclass(frozen=True, slots=True)
class Access:
    """Every role and grant of one catalog version.

    ``memo`` keeps what access checks work out from these grants (a caller's roles), shared
    by every version that shares this object; it is not part of the value.
    """

    roles: Map[int, RoleDescriptor]
    role_by_name: Map[str, int]
    grants: Map[int, GrantDescriptor]
    on: Map[Securable, tuple[int, ...]]
    to: Map[Grantee, tuple[int, ...]]
    by_key: Map[GrantKey, int]
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, roles: list[RoleDescriptor], grants: list[GrantDescriptor]) -> Access:
        """Return the set holding ``roles`` and ``grants``.

        Raises:
            ValueError: two roles share an id or name, or two grants an id or a meaning.
        """
        found = cls(
            Map({r.id: r for r in roles}), Map({r.name: r.id for r in roles}), *_no_grants()
        )
        if not len(found.roles) == len(found.role_by_name) == len(roles):
            raise ValueError("duplicate role ids or names")
        for grant in grants:
            if grant.id in found.grants or grant_key(grant) in found.by_key:
                raise ValueError("duplicate grant ids or grants")
            found = found.with_grant(grant)
        return found

    def with_role(self, role: RoleDescriptor) -> Access:
        """Return the set with ``role`` added or replaced by id."""
        by_name = self.role_by_name
        old = self.roles.get(role.id)
        if old is not None:
            by_name = by_name.delete(old.name)
        roles = self.roles.set(role.id, role)
        return Access(roles, by_name.set(role.name, role.id), *self._grant_maps())

    def without_role(self, role: RoleDescriptor) -> Access:
        """Return the set without ``role`` (its grants are removed by their own entries)."""
        by_name = self.role_by_name.delete(role.name)
        return Access(self.roles.delete(role.id), by_name, *self._grant_maps())

    def with_grant(self, grant: GrantDescriptor) -> Access:
        """Return the set with ``grant`` added (or replaced by id)."""
        old = self.grants.get(grant.id)
        if old is not None and grant_key(old) == grant_key(grant):
            # A restamp keeps the grant's place in ``on`` and ``to`` (oldest first), as a
            # catalog decoded from a snapshot has it: who-can's paths are the same on every node.
            grants = self.grants.set(grant.id, grant)
            return Access(self.roles, self.role_by_name, grants, self.on, self.to, self.by_key)
        access = self if old is None else self.without_grant(grant)
        return Access(
            access.roles,
            access.role_by_name,
            access.grants.set(grant.id, grant),
            _added(access.on, grant.securable, grant.id),
            _added(access.to, grant.grantee, grant.id),
            access.by_key.set(grant_key(grant), grant.id),
        )

    def without_grant(self, grant: GrantDescriptor) -> Access:
        """Return the set without ``grant``."""
        old = self.grants[grant.id]
        return Access(
            self.roles,
            self.role_by_name,
            self.grants.delete(old.id),
            _removed(self.on, old.securable, old.id),
            _removed(self.to, old.grantee, old.id),
            self.by_key.delete(grant_key(old)),
        )

    def _grant_maps(self) -> tuple[Map[int, GrantDescriptor], _Index, _Index, Map[GrantKey, int]]:
        return self.grants, self.on, self.to, self.by_key

    def grants_on(self, securable: Securable) -> list[GrantDescriptor]:
        """Return the grants on ``securable``, oldest first."""
        return [self.grants[i] for i in self.on.get(securable, ())]

    def grants_to(self, grantee: Grantee) -> list[GrantDescriptor]:
        """Return the grants to ``grantee``, oldest first."""
        return [self.grants[i] for i in self.to.get(grantee, ())]


def _no_grants() -> tuple[Map[int, GrantDescriptor], _Index, _Index, Map[GrantKey, int]]:
    return Map(), Map(), Map(), Map()


NO_ACCESS = Access(Map(), Map(), *_no_grants())

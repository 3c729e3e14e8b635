"""``GrantReads``: how a catalog version finds, lists and changes its roles and grants."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalog.descriptors.grants import GrantDescriptor
from catalog.descriptors.roles import RoleDescriptor
from catalog.errors import ErrorCode
from catalog.storage.grants import Access
from catalog.storage.namespaces import Namespaces
from catalog.storage.relations import found_or_raise


class GrantReads:
    """The role and grant reads and changes of ``Catalog`` (which holds the slots named here)."""

    __slots__ = ()

    _names: Namespaces

    if TYPE_CHECKING:  # ``Catalog`` has it

        def _replace(self, **changes: Any) -> Any: ...

    @property
    def access(self) -> Access:
        """Return every role and grant, with the lookups access checks use."""
        return self._names.access

    def roles(self) -> list[RoleDescriptor]:
        """Return every role, ordered by id."""
        found = self._names.access.roles
        return [found[i] for i in sorted(found)]

    def find_role(self, name: str) -> RoleDescriptor | None:
        """Return the role named ``name``, or None."""
        access = self._names.access
        role_id = access.role_by_name.get(name)
        return None if role_id is None else access.roles[role_id]

    def role(self, name: str) -> RoleDescriptor:
        """Return the role named ``name``.

        Raises:
            NotFoundError: ROLE_NOT_FOUND.
        """
        return found_or_raise(self.find_role(name), f"role {name}", ErrorCode.ROLE_NOT_FOUND)

    def role_by_id(self, role_id: int) -> RoleDescriptor:
        """Return the role with id ``role_id``.

        Raises:
            NotFoundError: ROLE_NOT_FOUND.
        """
        found = self._names.access.roles.get(role_id)
        return found_or_raise(found, f"role with id {role_id}", ErrorCode.ROLE_NOT_FOUND)

    def grants(self) -> list[GrantDescriptor]:
        """Return every grant, ordered by id."""
        found = self._names.access.grants
        return [found[i] for i in sorted(found)]

    def grant_by_id(self, grant_id: int) -> GrantDescriptor:
        """Return the grant with id ``grant_id``.

        Raises:
            NotFoundError: GRANT_NOT_FOUND.
        """
        found = self._names.access.grants.get(grant_id)
        return found_or_raise(found, f"grant with id {grant_id}", ErrorCode.GRANT_NOT_FOUND)

    def with_role(self, role: RoleDescriptor) -> Any:
        """Return a copy with ``role`` added or replaced (by id)."""
        names = self._names
        return self._replace(_names=names.with_access(names.access.with_role(role)))

    def without_role(self, role_id: int) -> Any:
        """Return a copy without role ``role_id`` (ROLE_NOT_FOUND if none)."""
        names = self._names
        removed = names.access.without_role(self.role_by_id(role_id))
        return self._replace(_names=names.with_access(removed))

    def with_grant(self, grant: GrantDescriptor) -> Any:
        """Return a copy with ``grant`` added or replaced (by id)."""
        names = self._names
        return self._replace(_names=names.with_access(names.access.with_grant(grant)))

    def without_grant(self, grant_id: int) -> Any:
        """Return a copy without grant ``grant_id`` (GRANT_NOT_FOUND if none)."""
        names = self._names
        removed = names.access.without_grant(self.grant_by_id(grant_id))
        return self._replace(_names=names.with_access(removed))

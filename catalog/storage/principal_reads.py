"""``PrincipalReads``: how a catalog version finds, lists and changes its principals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalog.descriptors.principals import PrincipalDescriptor
from catalog.errors import ErrorCode
from catalog.storage.namespaces import Namespaces
from catalog.storage.relations import found_or_raise


class PrincipalReads:
    """The principal reads and changes of ``Catalog`` (which holds the slots named here)."""

    __slots__ = ()

    _names: Namespaces

    if TYPE_CHECKING:  # ``Catalog`` has it

        def _replace(self, **changes: Any) -> Any: ...

    def principals(self) -> list[PrincipalDescriptor]:
        """Return every principal, ordered by id."""
        found = self._names.principals.by_id
        return [found[i] for i in sorted(found)]

    def find_principal(self, name: str) -> PrincipalDescriptor | None:
        """Return the principal named ``name``, or None."""
        found = self._names.principals
        principal_id = found.by_name.get(name)
        return None if principal_id is None else found.by_id[principal_id]

    def principal(self, name: str) -> PrincipalDescriptor:
        """Return the principal named ``name``.

        Raises:
            NotFoundError: PRINCIPAL_NOT_FOUND.
        """
        found = self.find_principal(name)
        return found_or_raise(found, f"principal {name}", ErrorCode.PRINCIPAL_NOT_FOUND)

    def find_principal_by_client(self, client_id: str) -> PrincipalDescriptor | None:
        """Return the principal whose client id is ``client_id``, or None."""
        found = self._names.principals
        principal_id = found.by_client.get(client_id)
        return None if principal_id is None else found.by_id[principal_id]

    def find_principal_by_id(self, principal_id: int) -> PrincipalDescriptor | None:
        """Return the principal with id ``principal_id``, or None."""
        return self._names.principals.by_id.get(principal_id)

    def principal_by_id(self, principal_id: int) -> PrincipalDescriptor:
        """Return the principal with id ``principal_id``.

        Raises:
            NotFoundError: PRINCIPAL_NOT_FOUND.
        """
        found = self.find_principal_by_id(principal_id)
        return found_or_raise(
            found, f"principal with id {principal_id}", ErrorCode.PRINCIPAL_NOT_FOUND
        )

    def with_principal(self, principal: PrincipalDescriptor) -> Any:
        """Return a copy with ``principal`` added or replaced (by id)."""
        names = self._names
        return self._replace(_names=names.with_principals(names.principals.put(principal)))

    def without_principal(self, principal_id: int) -> Any:
        """Return a copy without principal ``principal_id`` (PRINCIPAL_NOT_FOUND if none)."""
        names = self._names
        removed = names.principals.remove(self.principal_by_id(principal_id))
        return self._replace(_names=names.with_principals(removed))

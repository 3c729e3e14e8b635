"""``Principals``: a catalog version's service principals, by id, name and client id.

Few (a principal per pipeline or engine), so persistent maps that versions share until one
changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from immutables import Map

from catalog.descriptors.principals import PrincipalDescriptor


@dataclass(frozen=True, slots=True)
class Principals:
    """Every principal of one catalog version, found by id, by name and by client id."""

    by_id: Map[int, PrincipalDescriptor]
    by_name: Map[str, int]
    by_client: Map[str, int]

    @classmethod
    def of(cls, principals: list[PrincipalDescriptor]) -> Principals:
        """Return the set holding ``principals``.

        Raises:
            ValueError: two of them share an id, a name or a client id.
        """
        found = cls(
            Map({p.id: p for p in principals}),
            Map({p.name: p.id for p in principals}),
            Map({p.client_id: p.id for p in principals}),
        )
        if not len(found.by_id) == len(found.by_name) == len(found.by_client) == len(principals):
            raise ValueError("duplicate principal ids, names or client ids")
        return found

    def put(self, principal: PrincipalDescriptor) -> Principals:
        """Return the set with ``principal`` added or replaced by id."""
        by_name, by_client = self.by_name, self.by_client
        old = self.by_id.get(principal.id)
        if old is not None:
            by_name, by_client = by_name.delete(old.name), by_client.delete(old.client_id)
        return Principals(
            self.by_id.set(principal.id, principal),
            by_name.set(principal.name, principal.id),
            by_client.set(principal.client_id, principal.id),
        )

    def remove(self, principal: PrincipalDescriptor) -> Principals:
        """Return the set without ``principal``."""
        return Principals(
            self.by_id.delete(principal.id),
            self.by_name.delete(principal.name),
            self.by_client.delete(principal.client_id),
        )


NO_PRINCIPALS = Principals(Map(), Map(), Map())

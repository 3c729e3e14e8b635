"""``Namespaces``: a catalog's named objects other than tables and indexes, by id and name.

Tables and indexes, which can number millions, live in the ``RelationStore`` instead; these
are fewer, so they sit in persistent hash maps that versions share until one of them changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from immutables import Map

from catalog.descriptors import (
    GrantDescriptor,
    PrincipalDescriptor,
    RoleDescriptor,
    SchemaDescriptor,
    SystemViewDescriptor,
    ViewDescriptor,
    ZoneDescriptor,
)
from catalog.storage.grants import NO_ACCESS, Access
from catalog.storage.principals import NO_PRINCIPALS, Principals

EMPTY: Map[Any, Any] = Map()
"""The empty persistent map (maps are immutable, so every empty one can be this one)."""

_Named = TypeVar("_Named", SchemaDescriptor, ZoneDescriptor)


@dataclass(frozen=True, slots=True)
class Namespaces:
    """A catalog's schemas, zones, views, principals, roles and grants, by id and by name.

    One object that versions share until one of them changes (most DDL changes tables only),
    so that each kept version costs one slot for them. System views all live in ``SYSTEM``
    and are found by name; a view by its schema's id and its name.
    """

    schemas: Map[int, SchemaDescriptor]
    schema_by_name: Map[str, int]
    zones: Map[int, ZoneDescriptor]
    zone_by_name: Map[str, int]
    system_views: Map[str, SystemViewDescriptor] = EMPTY
    views: Map[int, ViewDescriptor] = EMPTY
    view_by_name: Map[tuple[int, str], int] = EMPTY
    principals: Principals = NO_PRINCIPALS
    access: Access = NO_ACCESS

    @classmethod
    def of(
        cls,
        schemas: Iterable[SchemaDescriptor],
        zones: Iterable[ZoneDescriptor],
        *,
        system_views: Iterable[SystemViewDescriptor] = (),
        views: Iterable[ViewDescriptor] = (),
        principals: Iterable[PrincipalDescriptor] = (),
        roles: Iterable[RoleDescriptor] = (),
        grants: Iterable[GrantDescriptor] = (),
    ) -> Namespaces:
        """Return the namespaces holding these objects.

        Raises:
            ValueError: two objects of a kind share an id or a name (or, for grants, a
                meaning).
        """
        schemas, zones, views = list(schemas), list(zones), list(views)
        found = cls(
            Map({s.id: s for s in schemas}),
            Map({s.name: s.id for s in schemas}),
            Map({z.id: z for z in zones}),
            Map({z.name: z.id for z in zones}),
            Map({v.name: v for v in system_views}),
            Map({v.id: v for v in views}),
            Map({(v.schema_id, v.name): v.id for v in views}),
            Principals.of(list(principals)),
            Access.of(list(roles), list(grants)),
        )
        sizes = [
            (len(found.schemas), len(found.schema_by_name), len(schemas), "schema"),
            (len(found.zones), len(found.zone_by_name), len(zones), "zone"),
            (len(found.views), len(found.view_by_name), len(views), "view"),
        ]
        for by_id, by_name, given, kind in sizes:
            if not by_id == by_name == given:
                raise ValueError(f"duplicate {kind} ids or names")
        return found

    # Built directly rather than with ``dataclasses.replace``: every applied change of a
    # schema, zone or view makes one.

    def with_schemas(
        self, schemas: Map[int, SchemaDescriptor], by_name: Map[str, int]
    ) -> Namespaces:
        """Return these namespaces with other schemas."""
        return Namespaces(
            schemas,
            by_name,
            self.zones,
            self.zone_by_name,
            self.system_views,
            self.views,
            self.view_by_name,
            self.principals,
            self.access,
        )

    def with_zones(self, zones: Map[int, ZoneDescriptor], by_name: Map[str, int]) -> Namespaces:
        """Return these namespaces with other zones."""
        return Namespaces(
            self.schemas,
            self.schema_by_name,
            zones,
            by_name,
            self.system_views,
            self.views,
            self.view_by_name,
            self.principals,
            self.access,
        )

    def with_system_views(self, views: Map[str, SystemViewDescriptor]) -> Namespaces:
        """Return these namespaces with other system views."""
        return Namespaces(
            self.schemas,
            self.schema_by_name,
            self.zones,
            self.zone_by_name,
            views,
            self.views,
            self.view_by_name,
            self.principals,
            self.access,
        )

    def with_views(
        self, views: Map[int, ViewDescriptor], by_name: Map[tuple[int, str], int]
    ) -> Namespaces:
        """Return these namespaces with other views."""
        return Namespaces(
            self.schemas,
            self.schema_by_name,
            self.zones,
            self.zone_by_name,
            self.system_views,
            views,
            by_name,
            self.principals,
            self.access,
        )

    def with_principals(self, principals: Principals) -> Namespaces:
        """Return these namespaces with other principals."""
        return Namespaces(
            self.schemas,
            self.schema_by_name,
            self.zones,
            self.zone_by_name,
            self.system_views,
            self.views,
            self.view_by_name,
            principals,
            self.access,
        )

    def with_access(self, access: Access) -> Namespaces:
        """Return these namespaces with other roles and grants."""
        return Namespaces(
            self.schemas,
            self.schema_by_name,
            self.zones,
            self.zone_by_name,
            self.system_views,
            self.views,
            self.view_by_name,
            self.principals,
            access,
        )

    def with_view(self, view: ViewDescriptor) -> Namespaces:
        """Return these namespaces with ``view`` added or replaced (a rename frees its name)."""
        views, by_name = self.views, self.view_by_name
        old = views.get(view.id)
        if old is not None:
            by_name = by_name.delete((old.schema_id, old.name))
        by_name = by_name.set((view.schema_id, view.name), view.id)
        return self.with_views(views.set(view.id, view), by_name)

    def without_view(self, view: ViewDescriptor) -> Namespaces:
        """Return these namespaces without ``view``."""
        by_name = self.view_by_name.delete((view.schema_id, view.name))
        return self.with_views(self.views.delete(view.id), by_name)


def put_named(
    by_id: Map[int, _Named], by_name: Map[str, int], item: _Named
) -> tuple[Map[int, _Named], Map[str, int]]:
    """Return both maps with ``item`` added or replaced by id (a rename frees its old name)."""
    old = by_id.get(item.id)
    if old is not None and old.name != item.name:
        by_name = by_name.delete(old.name)
    return by_id.set(item.id, item), by_name.set(item.name, item.id)

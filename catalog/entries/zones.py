"""Update entries for distribution zones."""

from __future__ import annotations

from typing import ClassVar, Literal

from catalog.catalog import Catalog
from catalog.descriptors import Descriptor, ZoneDescriptor
from catalog.entries.base import ZONES, EntryBase, PutEntry, RemoveEntry
from catalog.events import CatalogEvent


class _PutZoneEntry(PutEntry):
    """A zone's whole descriptor, put in place of any zone of its id."""

    zone: ZoneDescriptor
    kind = ZONES


class NewZoneEntry(_PutZoneEntry):
    """Add a zone."""

    type: Literal["new_zone"] = "new_zone"
    event: ClassVar[CatalogEvent | None] = CatalogEvent.ZONE_CREATE


class AlterZoneEntry(_PutZoneEntry):
    """Replace a zone (matched by id) with its new descriptor; renames use it too."""

    type: Literal["alter_zone"] = "alter_zone"
    event: ClassVar[CatalogEvent | None] = CatalogEvent.ZONE_ALTER


class DropZoneEntry(RemoveEntry):
    """Remove a zone that holds no tables and is not the default."""

    type: Literal["drop_zone"] = "drop_zone"
    zone_id: int
    event: ClassVar[CatalogEvent | None] = CatalogEvent.ZONE_DROP
    kind = ZONES


class SetDefaultZoneEntry(EntryBase):
    """Make a zone the default for tables created without one (the zone itself is unchanged)."""

    type: Literal["set_default_zone"] = "set_default_zone"
    zone_id: int
    event: ClassVar[CatalogEvent | None] = CatalogEvent.SET_DEFAULT_ZONE

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        return catalog.with_default_zone(self.zone_id)

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:  # noqa: D102
        return after.zone_by_id(self.zone_id)

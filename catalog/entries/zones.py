"""Update entries for distribution zones."""

from __future__ import annotations

from typing import Literal

from catalog.catalog import Catalog
from catalog.descriptors import Descriptor, ZoneDescriptor
from catalog.entries.base import ZONES, EntryBase, PutEntry, RemoveEntry
from catalog.events import CatalogEvent


class _PutZoneEntry(PutEntry, kind=ZONES):
    """A zone's whole descriptor, put in place of any zone of its id."""

    zone: ZoneDescriptor


class NewZoneEntry(_PutZoneEntry, event=CatalogEvent.ZONE_CREATE):
    """Add a zone."""

    type: Literal["new_zone"] = "new_zone"


class AlterZoneEntry(_PutZoneEntry, event=CatalogEvent.ZONE_ALTER):
    """Replace a zone (matched by id) with its new descriptor; renames use it too."""

    type: Literal["alter_zone"] = "alter_zone"


class DropZoneEntry(RemoveEntry, event=CatalogEvent.ZONE_DROP, kind=ZONES):
    """Remove a zone that holds no tables and is not the default."""

    type: Literal["drop_zone"] = "drop_zone"
    zone_id: int


class SetDefaultZoneEntry(EntryBase, event=CatalogEvent.SET_DEFAULT_ZONE):
    """Make a zone the default for tables created without one (the zone itself is unchanged)."""

    type: Literal["set_default_zone"] = "set_default_zone"
    zone_id: int

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        return catalog.with_default_zone(self.zone_id)

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:  # noqa: D102
        return after.zone_by_id(self.zone_id)

"""Update entries for system views."""

from __future__ import annotations

from typing import ClassVar, Literal

from catalog.catalog import Catalog
from catalog.descriptors import Descriptor, SystemViewDescriptor
from catalog.entries.base import EntryBase
from catalog.events import CatalogEvent


class NewSystemViewEntry(EntryBase):
    """Register a system view, in place of any view of its name."""

    type: Literal["new_system_view"] = "new_system_view"
    system_view: SystemViewDescriptor
    event: ClassVar[CatalogEvent | None] = CatalogEvent.SYSTEM_VIEW_CREATE

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        return catalog.with_system_view(self.system_view)

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:  # noqa: D102
        return self.system_view

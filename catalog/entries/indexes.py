"""Update entries for indexes and their lifecycle."""

from __future__ import annotations

from typing import ClassVar, Literal

from catalog.catalog import Catalog
from catalog.descriptors import Descriptor, IndexDescriptor, IndexStatus
from catalog.entries.base import EntryBase
from catalog.events import CatalogEvent


class NewIndexEntry(EntryBase):
    """Add an index."""

    type: Literal["new_index"] = "new_index"
    index: IndexDescriptor
    event: ClassVar[CatalogEvent | None] = CatalogEvent.INDEX_CREATE

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        return catalog.with_index(self.index)

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:  # noqa: D102
        return self.index


class _IndexAlterEntry(EntryBase):
    index_id: int

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:
        return after.index_by_id(self.index_id)


class _IndexStatusEntry(_IndexAlterEntry):
    to_status: ClassVar[IndexStatus]

    def apply(self, catalog: Catalog) -> Catalog:
        index = catalog.index_by_id(self.index_id)
        return catalog.with_index(index.model_copy(update={"status": self.to_status}))


class StartBuildingIndexEntry(_IndexStatusEntry):
    """REGISTERED → BUILDING."""

    type: Literal["start_building_index"] = "start_building_index"
    to_status: ClassVar[IndexStatus] = IndexStatus.BUILDING
    event: ClassVar[CatalogEvent | None] = CatalogEvent.INDEX_BUILDING


class MakeIndexAvailableEntry(_IndexStatusEntry):
    """BUILDING → AVAILABLE."""

    type: Literal["make_index_available"] = "make_index_available"
    to_status: ClassVar[IndexStatus] = IndexStatus.AVAILABLE
    event: ClassVar[CatalogEvent | None] = CatalogEvent.INDEX_AVAILABLE


class DropIndexEntry(_IndexStatusEntry):
    """AVAILABLE → STOPPING: the index gives up its name and is no longer read by new work."""

    type: Literal["drop_index"] = "drop_index"
    to_status: ClassVar[IndexStatus] = IndexStatus.STOPPING
    event: ClassVar[CatalogEvent | None] = CatalogEvent.INDEX_STOPPING


class RemoveIndexEntry(EntryBase):
    """Remove an index from the catalog."""

    type: Literal["remove_index"] = "remove_index"
    index_id: int
    event: ClassVar[CatalogEvent | None] = CatalogEvent.INDEX_REMOVED

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        return catalog.without_index(self.index_id)

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:  # noqa: D102
        return before.index_by_id(self.index_id)


class RenameIndexEntry(_IndexAlterEntry):
    """Rename an index."""

    type: Literal["rename_index"] = "rename_index"
    new_name: str
    event: ClassVar[CatalogEvent | None] = CatalogEvent.INDEX_RENAME

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        index = catalog.index_by_id(self.index_id)
        return catalog.with_index(index.model_copy(update={"name": self.new_name}))

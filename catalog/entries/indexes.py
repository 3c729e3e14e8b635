"""Update entries for indexes and their lifecycle."""

from __future__ import annotations

from typing import ClassVar, Literal

from catalog.descriptors import IndexDescriptor, IndexStatus
from catalog.entries.base import INDEXES, ChangeEntry, PutEntry, RemoveEntry
from catalog.events import CatalogEvent


class NewIndexEntry(PutEntry):
    """Add an index."""

    type: Literal["new_index"] = "new_index"
    index: IndexDescriptor
    event: ClassVar[CatalogEvent | None] = CatalogEvent.INDEX_CREATE
    kind = INDEXES


class _IndexAlterEntry(ChangeEntry):
    index_id: int
    kind = INDEXES


class _IndexStatusEntry(_IndexAlterEntry):
    to_status: ClassVar[IndexStatus]

    def changed(self, index: IndexDescriptor) -> IndexDescriptor:
        return index.model_copy(update={"status": self.to_status})


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


class RemoveIndexEntry(RemoveEntry):
    """Remove an index from the catalog."""

    type: Literal["remove_index"] = "remove_index"
    index_id: int
    event: ClassVar[CatalogEvent | None] = CatalogEvent.INDEX_REMOVED
    kind = INDEXES


class RenameIndexEntry(_IndexAlterEntry):
    """Rename an index."""

    type: Literal["rename_index"] = "rename_index"
    new_name: str
    event: ClassVar[CatalogEvent | None] = CatalogEvent.INDEX_RENAME

    def changed(self, index: IndexDescriptor) -> IndexDescriptor:  # noqa: D102
        return index.model_copy(update={"name": self.new_name})

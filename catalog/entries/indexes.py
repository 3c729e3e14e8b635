"""Update entries for indexes and their lifecycle."""

from __future__ import annotations

from typing import ClassVar, Literal

from catalog.descriptors import IndexDescriptor, IndexStatus
from catalog.entries.base import INDEXES, ChangeEntry, PutEntry, RemoveEntry
from catalog.events import CatalogEvent


class NewIndexEntry(PutEntry, event=CatalogEvent.INDEX_CREATE, kind=INDEXES):
    """Add an index."""

    type: Literal["new_index"] = "new_index"
    index: IndexDescriptor


class _IndexAlterEntry(ChangeEntry, kind=INDEXES):
    index_id: int


class RenameIndexEntry(_IndexAlterEntry, event=CatalogEvent.INDEX_RENAME):
    """Rename an index."""

    type: Literal["rename_index"] = "rename_index"
    new_name: str

    def changed(self, index: IndexDescriptor) -> IndexDescriptor:  # noqa: D102
        return index.model_copy(update={"name": self.new_name})


class _IndexStatusEntry(_IndexAlterEntry):
    """Move an index to the status named by the class keyword ``to_status``."""

    to_status: ClassVar[IndexStatus]

    def changed(self, index: IndexDescriptor) -> IndexDescriptor:
        return index.model_copy(update={"status": self.to_status})


class StartBuildingIndexEntry(
    _IndexStatusEntry, to_status=IndexStatus.BUILDING, event=CatalogEvent.INDEX_BUILDING
):
    """REGISTERED → BUILDING."""

    type: Literal["start_building_index"] = "start_building_index"


class MakeIndexAvailableEntry(
    _IndexStatusEntry, to_status=IndexStatus.AVAILABLE, event=CatalogEvent.INDEX_AVAILABLE
):
    """BUILDING → AVAILABLE."""

    type: Literal["make_index_available"] = "make_index_available"


class DropIndexEntry(
    _IndexStatusEntry, to_status=IndexStatus.STOPPING, event=CatalogEvent.INDEX_STOPPING
):
    """AVAILABLE → STOPPING: the index gives up its name and is no longer read by new work."""

    type: Literal["drop_index"] = "drop_index"


class RemoveIndexEntry(RemoveEntry, event=CatalogEvent.INDEX_REMOVED, kind=INDEXES):
    """Remove an index from the catalog."""

    type: Literal["remove_index"] = "remove_index"
    index_id: int

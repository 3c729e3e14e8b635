"""Update entries for views."""

from __future__ import annotations

from typing import Literal

from catalog.descriptors import ViewDescriptor
from catalog.descriptors.views import ViewLogEntry, ViewSchema, ViewVersion, trimmed_log
from catalog.entries.base import VIEWS, ChangeEntry, PutEntry, RemoveEntry
from catalog.events import CatalogEvent
from catalog.properties import Properties


class NewViewEntry(PutEntry, event=CatalogEvent.VIEW_CREATE, kind=VIEWS):
    """Add a view."""

    type: Literal["new_view"] = "new_view"
    view: ViewDescriptor


class DropViewEntry(RemoveEntry, event=CatalogEvent.VIEW_DROP, kind=VIEWS):
    """Remove a view."""

    type: Literal["drop_view"] = "drop_view"
    view_id: int


class _ViewAlterEntry(ChangeEntry, event=CatalogEvent.VIEW_ALTER, kind=VIEWS):
    view_id: int


class ReplaceViewEntry(_ViewAlterEntry):
    """Change a view: add schemas and versions, forget old versions, choose the current one.

    Only what changed is held: a replace that adds one version carries that version (and
    its schema, if new), not the view's history.
    """

    type: Literal["replace_view"] = "replace_view"
    added_schemas: tuple[ViewSchema, ...] = ()
    added_versions: tuple[ViewVersion, ...] = ()
    forgotten_versions: tuple[int, ...] = ()
    """Versions no longer kept (past ``version.history.num-entries``)."""
    current_version_id: int
    log: tuple[ViewLogEntry, ...] = ()
    """When the current version changed: appended to the view's log (which then keeps only
    its newest entries of kept versions)."""
    properties_changed: bool = False
    properties: Properties = ()
    """The view's properties after the change, if ``properties_changed``."""
    location: str | None = None
    """The view's location after the change (None: unchanged)."""

    def changed(self, view: ViewDescriptor) -> ViewDescriptor:  # noqa: D102
        gone = set(self.forgotten_versions)
        versions = tuple(
            v for v in (*view.versions, *self.added_versions) if v.version_id not in gone
        )
        update: dict[str, object] = {
            "schemas": (*view.schemas, *self.added_schemas),
            "versions": versions,
            "current_version_id": self.current_version_id,
            "log": trimmed_log((*view.log, *self.log), {v.version_id for v in versions}),
        }
        if self.properties_changed:
            update["properties"] = self.properties
        if self.location is not None:
            update["location"] = self.location
        return view.model_copy(update=update)


class RenameViewEntry(_ViewAlterEntry):
    """Rename a view, or move it to another schema."""

    type: Literal["rename_view"] = "rename_view"
    schema_id: int
    new_name: str

    def changed(self, view: ViewDescriptor) -> ViewDescriptor:  # noqa: D102
        return view.model_copy(update={"schema_id": self.schema_id, "name": self.new_name})

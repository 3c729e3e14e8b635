"""``ViewReads``: how a catalog version finds and lists its views and system views.

Both live in the version's ``Namespaces``: views in persistent maps by id and by ``(schema
id, name)``, system views by name, shared between versions until one changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalog.descriptors.system_views import SystemViewDescriptor
from catalog.descriptors.views import ViewDescriptor
from catalog.errors import ErrorCode
from catalog.storage.namespaces import Namespaces
from catalog.storage.relations import found_or_raise


class ViewReads:
    """The view reads of ``Catalog`` (which holds the slots named here)."""

    __slots__ = ()

    _names: Namespaces

    if TYPE_CHECKING:  # ``Catalog`` has it

        def _replace(self, **changes: Any) -> Any: ...

    def find_system_view(self, name: str) -> SystemViewDescriptor | None:
        """Return the system view named ``name`` (in ``SYSTEM``), or None."""
        return self._names.system_views.get(name)

    def system_views(self) -> list[SystemViewDescriptor]:
        """Return all system views ordered by id."""
        return sorted(self._names.system_views.values(), key=lambda v: v.id)

    def find_view(self, schema: str, name: str) -> ViewDescriptor | None:
        """Return view ``schema.name``, or None."""
        schema_id = self._names.schema_by_name.get(schema)
        found = None if schema_id is None else self._names.view_by_name.get((schema_id, name))
        return None if found is None else self._names.views[found]

    def view(self, schema: str, name: str) -> ViewDescriptor:
        """Return view ``schema.name``.

        Raises:
            NotFoundError: SCHEMA_NOT_FOUND or VIEW_NOT_FOUND.
        """
        found = self.find_view(schema, name)
        if found is None and schema not in self._names.schema_by_name:
            found_or_raise(None, f"schema {schema}", ErrorCode.SCHEMA_NOT_FOUND)
        return found_or_raise(found, f"view {schema}.{name}", ErrorCode.VIEW_NOT_FOUND)

    def view_id(self, schema_id: int, name: str) -> int | None:
        """Return the id of the view named ``name`` in schema ``schema_id``, or None."""
        return self._names.view_by_name.get((schema_id, name))

    def find_view_by_id(self, view_id: int) -> ViewDescriptor | None:
        """Return the view with id ``view_id``, or None."""
        return self._names.views.get(view_id)

    def view_by_id(self, view_id: int) -> ViewDescriptor:
        """Return the view with id ``view_id``.

        Raises:
            NotFoundError: VIEW_NOT_FOUND.
        """
        found = self._names.views.get(view_id)
        return found_or_raise(found, f"view with id {view_id}", ErrorCode.VIEW_NOT_FOUND)

    def views(self) -> list[ViewDescriptor]:
        """Return every view, ordered by id."""
        return [self._names.views[i] for i in sorted(self._names.views)]

    def schema_views(self, schema_id: int) -> list[ViewDescriptor]:
        """Return the views of one schema, ordered by id."""
        return [v for v in self.views() if v.schema_id == schema_id]

    def with_system_view(self, view: SystemViewDescriptor) -> Any:
        """Return a copy with ``view`` added, or in place of the view of its name."""
        views = self._names.system_views.set(view.name, view)
        return self._replace(_names=self._names.with_system_views(views))

    def with_view(self, view: ViewDescriptor) -> Any:
        """Return a copy with ``view`` added or replaced (by id)."""
        return self._replace(_names=self._names.with_view(view))

    def without_view(self, view_id: int) -> Any:
        """Return a copy without view ``view_id`` (VIEW_NOT_FOUND if it has none)."""
        return self._replace(_names=self._names.without_view(self.view_by_id(view_id)))

"""``SystemViewDescriptor``: a view of the database's own state, in the ``SYSTEM`` schema."""

from __future__ import annotations

import enum

from catalog.descriptors.tables import ColumnDescriptor
from catalog.model import Model


class SystemViewType(enum.StrEnum):
    """Where a system view's rows come from (Ignite's ``SystemViewType``)."""

    NODE = "NODE"
    """Each node answers for itself; a query sees one set of rows per node."""
    CLUSTER = "CLUSTER"
    """One set of rows for the whole cluster."""


class SystemViewDescriptor(Model):
    """A system view: its name and columns in ``SYSTEM``, and where its rows come from.

    The nodes of the database register their views (``CreateSystemViewCommand``); the
    catalog holds their definitions so that every node plans queries over them alike. A view
    registered again with another definition replaces the old one under a new id.
    """

    id: int
    schema_id: int
    name: str
    columns: tuple[ColumnDescriptor, ...]
    view_type: SystemViewType
    update_ts: int = 0
    """The activation timestamp of the version that registered this definition."""

    def same_definition(self, other: SystemViewDescriptor) -> bool:
        """Return True if ``other`` defines the same view (name, columns and type)."""
        return (self.name, self.columns, self.view_type) == (
            other.name,
            other.columns,
            other.view_type,
        )

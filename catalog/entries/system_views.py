"""Update entries for system views."""

from __future__ import annotations

from typing import Literal

from catalog.descriptors import SystemViewDescriptor
from catalog.entries.base import SYSTEM_VIEWS, PutEntry
from catalog.events import CatalogEvent


class NewSystemViewEntry(PutEntry, event=CatalogEvent.SYSTEM_VIEW_CREATE, kind=SYSTEM_VIEWS):
    """Register a system view, in place of any view of its name."""

    type: Literal["new_system_view"] = "new_system_view"
    system_view: SystemViewDescriptor

"""The contract every update entry follows: a pure ``apply`` and the event it fires."""

from __future__ import annotations

from typing import ClassVar

from catalog.catalog import Catalog
from catalog.descriptors import Descriptor
from catalog.events import CatalogEvent
from catalog.model import Model


class EntryBase(Model):
    """One small, self-contained change to a catalog.

    Subclasses declare a stable wire tag ``type: Literal[...]`` (never renamed or reused), the
    ``event`` they fire (None for internal bookkeeping), and implement ``apply``.
    """

    event: ClassVar[CatalogEvent | None] = None

    def apply(self, catalog: Catalog) -> Catalog:
        """Return ``catalog`` with this change applied. Pure: ``catalog`` is not modified."""
        raise NotImplementedError(type(self).__name__)  # every concrete entry overrides it

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:
        """Return the descriptor the event is about: the new one, or the removed one for drops."""
        return None

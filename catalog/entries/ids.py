"""``ObjectIdGenUpdateEntry``: reserves catalog-wide object ids. Internal, fires no event."""

from __future__ import annotations

from typing import Literal

from catalog.catalog import Catalog
from catalog.entries.base import EntryBase


class ObjectIdGenUpdateEntry(EntryBase):
    """Advance the catalog-wide object-id counter by ``delta``."""

    type: Literal["object_id_gen"] = "object_id_gen"
    delta: int

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        return catalog.with_object_id_gen(catalog.object_id_gen + self.delta)

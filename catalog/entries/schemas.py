"""Update entries for schemas."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from catalog.catalog import Catalog
from catalog.descriptors import Descriptor, SchemaDescriptor
from catalog.entries.base import EntryBase
from catalog.events import CatalogEvent


class NewSchemaEntry(EntryBase):
    """Add a schema."""

    type: Literal["new_schema"] = "new_schema"
    schema_: SchemaDescriptor = Field(alias="schema")
    event: ClassVar[CatalogEvent | None] = CatalogEvent.SCHEMA_CREATE

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        return catalog.with_schema(self.schema_)

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:  # noqa: D102
        return self.schema_


class DropSchemaEntry(EntryBase):
    """Remove an empty schema."""

    type: Literal["drop_schema"] = "drop_schema"
    schema_id: int
    event: ClassVar[CatalogEvent | None] = CatalogEvent.SCHEMA_DROP

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        return catalog.without_schema(self.schema_id)

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:  # noqa: D102
        return before.schema_by_id(self.schema_id)

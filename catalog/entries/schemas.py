"""Update entries for schemas."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from catalog.descriptors import SchemaDescriptor
from catalog.entries.base import SCHEMAS, ChangeEntry, PutEntry, RemoveEntry
from catalog.events import CatalogEvent
from catalog.properties import Properties


class NewSchemaEntry(PutEntry, event=CatalogEvent.SCHEMA_CREATE, kind=SCHEMAS):
    """Add a schema."""

    type: Literal["new_schema"] = "new_schema"
    schema_: SchemaDescriptor = Field(alias="schema")


class DropSchemaEntry(RemoveEntry, event=CatalogEvent.SCHEMA_DROP, kind=SCHEMAS):
    """Remove an empty schema."""

    type: Literal["drop_schema"] = "drop_schema"
    schema_id: int


class SetSchemaPropertiesEntry(ChangeEntry, event=CatalogEvent.SCHEMA_ALTER, kind=SCHEMAS):
    """Replace a schema's properties."""

    type: Literal["set_schema_properties"] = "set_schema_properties"
    schema_id: int
    properties: Properties

    def changed(self, schema: SchemaDescriptor) -> SchemaDescriptor:  # noqa: D102
        return schema.model_copy(update={"properties": self.properties})

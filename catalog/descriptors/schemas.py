"""``SchemaDescriptor``: a namespace for tables and indexes."""

from __future__ import annotations

from typing import ClassVar

from catalog.model import Model
from catalog.properties import Properties

PUBLIC_SCHEMA = "PUBLIC"
SYSTEM_SCHEMA = "SYSTEM"
SYSTEM_SCHEMAS = frozenset({SYSTEM_SCHEMA, "INFORMATION_SCHEMA", "DEFINITION_SCHEMA"})
"""Reserved system schemas, as in Ignite: user DDL cannot create, drop or change them, nor
create objects in them. ``PUBLIC`` is not one: an empty ``PUBLIC`` can be dropped and created
again."""


class SchemaDescriptor(Model):
    """A schema. Its tables and indexes are found through the ``Catalog``.

    Its ``update_ts`` moves whenever the schema, or a table or index in it, changes.
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("update_ts", "properties")
    """Fields appended to the stored form after its first format; older payloads lack them."""

    id: int
    name: str
    update_ts: int = 0
    """The activation timestamp of the version that last changed it (Ignite's causality token;
    0 when that version was written before versions stamped their objects)."""
    properties: Properties = ()
    """Its properties (Iceberg namespace properties, such as ``owner``), sorted by name."""

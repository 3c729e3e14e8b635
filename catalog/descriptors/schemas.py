"""``SchemaDescriptor``: a namespace for tables and indexes."""

from __future__ import annotations

from catalog.model import Model

PUBLIC_SCHEMA = "PUBLIC"
SYSTEM_SCHEMA = "SYSTEM"
SYSTEM_SCHEMAS = frozenset({SYSTEM_SCHEMA, "INFORMATION_SCHEMA", "DEFINITION_SCHEMA"})
"""Reserved system schemas, as in Ignite: user DDL cannot create, drop or change them, nor
create objects in them. ``PUBLIC`` is not one: an empty ``PUBLIC`` can be dropped and created
again."""


class SchemaDescriptor(Model):
    """A schema. Its tables and indexes are found through the ``Catalog``."""

    id: int
    name: str

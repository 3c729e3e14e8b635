"""``SchemaDescriptor``: a namespace for tables and indexes."""

from __future__ import annotations

from catalog.model import Model

PUBLIC_SCHEMA = "PUBLIC"
SYSTEM_SCHEMA = "SYSTEM"
SYSTEM_SCHEMAS = frozenset({SYSTEM_SCHEMA})
"""Schemas user DDL may not create objects in (Ignite refuses DDL in system schemas)."""
PROTECTED_SCHEMAS = frozenset({PUBLIC_SCHEMA, SYSTEM_SCHEMA})
"""Schemas that can never be dropped."""


class SchemaDescriptor(Model):
    """A schema. Its tables and indexes are found through the ``Catalog``."""

    id: int
    name: str

"""Catalog events: their kinds, and ``EventSubject``, the object an event is about."""

from __future__ import annotations

import enum
from typing import Literal

import pydantic

from catalog.model import Model


class CatalogEvent(enum.StrEnum):
    """Kinds of catalog events; each update entry fires at most one (see ``UpdateEntry``)."""

    SCHEMA_CREATE = "SCHEMA_CREATE"
    SCHEMA_DROP = "SCHEMA_DROP"
    TABLE_CREATE = "TABLE_CREATE"
    TABLE_DROP = "TABLE_DROP"
    TABLE_ALTER = "TABLE_ALTER"
    INDEX_CREATE = "INDEX_CREATE"
    INDEX_BUILDING = "INDEX_BUILDING"
    INDEX_AVAILABLE = "INDEX_AVAILABLE"
    INDEX_STOPPING = "INDEX_STOPPING"
    INDEX_REMOVED = "INDEX_REMOVED"
    INDEX_RENAME = "INDEX_RENAME"
    ZONE_CREATE = "ZONE_CREATE"
    ZONE_ALTER = "ZONE_ALTER"
    ZONE_DROP = "ZONE_DROP"
    SET_DEFAULT_ZONE = "SET_DEFAULT_ZONE"
    SYSTEM_VIEW_CREATE = "SYSTEM_VIEW_CREATE"
    SCHEMA_ALTER = "SCHEMA_ALTER"
    VIEW_CREATE = "VIEW_CREATE"
    VIEW_ALTER = "VIEW_ALTER"
    VIEW_DROP = "VIEW_DROP"
    PRINCIPAL_CREATE = "PRINCIPAL_CREATE"
    PRINCIPAL_ALTER = "PRINCIPAL_ALTER"
    PRINCIPAL_DROP = "PRINCIPAL_DROP"
    ROLE_CREATE = "ROLE_CREATE"
    ROLE_DROP = "ROLE_DROP"
    GRANT = "GRANT"
    REVOKE = "REVOKE"


class EventSubject(Model):
    """Which object an event is about, by id and by name, without the object itself.

    A listener that wants the whole object reads it from ``catalog(version)`` (for drops, from
    ``catalog(version - 1)``), or over REST at the event's version.

    Attributes:
        type: ``schema``, ``table``, ``index``, ``view``, ``zone``, ``system_view``,
            ``principal``, ``role`` or ``grant`` (named as ``SELECT ON TABLE S.T TO USER u``).
        id: the object's id.
        name: its name after the change (before it, for drops).
        schema: the schema it lives in (None for zones, principals and roles; for a grant,
            the schema of its object).
        table: for indexes, the table they index.
        previous_name: for renames, the name before the change.
    """

    type: Literal[
        "schema", "table", "index", "zone", "system_view", "view", "principal", "role", "grant"
    ]
    id: int
    name: str
    schema_: str | None = pydantic.Field(default=None, alias="schema")
    table: str | None = None
    previous_name: str | None = None

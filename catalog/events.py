"""Catalog events: what a listener is told after a version is published."""

from __future__ import annotations

import enum


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

"""``IndexDescriptor``: hash or sorted, unique or not, with its lifecycle status.

Lifecycle (as in Ignite 3)::

    [new] -> REGISTERED -> BUILDING -> AVAILABLE -> STOPPING -> [removed]
    [new] -> AVAILABLE                      (primary key, or created with its table)
    REGISTERED | BUILDING -> [removed]      (dropped before it was ever readable)
    any -> [removed]                        (its table was dropped)
"""

from __future__ import annotations

import enum
from typing import ClassVar

from catalog.model import Model


class IndexKind(enum.StrEnum):
    """How an index organises its keys."""

    HASH = "hash"
    SORTED = "sorted"


class IndexStatus(enum.StrEnum):
    """Where an index is in its lifecycle."""

    REGISTERED = "REGISTERED"
    BUILDING = "BUILDING"
    AVAILABLE = "AVAILABLE"
    STOPPING = "STOPPING"


class Collation(enum.StrEnum):
    """Order of a sorted index column."""

    ASC_NULLS_FIRST = "ASC_NULLS_FIRST"
    ASC_NULLS_LAST = "ASC_NULLS_LAST"
    DESC_NULLS_FIRST = "DESC_NULLS_FIRST"
    DESC_NULLS_LAST = "DESC_NULLS_LAST"


class IndexColumn(Model):
    """One indexed column by id; ``collation`` is set for sorted indexes only."""

    column_id: int
    collation: Collation | None = None


class IndexDescriptor(Model):
    """An index on one table. Columns are referenced by column id, so renames keep it valid."""

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("update_ts",)
    """Fields appended to the stored form after its first format; older payloads lack them."""

    id: int
    schema_id: int
    table_id: int
    name: str
    kind: IndexKind
    unique: bool
    columns: tuple[IndexColumn, ...]
    status: IndexStatus
    created_with_table: bool = False
    update_ts: int = 0
    """The activation timestamp of the version that last changed it (Ignite's causality token;
    0 when that version was written before versions stamped their objects)."""

    @property
    def is_alive(self) -> bool:
        """Return True unless the index is STOPPING (alive indexes own their name)."""
        return self.status is not IndexStatus.STOPPING

    @property
    def column_ids(self) -> tuple[int, ...]:
        """Return the indexed column ids, in index order."""
        return tuple(c.column_id for c in self.columns)

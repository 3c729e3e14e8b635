"""How a ``RelationStore`` keeps a table or index: records, stamped, and their histories.

Record layouts (tuples, for their size):

- table: ``(stamp, value, schema_id, zone_id, name)``
- index: ``(stamp, value, schema_id, table_id, name, alive)``

``value`` is the marshalled descriptor, the descriptor itself (unsealed changes, or objects
given to ``Catalog.from_parts``), or None where the object was removed.
"""

from __future__ import annotations

from typing import Any

Record = tuple[Any, ...]
History = tuple[Any, ...]
"""One record, or a tuple of every record of the object, oldest first (most objects never
change); a record starts with its int stamp, a history with a record."""

Named = tuple[Any, ...]
"""What a name maps to in ``RelationStore.table_names``: the history of the one table that ever
had the name (the very object ``tables`` holds, so a lookup by name reads no id), or, once
several tables had it, ``(None, *their ids)``."""

STAMP = 0
VALUE = 1
SCHEMA_ID = 2
ZONE_ID = 3
TABLE_ID = 3
NAME = 4
ALIVE = 5


def visible(history: History | None, stamp: int) -> Record | None:
    """Return the record of ``history`` a catalog sealed at ``stamp`` sees, None if absent."""
    if history is None:
        return None
    if type(history[STAMP]) is int:
        found: Record | None = history if history[STAMP] <= stamp else None
    else:
        found = None
        for record in reversed(history):
            if record[STAMP] <= stamp:
                found = record
                break
    return found if found is not None and found[VALUE] is not None else None


def records_of(history: History) -> tuple[Record, ...]:
    """Return the records of ``history``, oldest first."""
    return (history,) if type(history[STAMP]) is int else history

"""``StampedCounts``: how many tables a schema, a zone and the catalog hold, at every version.

A node keeps every catalog version it has not compacted, and nearly every DDL changes a few
counts (a CREATE TABLE: its schema's, its zone's and the indexes'). A persistent
map per version costs ~160 bytes for each changed count; here a count keeps the stamps it
changed at and its value from each, in two arrays: 16 bytes per change, shared by every
version of the lineage.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable

CountKey = tuple[str, int]
"""What is counted: ``("indexes", 0)``, ``("schema", id)``, ``("zone", id)`` (tables in each)."""

INDEXES: CountKey = ("indexes", 0)


def schema_key(schema_id: int) -> CountKey:
    """Return the key of the count of tables in schema ``schema_id``."""
    return ("schema", schema_id)


def zone_key(zone_id: int) -> CountKey:
    """Return the key of the count of tables in zone ``zone_id``."""
    return ("zone", zone_id)


class StampedCounts:
    """Counts as each stamp of one lineage of catalog versions sees them (0 when never set).

    Readers may run on other threads than the writer: a value is appended before its
    stamp, so a reader that finds a stamp always finds its value.
    """

    __slots__ = ("_stamps", "_values")

    def __init__(self) -> None:
        self._stamps: dict[CountKey, array[int]] = {}
        self._values: dict[CountKey, array[int]] = {}

    def at(self, stamp: int, key: CountKey) -> int:
        """Return the count ``key`` as of ``stamp``."""
        stamps = self._stamps.get(key)
        if stamps is None:
            return 0
        last = len(stamps) - 1
        if stamps[last] <= stamp:  # the common case: a reader of a recent version
            return self._values[key][last]
        found = bisect_right(stamps, stamp) - 1
        return self._values[key][found] if found >= 0 else 0

    def write(self, stamp: int, counts: Iterable[tuple[CountKey, int]]) -> None:
        """Set each count from ``stamp`` on (``stamp`` is newer than every earlier write)."""
        for key, value in counts:
            stamps = self._stamps.get(key)
            if stamps is None:
                self._values[key] = array("q", (value,))
                self._stamps[key] = array("q", (stamp,))
            else:
                self._values[key].append(value)
                stamps.append(stamp)

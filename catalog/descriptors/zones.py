"""``ZoneDescriptor``: how a table's data is partitioned and replicated."""

from __future__ import annotations

from catalog.model import Model

DEFAULT_ZONE_NAME = "Default"
DEFAULT_PARTITIONS = 25
DEFAULT_STORAGE_PROFILE = "default"
DEFAULT_FILTER = "$..*"
MAX_PARTITIONS = 65000


def quorum_range(replicas: int) -> tuple[int, int]:
    """Return the inclusive range of quorum sizes valid for ``replicas`` (Ignite's rule)."""
    low = min(replicas, 2)
    return low, max(low, (replicas + 1) // 2)


def default_quorum(replicas: int) -> int:
    """Return the quorum used when none is given: a majority, at least 2 when possible."""
    low, high = quorum_range(replicas)
    return min(max(low, 3 if replicas > 4 else low), high)


class ZoneDescriptor(Model):
    """A distribution zone. ``partitions`` is fixed when the zone is created."""

    id: int
    name: str
    partitions: int
    replicas: int
    quorum: int
    storage_profiles: tuple[str, ...]
    filter: str

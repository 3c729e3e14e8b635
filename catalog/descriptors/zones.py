"""``ZoneDescriptor``: how a table's data is partitioned and replicated."""

from __future__ import annotations

import enum
from typing import ClassVar

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


class ConsistencyMode(enum.StrEnum):
    """How a zone's partitions choose between consistency and availability (Ignite's)."""

    STRONG_CONSISTENCY = "STRONG_CONSISTENCY"
    """A partition serves only while a majority of its replicas does."""
    HIGH_AVAILABILITY = "HIGH_AVAILABILITY"
    """A partition keeps serving reads from the replicas left when the majority is lost."""


class ZoneDescriptor(Model):
    """A distribution zone. ``partitions`` and ``consistency_mode`` are fixed at creation.

    The auto-adjust timers say how many seconds the zone's data nodes wait after a node
    joins (``auto_scale_up_s``, 0 = at once) or leaves (``auto_scale_down_s``) before they
    change; None turns that adjustment off.
    """

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = (
        "auto_scale_up_s",
        "auto_scale_down_s",
        "consistency_mode",
        "update_ts",
    )
    """Fields appended to the stored form after its first format; older payloads lack them."""

    id: int
    name: str
    partitions: int
    replicas: int
    quorum: int
    storage_profiles: tuple[str, ...]
    filter: str
    auto_scale_up_s: int | None = 0
    auto_scale_down_s: int | None = None
    consistency_mode: ConsistencyMode = ConsistencyMode.STRONG_CONSISTENCY
    update_ts: int = 0
    """The activation timestamp of the version that last changed it (Ignite's causality token;
    0 when that version was written before versions stamped their objects)."""


def default_zone(zone_id: int) -> ZoneDescriptor:
    """Return the ``Default`` zone as a first table without a zone creates it.

    One replica on every node (``DEFAULT_FILTER``), ``DEFAULT_PARTITIONS`` partitions, the
    default storage profile; the data nodes follow joins at once and never shrink.
    """
    return ZoneDescriptor(
        id=zone_id,
        name=DEFAULT_ZONE_NAME,
        partitions=DEFAULT_PARTITIONS,
        replicas=1,
        quorum=1,
        storage_profiles=(DEFAULT_STORAGE_PROFILE,),
        filter=DEFAULT_FILTER,
    )

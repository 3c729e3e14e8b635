"""``NodeOptions``: how one catalog node runs; ``CompactionPolicy``: when it compacts the log."""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.runtime.registry import DEFAULT_TTL_S
from catalog.storage.descriptor_cache import DEFAULT_CACHE_SIZE
from schemasync.clock import Clock


@dataclass(frozen=True, slots=True)
class CompactionPolicy:
    """When a node compacts the log on its own.

    A snapshot is taken at the newest version that leaves at least ``retain_versions``
    versions and every version active within the last ``retain_ms`` milliseconds, so readers
    pinned to a recent timestamp keep their catalog.
    """

    retain_versions: int = 1000
    retain_ms: int = 600_000
    check_interval_s: float = 5.0

    def __post_init__(self) -> None:
        _check(self.retain_versions >= 1, "compaction retain_versions", "at least 1")
        _check(self.retain_ms >= 0, "compaction retain_ms", "0 or more")
        _check(_positive(self.check_interval_s), "compaction check_interval_s", "positive")


@dataclass(frozen=True, slots=True)
class NodeOptions:
    """How a catalog node runs (every field has a default).

    Attributes:
        delay_ms: the schema sync delay; must match the cluster's.
        max_clock_skew_ms: the maximum clock skew; must match the cluster's.
        clock: this node's clock (a ``HybridClock`` when None).
        safe_time_ticker: keep safe time near ``now - delay/2`` in the background.
        compaction: an automatic compaction policy, or None to compact only on request.
        follow_interval_s: how often to notice snapshots taken by other nodes.
        address: this node's REST address, published in the node registry.
        registry_ttl_s: how long this node's registry entry outlives its last heartbeat;
            None to stay out of the registry (short-lived tools).
        registry_interval_s: the heartbeat period (``registry_ttl_s / 3`` when None).
        descriptor_cache: how many recently read descriptors to keep decoded (about 1 KB
            each for a table of six columns; up to twice as many are held). Descriptors are
            kept as their stored bytes and decoded on first read; a lookup of a cached one
            costs a dict read, one not cached about 20 µs. Size it to the tables read often.
            The cache is the process's, shared by its nodes: the largest size asked for holds.
        warehouse: the folder this node names as the cluster's warehouse (where each new
            table's data goes): recorded when the cluster is created, or when it has none
            yet; a cluster with another warehouse refuses the node. None: the cluster's.
        default_warehouse: the warehouse recorded when ``warehouse`` is None and the cluster
            has none yet (None: the cluster stays without one, and new tables record no
            location).

    Raises:
        ValueError: an option out of range (the message names it and what is accepted).
    """

    delay_ms: int = 500
    max_clock_skew_ms: int = 500
    clock: Clock | None = None
    safe_time_ticker: bool = True
    compaction: CompactionPolicy | None = None
    follow_interval_s: float = 1.0
    address: str | None = None
    registry_ttl_s: float | None = DEFAULT_TTL_S
    registry_interval_s: float | None = None
    descriptor_cache: int = DEFAULT_CACHE_SIZE
    warehouse: str | None = None
    default_warehouse: str | None = None

    def __post_init__(self) -> None:
        _check(self.delay_ms >= 0, "node delay_ms", "0 or more milliseconds")
        _check(self.max_clock_skew_ms >= 0, "node max_clock_skew_ms", "0 or more milliseconds")
        _check(_positive(self.follow_interval_s), "node follow_interval_s", "a positive number")
        ttl, interval = self.registry_ttl_s, self.registry_interval_s
        _check(ttl is None or _positive(ttl), "node registry_ttl_s", "None or a positive number")
        _check(
            interval is None or (_positive(interval) and (ttl is None or interval < ttl)),
            "node registry_interval_s",
            "None or a positive number below registry_ttl_s",
        )
        _check(self.descriptor_cache >= 1, "node descriptor_cache", "at least 1 descriptor")
        _check(self.warehouse != "", "node warehouse", "a folder or None")
        _check(self.default_warehouse != "", "node default_warehouse", "a folder or None")


def _positive(value: float) -> bool:
    return value > 0 and math.isfinite(value)


def _check(ok: bool, name: str, accepted: str) -> None:
    """Refuse an option out of range, naming it and what it accepts."""
    if not ok:
        raise ValueError(f"{name} must be {accepted}")

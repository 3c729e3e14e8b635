"""R8: node clocks offset by +200, -200 and 0 ms (max clock skew 500 ms) under DDL load.

Invariant 6: after a DDL returns on one node, a read at "now" on every node includes it (each
acknowledgement is followed by such reads). Invariant 5: a timestamp pinned on one node
(often ahead of or behind another node's clock) reads the same version on every node, during
the run and again afterwards.
"""

from __future__ import annotations

import time

import httpx
import pytest

from tests.chaos.conftest import ClusterFactory
from tests.chaos.history import History
from tests.chaos.support import CHAOS_SECONDS, Faults, finish
from tests.chaos.workload import LoadSettings, Workload

pytestmark = pytest.mark.chaos

OFFSETS_MS = (200, -200, 0)


def _offset_ms(url: str, samples: int = 5) -> tuple[float, float]:
    """Return a node's clock offset from ours and the error bound of that reading.

    As NTP does: of a few requests, the one with the shortest round trip, read against its
    middle; the server's reading lies somewhere in that round trip, so half of it bounds
    the error, however loaded the machine is.
    """
    best: tuple[float, float] | None = None
    for _ in range(samples):
        before = time.time() * 1000
        physical = httpx.get(url + "/v1/time", timeout=5.0).json()["physical_ms"]
        after = time.time() * 1000
        reading = (float(physical) - (before + after) / 2, (after - before) / 2)
        if best is None or reading[1] < best[1]:
            best = reading
    assert best is not None
    return best


def test_r8_skewed_clocks_keep_reads_consistent(start_cluster: ClusterFactory) -> None:
    started = time.monotonic()
    cluster = start_cluster(
        nodes=3, delay_ms=100, max_clock_skew_ms=500, clock_offsets_ms=OFFSETS_MS
    )
    history, faults = History(), Faults()
    for node, offset in zip(cluster.nodes, OFFSETS_MS, strict=True):
        faults.inject(f"clock of {node.name} offset by {offset:+d} ms", windowed=False)
    # The offsets are in force: each node's clock reads its offset off ours, within the
    # reading's error bound (a slow answer widens the bound, it does not look like skew).
    readings = [_offset_ms(u) for u in cluster.urls]
    for (measured, error), want in zip(readings, OFFSETS_MS, strict=True):
        assert abs(measured - want) <= 20 + error, readings  # 20 ms: the clocks' granularity
    settings = LoadSettings(
        clients=8, seed=8, resend_fraction=0.05, visibility_fraction=1.0, read_interval_s=0.2
    )
    with Workload(cluster.urls, history, settings) as load:
        load.sleep(max(8.0, CHAOS_SECONDS / 2))
    report = finish("R8 clock skew", cluster, history, load, faults, started)
    after_ack = [r for r in history.reads if r.min_version is not None]
    print(f"  reads at now right after an acknowledgement: {len(after_ack)} (all include it)")
    assert report.ok, report.summary()
    assert after_ack and report.checked["read_timestamps"] > 10

"""R3: kill -9 a catalog node in the middle of appends; clients retry elsewhere, same id."""

from __future__ import annotations

import time

import pytest

from tests.chaos.conftest import ClusterFactory
from tests.chaos.history import History, Outcome
from tests.chaos.support import CHAOS_SECONDS, Faults, finish
from tests.chaos.workload import LoadSettings, Workload

pytestmark = pytest.mark.chaos

KILLS = max(2, round(CHAOS_SECONDS / 8))
DOWN_S = 2.0


def test_r3_catalog_node_killed_mid_append(start_cluster: ClusterFactory) -> None:
    started = time.monotonic()
    cluster = start_cluster(nodes=3, delay_ms=50, max_clock_skew_ms=50)
    history, faults = History(), Faults()
    settings = LoadSettings(clients=16, seed=3, resend_fraction=0.05)
    with Workload(cluster.urls, history, settings) as load:
        load.sleep(2.0)
        for k in range(KILLS):
            victim = 1 + k % (len(cluster.nodes) - 1)  # node 0 stays: it never loses the load
            faults.inject(f"kill -9 catalog node n{victim}, restarted after {DOWN_S:.0f} s")
            cluster.kill_node(victim)
            load.sleep(DOWN_S)
            cluster.restart_node(victim)
            load.sleep(2.0)
    report = finish("R3 catalog node kills", cluster, history, load, faults, started)
    killed = {cluster.nodes[1 + k % (len(cluster.nodes) - 1)].url for k in range(KILLS)}
    failed_over = [
        op
        for op in history.operations
        if op.outcome is Outcome.OK
        and op.node not in killed | {None}
        and any(a.url in killed and not a.result.isdigit() for a in op.attempts)
    ]
    cut = [
        op
        for op in history.operations
        if any(
            a.url in killed and a.result in ("RemoteProtocolError", "ReadError")
            for a in op.attempts
        )
    ]
    print(
        f"  requests cut off by a kill: {len(cut)}; acknowledged by another node after "
        f"failing on a killed one (same request id): {len(failed_over)}"
    )
    assert report.ok, report.summary()
    assert cut, "no request was in flight on a killed node: the kills hit nothing"

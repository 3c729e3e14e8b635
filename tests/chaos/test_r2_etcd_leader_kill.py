"""R2: kill -9 the etcd leader every ~10 s under DDL load, and restart it."""

from __future__ import annotations

import time

import pytest

from tests.chaos.conftest import ClusterFactory
from tests.chaos.history import History
from tests.chaos.support import CHAOS_SECONDS, Faults, etcd_members_agree, finish
from tests.chaos.workload import LoadSettings, Workload

pytestmark = pytest.mark.chaos

KILLS = max(2, round(CHAOS_SECONDS / 10))
INTERVAL_S = 10.0
DOWN_S = 3.0


def test_r2_etcd_leader_killed_under_load(start_cluster: ClusterFactory) -> None:
    started = time.monotonic()
    cluster = start_cluster(nodes=3, delay_ms=50, max_clock_skew_ms=50)
    history, faults = History(), Faults()
    settings = LoadSettings(clients=16, seed=2, resend_fraction=0.05, visibility_fraction=0.02)
    with Workload(cluster.urls, history, settings) as load:
        load.sleep(2.0)
        for _ in range(KILLS):
            leader = cluster.etcd.leader_index()
            faults.inject(f"kill -9 etcd leader m{leader}, restarted after {DOWN_S:.0f} s")
            cluster.etcd.kill(leader)
            load.sleep(DOWN_S)
            cluster.etcd.restart(leader)
            load.sleep(INTERVAL_S - DOWN_S)
    report = finish("R2 etcd leader kills", cluster, history, load, faults, started)
    agree, hashes = etcd_members_agree(cluster)
    print(f"  etcd members agree: {agree} ({hashes})")
    assert report.ok, report.summary()
    assert agree, hashes
    assert all(f.recovered_s is not None for f in faults.items), faults.lines()
    assert history.counts()["ok"] > 20

"""R4: etcd revision compaction while a catalog node cannot follow the log.

Node n2 is pinned to etcd member m2 (its store URL names only m2), so what happens to m2
happens to n2's watch. Three phases, each under DDL load on the other nodes:

1. m2 is paused (SIGSTOP): n2's watch stalls; history is compacted; m2 resumes.
2. m2 is killed: n2's watch breaks and cannot reconnect; history is compacted; m2 restarts
   and n2 resumes its watch from a revision that no longer exists (``compact_revision``).
3. n2 itself is stopped; history is compacted; n2 starts again and recovers.

After each phase n2 must catch up without skipping a version: the checker sees every
retained version on n2 with the same digest as on the other nodes.
"""

from __future__ import annotations

import time

import pytest

from deploy.local_cluster import LocalCluster
from tests.chaos.conftest import ClusterFactory
from tests.chaos.history import History
from tests.chaos.observe import settle
from tests.chaos.support import CHAOS_SECONDS, Faults, etcd_members_agree, finish
from tests.chaos.workload import LoadSettings, Workload

pytestmark = pytest.mark.chaos

LAG_S = max(2.0, CHAOS_SECONDS / 8)
PINNED = 2


def _compact(cluster: LocalCluster, faults: Faults, why: str) -> None:
    revision = cluster.etcd.members[0].compact()
    faults.inject(f"etcd history compacted to revision {revision} ({why})")


def test_r4_revision_compaction_while_a_node_cannot_follow(start_cluster: ClusterFactory) -> None:
    started = time.monotonic()
    cluster = start_cluster(nodes=3, delay_ms=50, max_clock_skew_ms=50)
    cluster.restart_node(PINNED, store=cluster.node_store(PINNED, member=PINNED))
    member = cluster.etcd.members[PINNED]
    history, faults = History(), Faults()
    # n2 cannot answer while its member is away: the clients fail over after a timeout.
    settings = LoadSettings(clients=12, seed=4, resend_fraction=0.05, timeout_s=3.0)
    with Workload(cluster.urls, history, settings) as load:
        load.sleep(2.0)

        faults.inject(f"pause etcd member m{PINNED} (n2's only member) for {LAG_S:.0f} s")
        member.pause()
        load.sleep(LAG_S)
        _compact(cluster, faults, "m2 paused")
        member.resume()
        load.sleep(2.0)

        faults.inject(f"kill -9 etcd member m{PINNED} for {LAG_S:.0f} s")
        cluster.etcd.kill(PINNED)
        load.sleep(LAG_S)
        _compact(cluster, faults, "m2 down")
        cluster.etcd.restart(PINNED)
        load.sleep(2.0)

        faults.inject(f"stop catalog node n{PINNED} for {LAG_S:.0f} s")
        cluster.kill_node(PINNED)
        load.sleep(LAG_S)
        _compact(cluster, faults, "n2 down")
        cluster.restart_node(PINNED)
        load.sleep(2.0)
    settle(cluster.urls, cluster.store_url)
    report = finish("R4 revision compaction", cluster, history, load, faults, started)
    agree, hashes = etcd_members_agree(cluster)
    print(f"  etcd members agree: {agree} ({hashes})")
    assert report.ok, report.summary()
    assert agree, hashes

"""R5: snapshot compaction (``catalog compact --keep N``) while a catalog node lags behind.

Two phases under DDL load: node n2 is frozen (SIGSTOP), then stopped; each time the log is
compacted past the version n2 had applied, then n2 runs again. It must reload from the
snapshot and serve the same catalogs as the other nodes for every retained version.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import pytest

from deploy.local_cluster import LocalCluster
from tests.chaos.conftest import ClusterFactory
from tests.chaos.history import History
from tests.chaos.observe import settle
from tests.chaos.support import CHAOS_SECONDS, Faults, finish
from tests.chaos.workload import LoadSettings, Workload

pytestmark = pytest.mark.chaos

LAG_S = max(2.0, CHAOS_SECONDS / 8)
KEEP = 5
LAGGING = 2


def _compact(cluster: LocalCluster, faults: Faults, why: str) -> int:
    """Run ``catalog compact --keep KEEP`` on the store; return the snapshot version."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "api.cli",
            "compact",
            "--keep",
            str(KEEP),
            "--store",
            cluster.store_url,
            "--delay-ms",
            str(cluster.delay_ms),
            "--max-clock-skew-ms",
            str(cluster.max_clock_skew_ms),
            "-o",
            "json",
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout)
    snapshot = int(result["snapshot_version"])
    faults.inject(f"catalog compact --keep {KEEP}: snapshot at version {snapshot} ({why})")
    return snapshot


def _applied(cluster: LocalCluster, index: int) -> int:
    """Return the latest version node ``index`` has applied."""
    answer = httpx.get(cluster.urls[index] + "/v1/versions", params={"limit": 1}, timeout=5.0)
    return int(answer.json()["latest"])


def test_r5_snapshot_compaction_while_a_node_lags(start_cluster: ClusterFactory) -> None:
    started = time.monotonic()
    cluster = start_cluster(nodes=3, delay_ms=50, max_clock_skew_ms=50)
    history, faults = History(), Faults()
    settings = LoadSettings(clients=12, seed=5, resend_fraction=0.05, timeout_s=3.0)
    behind: list[tuple[int, int]] = []
    with Workload(cluster.urls, history, settings) as load:
        load.sleep(2.0)

        lagged_at = _applied(cluster, LAGGING)
        faults.inject(f"freeze catalog node n{LAGGING} (SIGSTOP) at version {lagged_at}")
        cluster.pause_node(LAGGING)
        load.sleep(LAG_S)
        behind.append((lagged_at, _compact(cluster, faults, "n2 frozen")))
        cluster.resume_node(LAGGING)
        load.sleep(2.0)

        lagged_at = _applied(cluster, LAGGING)
        faults.inject(f"kill -9 catalog node n{LAGGING} at version {lagged_at}")
        cluster.kill_node(LAGGING)
        load.sleep(LAG_S)
        behind.append((lagged_at, _compact(cluster, faults, "n2 down")))
        cluster.restart_node(LAGGING)
        load.sleep(2.0)
    settle(cluster.urls, cluster.store_url)
    report = finish("R5 snapshot compaction", cluster, history, load, faults, started)
    print(
        "  n2 had applied / snapshot taken at: "
        + ", ".join(f"{applied} / {snap}" for applied, snap in behind)
    )
    assert report.ok, report.summary()
    assert all(snap > applied for applied, snap in behind), "the snapshots did not pass n2"
    assert report.checked.get("unverifiable", 0) == 0

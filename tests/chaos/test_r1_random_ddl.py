"""R1: three catalog nodes, sixteen clients of random DDL through the REST client."""

from __future__ import annotations

import time

import pytest

from tests.chaos.conftest import ClusterFactory
from tests.chaos.history import History
from tests.chaos.support import CHAOS_SECONDS, Faults, finish
from tests.chaos.workload import LoadSettings, Workload

pytestmark = pytest.mark.chaos


def test_r1_random_ddl_from_16_clients_on_3_nodes(start_cluster: ClusterFactory) -> None:
    started = time.monotonic()
    cluster = start_cluster(nodes=3, delay_ms=50, max_clock_skew_ms=50)
    history = History()
    settings = LoadSettings(clients=16, seed=1, resend_fraction=0.05, visibility_fraction=0.02)
    with Workload(cluster.urls, history, settings) as load:
        load.sleep(CHAOS_SECONDS)
    report = finish("R1 random DDL", cluster, history, load, Faults(), started)
    assert report.ok, report.summary()
    assert history.counts()["ok"] > 20

"""Fixtures of the chaos tests: local clusters on loopback ports, stopped after each test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from deploy.local_cluster import LocalCluster

ClusterFactory = Callable[..., LocalCluster]


@pytest.fixture
def start_cluster(tmp_path: Path) -> Iterator[ClusterFactory]:
    """Start ``LocalCluster(**options)`` clusters (data and logs under tmp_path); stop all."""
    started: list[LocalCluster] = []

    def start(**options: Any) -> LocalCluster:
        cluster = LocalCluster(base_dir=tmp_path / f"cluster{len(started)}", **options)
        started.append(cluster)
        return cluster.start()

    try:
        yield start
    finally:
        for cluster in reversed(started):
            cluster.stop()

"""Pytest plugin: real etcd processes for integration tests.

``etcd_server`` is one server shared by the whole session (tests isolate themselves with a key
prefix); ``etcd_cluster`` is a fresh 3-member cluster per test, for tests that kill members.
Every test that uses either fixture is marked ``etcd`` automatically, so ``-m "not etcd"``
deselects them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deploy.etcd_server import EtcdCluster, EtcdServer

_ETCD_FIXTURES = frozenset({"etcd_server", "etcd_cluster", "etcd_small_server"})
SMALL_REQUEST_BYTES = 64 * 1024
"""``--max-request-bytes`` of ``etcd_small_server``: values above it are written as chunks."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _ETCD_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.etcd)


@pytest.fixture(scope="session")
def etcd_server() -> Iterator[EtcdServer]:
    """One real etcd for the session; ``.endpoint`` is ``127.0.0.1:<port>``."""
    server = EtcdServer(unsafe_no_fsync=True)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def etcd_small_server() -> Iterator[EtcdServer]:
    """One real etcd for the session that refuses requests over ``SMALL_REQUEST_BYTES``."""
    server = EtcdServer(
        unsafe_no_fsync=True, extra_args=[f"--max-request-bytes={SMALL_REQUEST_BYTES}"]
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def etcd_cluster() -> Iterator[EtcdCluster]:
    """A fresh 3-member etcd cluster with quick elections, stopped after the test."""
    cluster = EtcdCluster(3, heartbeat_ms=50, election_ms=500, unsafe_no_fsync=True)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()

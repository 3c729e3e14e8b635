"""The Java client's fixtures: one JVM for the session, a ``RESTCatalog`` per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.behaviours.java_client import JavaCatalog, JavaSide


@pytest.fixture(scope="session")
def java_side(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaSide]:
    """A JVM with Iceberg's Java client, for every test of the session that asks."""
    side = JavaSide(tmp_path_factory.mktemp("java-classes"))
    try:
        yield side
    finally:
        side.stop()


@pytest.fixture
def java(java_side: JavaSide, iceberg_server: RunningServer) -> Iterator[JavaCatalog]:
    """Iceberg's ``RESTCatalog`` of this test's server (Java's ``catalog()``)."""
    catalog = java_side.rest_catalog(iceberg_server.url)
    try:
        yield JavaCatalog(java_side, catalog, iceberg_server.url)
    finally:
        catalog.close()

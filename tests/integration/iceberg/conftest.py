"""A real server on loopback serving the Iceberg REST catalog, and PyIceberg clients of it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.rest import RestCatalog

from api.client import CatalogClient
from tests.integration.api.servers import RunningServer, ServerFactory


@pytest.fixture
def iceberg_server(tmp_path: Path) -> Iterator[RunningServer]:
    """One server on a fresh SQLite store, auth off (loopback), its warehouse in tmp_path."""
    factory = ServerFactory()
    try:
        yield factory.start(
            f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path / "warehouse")
        )
    finally:
        factory.stop_all()


def rest_catalog(server: RunningServer, token: str | None = None) -> RestCatalog:
    """Return a PyIceberg REST catalog of ``server`` (with a bearer token, if given)."""
    options = {"uri": f"{server.url}/iceberg"}
    if token is not None:
        options["token"] = token
    loaded = load_catalog("c", type="rest", **options)
    assert isinstance(loaded, RestCatalog)
    return loaded


@pytest.fixture
def iceberg(iceberg_server: RunningServer) -> RestCatalog:
    """A PyIceberg REST catalog of ``iceberg_server``."""
    return rest_catalog(iceberg_server)


@pytest.fixture
def client(iceberg_server: RunningServer) -> Iterator[CatalogClient]:
    """The catalog's own client of ``iceberg_server``."""
    with CatalogClient(iceberg_server.url) as own:
        yield own

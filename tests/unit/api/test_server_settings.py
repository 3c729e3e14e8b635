"""Server settings come from CATALOG_* variables and reach the node they configure."""

from __future__ import annotations

import pytest

from api.server.config import ServerSettings
from catalog.storage.descriptor_cache import DEFAULT_CACHE_SIZE


def test_the_descriptor_cache_is_sized_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CATALOG_DESCRIPTOR_CACHE", raising=False)
    assert ServerSettings().node_options().descriptor_cache == DEFAULT_CACHE_SIZE
    monkeypatch.setenv("CATALOG_DESCRIPTOR_CACHE", "150000")
    assert ServerSettings().node_options().descriptor_cache == 150_000


def test_a_descriptor_cache_of_nothing_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CATALOG_DESCRIPTOR_CACHE", "0")
    with pytest.raises(ValueError, match="descriptor_cache must be at least 1"):
        ServerSettings().node_options()


def test_the_warehouse_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CATALOG_WAREHOUSE", raising=False)
    assert ServerSettings().warehouse is None
    monkeypatch.setenv("CATALOG_WAREHOUSE", "/data/lake")
    assert ServerSettings().warehouse == "/data/lake"
    assert ServerSettings().node_options().warehouse == "/data/lake"


def test_a_new_cluster_keeps_its_data_beside_the_sqlite_file() -> None:
    sqlite = ServerSettings(store="sqlite:////srv/catalog/catalog.db", warehouse=None)
    assert sqlite.node_options().default_warehouse == "/srv/catalog/warehouse"
    assert sqlite.node_options().warehouse is None
    etcd = ServerSettings(store="etcd://127.0.0.1:2379", warehouse=None)
    assert etcd.node_options().default_warehouse == "./warehouse"

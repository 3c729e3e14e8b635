"""Namespaces through PyIceberg: they are the catalog's schemas."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    RESTError,
)

from api.client import CatalogClient
from tests.integration.api.servers import RunningServer, ServerFactory
from tests.integration.api.support import create_table
from tests.integration.iceberg.conftest import rest_catalog

pytestmark = pytest.mark.timeout(60)


def test_the_config_lists_the_endpoints_served(iceberg_server: RunningServer) -> None:
    answer = httpx.get(f"{iceberg_server.url}/iceberg/v1/config", timeout=5)
    assert answer.status_code == 200
    body = answer.json()
    assert body["defaults"] == {} and body["overrides"] == {}
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}" in body["endpoints"]


def test_namespaces_are_created_listed_loaded_and_dropped(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    iceberg.create_namespace("SALES")
    assert ("SALES",) in iceberg.list_namespaces()
    assert ("PUBLIC",) in iceberg.list_namespaces()
    assert iceberg.list_namespaces("SALES") == []
    assert iceberg.load_namespace_properties("SALES") == {}
    assert iceberg.namespace_exists("SALES")
    assert "SALES" in [s.name for s in client.schemas().schemas]
    iceberg.drop_namespace("SALES")
    assert not iceberg.namespace_exists("SALES")
    assert "SALES" not in [s.name for s in client.schemas().schemas]


def test_namespace_errors_are_pyicebergs_own(iceberg: RestCatalog, client: CatalogClient) -> None:
    iceberg.create_namespace("SALES")
    with pytest.raises(NamespaceAlreadyExistsError, match="Namespace already exists: SALES"):
        iceberg.create_namespace("SALES")
    with pytest.raises(NoSuchNamespaceError, match="Namespace does not exist: NOPE"):
        iceberg.load_namespace_properties("NOPE")
    with pytest.raises(NoSuchNamespaceError):
        iceberg.drop_namespace("NOPE")
    client.execute([create_table("T", schema="SALES")])
    with pytest.raises(NamespaceNotEmptyError, match="schema SALES is not empty"):
        iceberg.drop_namespace("SALES")
    assert iceberg.namespace_exists("SALES")


def test_nested_namespaces_do_not_exist(iceberg: RestCatalog) -> None:
    # 406: the protocol's UnsupportedOperationException, for which PyIceberg has no class.
    with pytest.raises(RESTError, match=r"^UnsupportedOperationException: .*exactly one level"):
        iceberg.create_namespace(("A", "B"))
    with pytest.raises(NoSuchNamespaceError, match="one level"):
        iceberg.load_namespace_properties(("PUBLIC", "B"))


def test_a_body_over_the_limit_is_refused_in_the_protocols_shape(tmp_path: Path) -> None:
    factory = ServerFactory()
    try:
        server = factory.start(f"sqlite:///{tmp_path}/catalog.db", max_body_bytes=1024)
        body = {"namespace": ["BIG"], "properties": {"note": "x" * 2048}}
        refused = httpx.post(f"{server.url}/iceberg/v1/namespaces", json=body, timeout=10)
        assert refused.status_code == 413
        assert refused.json()["error"]["code"] == 413
        assert "exceeds 1024 bytes" in refused.json()["error"]["message"]
        # PyIceberg has no exception of its own for 413: it reads the protocol's body.
        with pytest.raises(RESTError, match=r"^BadRequestException: request body exceeds 1024"):
            rest_catalog(server).create_namespace("BIG", {"note": "x" * 2048})
        # The catalog's own routes keep their problem+json answers.
        own = httpx.post(f"{server.url}/v1/sql", json={"sql": "x" * 2048}, timeout=10)
        assert (own.status_code, own.json()["code"]) == (413, "REQUEST_TOO_LARGE")
        assert "BIG" not in [
            s["name"] for s in httpx.get(f"{server.url}/v1/schemas").json()["schemas"]
        ]
    finally:
        factory.stop_all()

"""The whole catalog as of a moment, through plain Iceberg REST: a pinned ``{prefix}``."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest
import requests
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import (
    BadRequestError,
    NoSuchTableError,
    RESTError,
)

from api.client import CatalogClient
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows

pytestmark = pytest.mark.timeout(60)


def pinned(server: RunningServer, pin: str) -> RestCatalog:
    """Return a PyIceberg catalog of ``server`` configured with ``warehouse=<pin>``."""
    loaded = load_catalog("pinned", type="rest", uri=f"{server.url}/iceberg", warehouse=pin)
    assert isinstance(loaded, RestCatalog)
    return loaded


def _now() -> str:
    """Return this moment as an RFC 3339 time (milliseconds, UTC)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def test_a_pinned_catalog_sees_every_table_as_of_its_moment(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    orders = iceberg.create_table("PUBLIC.ORDERS", EVENTS)
    orders.append(rows(orders, range(3)))
    iceberg.create_table("PUBLIC.MARK", EVENTS)  # a version pin reads data up to its activation
    time.sleep(0.01)
    moment, version = _now(), client.versions().latest
    time.sleep(0.01)
    orders.append(rows(orders, range(10, 12)))
    iceberg.create_table("PUBLIC.LATER", EVENTS)
    iceberg.create_namespace("LATER_NS")

    for pin in (f"main@{moment}", f"main@v{version}"):
        at = pinned(iceberg_server, pin)
        assert at.properties.get("prefix") == pin
        assert ("LATER_NS",) not in at.list_namespaces()
        assert at.list_tables("PUBLIC") == [("PUBLIC", "MARK"), ("PUBLIC", "ORDERS")]
        with pytest.raises(NoSuchTableError):
            at.load_table("PUBLIC.LATER")
        then = at.load_table("PUBLIC.ORDERS")
        assert len(then.snapshots()) == 1, pin
        assert ids(then) == [0, 1, 2], pin
    latest = iceberg.load_table("PUBLIC.ORDERS")
    assert ids(latest) == [0, 1, 2, 10, 11]


def test_a_pinned_catalog_is_read_only_and_says_so(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    iceberg.create_table("PUBLIC.ORDERS", EVENTS)
    pin = f"main@v{client.versions().latest}"
    at = pinned(iceberg_server, pin)
    version = client.versions().latest
    with pytest.raises(RESTError, match=f"catalog '{pin}' is pinned and read-only"):
        at.create_namespace("NEW")
    table = at.load_table("PUBLIC.ORDERS")
    with pytest.raises(RESTError, match="pinned and read-only"):
        table.append(rows(table, range(2)))
    assert client.versions().latest == version


@pytest.mark.parametrize(
    ("pin", "named"),
    [
        ("main@yesterday", "is not of the form"),
        ("main@2026-01-01T00:00:00", "is not an RFC 3339 time"),
        ("main@12345", "is not an RFC 3339 time"),
        ("main@v", "is not of the form"),
        ("a@b@v1", "is not of the form"),
        ("main@2999-01-01T00:00:00Z", "further ahead than this catalog's clock allows"),
    ],
)
def test_a_malformed_or_future_pin_is_a_400_naming_the_forms(
    iceberg_server: RunningServer, pin: str, named: str
) -> None:
    url = f"{iceberg_server.url}/iceberg/v1/config"
    answer = requests.get(url, params={"warehouse": pin}, timeout=10)
    assert answer.status_code == 400, answer.text
    message = answer.json()["error"]["message"]
    assert named in message and "<name>@v<version>" in message
    with pytest.raises(BadRequestError, match=named):
        pinned(iceberg_server, pin)
    listed = requests.get(f"{iceberg_server.url}/iceberg/v1/{pin}/namespaces", timeout=10)
    assert listed.status_code == 400


def test_a_version_the_catalog_does_not_have_is_refused(iceberg_server: RunningServer) -> None:
    answer = requests.get(
        f"{iceberg_server.url}/iceberg/v1/config", params={"warehouse": "main@v999"}, timeout=10
    )
    body: dict[str, Any] = answer.json()["error"]
    assert answer.status_code == 404 and "999" in body["message"], body


def test_an_unpinned_namespace_named_like_a_pin_route_is_still_served(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    iceberg.create_namespace("namespaces")
    answer = requests.get(f"{iceberg_server.url}/iceberg/v1/namespaces/namespaces", timeout=10)
    assert answer.status_code == 200 and answer.json()["namespace"] == ["namespaces"]

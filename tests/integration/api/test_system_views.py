"""System views over HTTP: registered by a node, listed, diffed, announced, shown by the CLI."""

from __future__ import annotations

import json

import httpx
import pytest

from api.client import CatalogClient
from catalog import CatalogEvent
from tests.integration.api.servers import RunningServer
from tests.integration.api.test_cli import run, run_json

NODES_VIEW = {
    "op": "create_system_view",
    "name": "NODES",
    "columns": [
        {"name": "NODE_NAME", "type": "STRING", "length": 64, "nullable": False},
        {"name": "APPLIED_VERSION", "type": "INT64"},
    ],
    "view_type": "NODE",
}


def test_a_registered_view_is_listed_diffed_and_announced(
    api_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = api_server.url
    with httpx.Client(base_url=url, timeout=30) as http:
        registered = http.post("/v1/ddl", json={"commands": [NODES_VIEW]}).json()
        assert registered["applied"] == [True]
        version = registered["version"]
        # Registering the same view again (every node does, as it starts) changes nothing.
        again = http.post("/v1/ddl", json={"commands": [NODES_VIEW]}).json()
        assert again["applied"] == [False] and again["version"] == version

        listed = http.get("/v1/system-views").json()
        (view,) = listed["system_views"]
        assert (listed["version"], view["name"], view["view_type"]) == (version, "NODES", "NODE")
        assert [c["name"] for c in view["columns"]] == ["NODE_NAME", "APPLIED_VERSION"]
        assert http.get("/v1/system-views", params={"version": 1}).json()["system_views"] == []
        changes = http.get("/v1/diff", params={"from": 1, "to": version}).json()["changes"]
        assert [(c["object_type"], c["name"], c["change"]) for c in changes] == [
            ("system_view", "NODES", "added")
        ]

        # Another definition under the name replaces the view, under a new id.
        cluster = {**NODES_VIEW, "view_type": "CLUSTER"}
        replaced = http.post("/v1/ddl", json={"commands": [cluster]}).json()
        (after,) = http.get("/v1/system-views").json()["system_views"]
        assert after["view_type"] == "CLUSTER" and after["id"] != view["id"]

    with CatalogClient(url) as client:
        cat = client.catalog()
        assert [v.name for v in cat.system_views()] == ["NODES"]
        assert cat.schema("SYSTEM").update_ts == cat.find_system_view("NODES").update_ts  # type: ignore[union-attr]
        with client.events(from_version=version) as events:
            first = next(events)
        assert (first.event, first.subject.type) == (CatalogEvent.SYSTEM_VIEW_CREATE, "system_view")
        assert (first.subject.name, first.subject.schema_) == ("NODES", "SYSTEM")

    listing = run_json(capsys, "get", "system-views", "--url", url, "-o", "json")
    assert [(v["name"], v["view_type"]) for v in listing] == [("NODES", "CLUSTER")]
    code, out, _ = run(capsys, "get", "system-views", "--url", url, "-o", "table")
    assert code == 0 and "NODES" in out and "CLUSTER" in out
    code, out, _ = run(capsys, "get", "catalog", "--url", url, "-o", "json")
    assert code == 0 and [v["name"] for v in json.loads(out)["system_views"]] == ["NODES"]
    assert replaced["version"] == version + 1


def test_a_view_without_columns_is_refused_and_nothing_is_written(
    api_server: RunningServer,
) -> None:
    with httpx.Client(base_url=api_server.url, timeout=30) as http:
        before = http.get("/v1/versions").json()["latest"]
        refused = http.post("/v1/ddl", json={"commands": [{**NODES_VIEW, "columns": []}]})
        assert refused.status_code == 422 and refused.json()["code"] == "VALIDATION_ERROR"
        assert "columns" in refused.json()["detail"]
        twice = {**NODES_VIEW, "columns": [NODES_VIEW["columns"][0]] * 2}
        refused = http.post("/v1/ddl", json={"commands": [twice]})
        assert refused.status_code == 422 and "duplicate column: NODE_NAME" in refused.text
        assert http.get("/v1/versions").json()["latest"] == before

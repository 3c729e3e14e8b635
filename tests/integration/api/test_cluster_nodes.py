"""The node registry and ``wait_for_nodes`` over REST, the Python clients and the CLI.

Real uvicorn servers on one store (both backends). A lagging node keeps its registry entry
but applies nothing: a node whose watch was stopped, or (on etcd) a node process paused with
SIGSTOP. SQLite is left out of the SIGSTOP case: a process paused inside a write transaction
holds the file's lock, and every node sharing the file stalls with it.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from typing import Any

import httpx
import pytest

from api.cli import main
from api.client import AsyncCatalogClient, CatalogClient, InvalidRequestError
from catalog.runtime.blocking import SyncCatalogNode
from catalog.runtime.options import NodeOptions
from deploy.etcd_server import EtcdServer
from tests.integration.api.servers import RunningServer, ServerFactory
from tests.integration.api.support import create_table
from tests.integration.catalog.node_process import node_process

TABLE = {
    "op": "create_table",
    "schema": "PUBLIC",
    "name": "T",
    "columns": [{"name": "ID", "type": "INT64", "nullable": False}],
    "primary_key": ["ID"],
}


def nodes_of(server: RunningServer) -> dict[str, Any]:
    body = httpx.get(server.url + "/v1/cluster/nodes", timeout=10).json()
    return {n["name"]: n for n in body["nodes"]}


def until_listed(server: RunningServer, names: set[str], bound_s: float = 15.0) -> None:
    deadline = time.monotonic() + bound_s
    while set(nodes_of(server)) != names:
        assert time.monotonic() < deadline, f"{names} not listed within {bound_s} s"
        time.sleep(0.05)


def test_cluster_nodes_lists_every_live_node(api_servers: ServerFactory, store_url: str) -> None:
    a = api_servers.start(store_url, node_name="a")
    b = api_servers.start(store_url, node_name="b")
    until_listed(a, {"a", "b"})
    result = httpx.post(a.url + "/v1/ddl", json={"commands": [TABLE]}, timeout=10).json()
    assert set(result) == {"version", "applied", "activation_ts"}  # no node lists unasked
    deadline = time.monotonic() + 10
    while {n["applied_version"] for n in nodes_of(b).values()} != {result["version"]}:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    listed = nodes_of(b)
    for name, server in (("a", a), ("b", b)):
        entry = listed[name]
        assert entry["address"] == server.url
        assert entry["safe_time"] > 0
        assert 0 <= entry["heartbeat_age_ms"] < 10_000
        assert entry["started_ms"] <= entry["heartbeat_ms"]
    b.stop()  # a clean stop deregisters at once
    assert set(nodes_of(a)) == {"a"}


def test_a_node_publishes_its_advertised_url(
    api_servers: ServerFactory, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind a proxy or in a container the bind address is not what others should call."""
    monkeypatch.setenv("CATALOG_ADVERTISE_URL", "http://catalog-a.example:8000")
    server = api_servers.start(store_url, node_name="a")
    until_listed(server, {"a"})
    assert nodes_of(server)["a"]["address"] == "http://catalog-a.example:8000"


def test_ddl_and_sql_wait_for_nodes(api_servers: ServerFactory, store_url: str) -> None:
    a = api_servers.start(store_url, node_name="a")
    api_servers.start(store_url, node_name="b")
    until_listed(a, {"a", "b"})
    with httpx.Client(base_url=a.url, timeout=30) as http:
        body = {"commands": [TABLE], "wait_for_nodes_s": 10}
        answer = http.post("/v1/ddl", json=body).json()
        assert (answer["nodes_synced"], answer["nodes_lagging"]) == (["a", "b"], [])
        sql = {"sql": "CREATE TABLE U (ID INT PRIMARY KEY)", "wait_for_nodes_s": 10}
        answer = http.post("/v1/sql", json=sql).json()
        assert (answer["nodes_synced"], answer["nodes_lagging"]) == (["a", "b"], [])
        latest = answer["version"]
        for bad in (-1, 61, "soon"):
            refused = http.post("/v1/ddl", json={"commands": [TABLE], "wait_for_nodes_s": bad})
            assert refused.status_code == 422, refused.text
            assert refused.json()["code"] == "VALIDATION_ERROR"
        assert http.get("/v1/versions").json()["latest"] == latest  # refused: nothing applied


def test_clients_round_trip_wait_for_nodes(api_servers: ServerFactory, store_url: str) -> None:
    a = api_servers.start(store_url, node_name="a")
    b = api_servers.start(store_url, node_name="b")
    until_listed(a, {"a", "b"})
    with CatalogClient([a.url, b.url]) as client:
        plain = client.execute(create_table("PLAIN"))
        assert (plain.nodes_synced, plain.nodes_lagging) == (None, None)
        result = client.execute(create_table("T"), wait_for_nodes=10)
        assert (result.nodes_synced, result.nodes_lagging) == (("a", "b"), ())
        by_sql = client.sql("CREATE TABLE U (ID INT PRIMARY KEY)", wait_for_nodes=10)
        assert by_sql.nodes_synced == ("a", "b") and by_sql.version == result.version + 1
        nodes = client.nodes()
        assert [n.name for n in nodes] == ["a", "b"]
        assert {n.address for n in nodes} == {a.url, b.url}
        with pytest.raises(ValueError):
            client.execute(create_table("X"), wait_for_nodes=float("inf"))
        with pytest.raises(InvalidRequestError):
            client.execute(create_table("X"), wait_for_nodes=61)

    async def async_client() -> None:
        async with AsyncCatalogClient(b.url) as aclient:
            done = await aclient.execute(create_table("V"), wait_for_nodes=10)
            assert (done.nodes_synced, done.nodes_lagging) == (("a", "b"), ())
            done = await aclient.sql("CREATE TABLE W (ID INT PRIMARY KEY)", wait_for_nodes=10)
            assert done.nodes_lagging == ()
            assert [n.name for n in await aclient.nodes()] == ["a", "b"]

    asyncio.run(asyncio.wait_for(async_client(), 60))


def test_a_node_that_stopped_applying_is_reported_lagging(
    api_servers: ServerFactory, store_url: str
) -> None:
    a = api_servers.start(store_url, node_name="a")
    stuck = SyncCatalogNode.open(store_url, "stuck", NodeOptions(delay_ms=20, max_clock_skew_ms=10))
    try:
        until_listed(a, {"a", "stuck"})
        stuck._run(stuck.node.service.close())  # it heartbeats on, at its old version
        with CatalogClient(a.url) as client:
            started = time.monotonic()
            result = client.execute(create_table("T"), wait_for_nodes=0.5)
            assert 0.5 <= time.monotonic() - started < 4.0
            assert (result.nodes_synced, result.nodes_lagging) == (("a",), ("stuck",))
            listed = {n.name: n for n in client.nodes()}
            assert listed["stuck"].applied_version < result.version
    finally:
        stuck.close()
    until_listed(a, {"a"})


def test_a_paused_node_process_is_reported_lagging(
    api_servers: ServerFactory, etcd_server: EtcdServer
) -> None:
    store_url = f"etcd://{etcd_server.endpoint}/test-{uuid.uuid4().hex}"
    a = api_servers.start(store_url, node_name="a")
    with node_process(store_url, "paused", 30.0) as proc:
        until_listed(a, {"a", "paused"})
        proc.send_signal(signal.SIGSTOP)
        try:
            with CatalogClient(a.url) as client:
                started = time.monotonic()
                result = client.execute(create_table("T"), wait_for_nodes=1.0)
                assert 1.0 <= time.monotonic() - started < 5.0
                assert (result.nodes_synced, result.nodes_lagging) == (("a",), ("paused",))
                listed = {n.name: n for n in client.nodes()}
                assert listed["paused"].applied_version < result.version
        finally:
            proc.send_signal(signal.SIGCONT)
        with CatalogClient(a.url) as client:
            later = client.execute(create_table("U"), wait_for_nodes=20.0)
            assert (later.nodes_synced, later.nodes_lagging) == (("a", "paused"), ())
    until_listed(a, {"a"})  # the worker deregistered on its way out


def test_cli_nodes_and_exec_wait_for_nodes(
    api_servers: ServerFactory, store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a = api_servers.start(store_url, node_name="a")
    b = api_servers.start(store_url, node_name="b")
    until_listed(a, {"a", "b"})
    url = f"{a.url},{b.url}"

    code = main(["exec", "--url", url, "--sql", "CREATE TABLE T (ID INT PRIMARY KEY)"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "nodes_synced" not in json.loads(out)

    argv = ["exec", "--url", url, "--sql", "CREATE TABLE U (ID INT PRIMARY KEY)"]
    code = main([*argv, "--wait-for-nodes", "10", "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    done = json.loads(out)
    assert (done["nodes_synced"], done["nodes_lagging"]) == (["a", "b"], [])

    code = main(["nodes", "--url", url, "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    listed = json.loads(out)
    assert [n["name"] for n in listed] == ["a", "b"]
    assert all(n["applied_version"] == done["version"] for n in listed)
    assert {n["address"] for n in listed} == {a.url, b.url}

    code = main(["nodes", "--url", url, "-o", "table"])
    out, err = capsys.readouterr()
    assert code == 0, err
    for text in ("NAME", "ADDRESS", "APPLIED", "SAFE TIME", "AGE", a.url, b.url, "2 live node(s)"):
        assert text in out, text

    code = main(
        ["exec", "--url", url, "--sql", "CREATE TABLE V (ID INT)", "--wait-for-nodes", "99"]
    )
    _, err = capsys.readouterr()
    assert code == 1 and "VALIDATION_ERROR" in err

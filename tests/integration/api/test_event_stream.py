"""``GET /v1/events`` as a subscriber meets it: lean events, server-side filters, a stream that
waits for versions not written yet, bookmarks, and subscribers cut off when they fall behind.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from api.client import CatalogClient
from api.server.config import ServerSettings
from api.server.routes.events import _stream
from catalog import CatalogEvent
from catalog.event_feed import EventFilter
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.api.servers import RunningServer, ServerFactory
from tests.integration.api.support import create_table, take
from tests.integration.catalog.support import run

Frame = dict[str, str]


def frames(response: httpx.Response) -> Iterator[Frame]:
    """Yield the stream's frames (``id``, ``event``, ``data``); comments are skipped."""
    frame: Frame = {}
    for line in response.iter_lines():
        if not line:
            if frame:
                yield frame
            frame = {}
        elif not line.startswith(":"):
            key, _, value = line.partition(": ")
            frame[key] = value


def events_of(response: httpx.Response, n: int) -> list[tuple[str, str, dict[str, Any]]]:
    """Return the next ``n`` catalog events: ``(id, kind, data)``; bookmarks are skipped."""
    got = []
    for frame in frames(response):
        if frame.get("event") not in (None, "bookmark"):
            got.append((frame.get("id", ""), frame["event"], json.loads(frame["data"])))
            if len(got) == n:
                break
    return got


def sql(http: httpx.Client, text: str) -> int:
    response = http.post("/v1/sql", json={"sql": text})
    assert response.status_code == 200, response.text
    version: int = response.json()["version"]
    return version


@pytest.fixture
def http(api_server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_server.url, timeout=30) as client:
        yield client


@pytest.mark.timeout(60)
def test_an_alter_of_a_wide_table_sends_the_change_not_the_table(http: httpx.Client) -> None:
    columns = ", ".join(f"C{i} VARCHAR(40)" for i in range(1000))
    sql(http, f"CREATE TABLE WIDE (ID BIGINT PRIMARY KEY, {columns})")
    table = http.get("/v1/schemas/PUBLIC/tables/WIDE").json()["table"]
    version = sql(http, "ALTER TABLE WIDE ADD COLUMN EXTRA INT")
    with http.stream("GET", "/v1/events", params={"from_version": version}) as stream:
        frame = next(frames(stream))
    data = json.loads(frame["data"])
    assert (frame["id"], data["event"]) == (f"{version}.0", "TABLE_ALTER")
    assert data["subject"] == {
        "type": "table",
        "id": table["id"],
        "name": "WIDE",
        "schema": "PUBLIC",
    }
    assert data["entry"]["type"] == "new_columns"
    assert [c["name"] for c in data["entry"]["columns"]] == ["EXTRA"]
    assert len(frame["data"]) < 1024  # the table itself is over 40 KB
    assert len(json.dumps(table)) > 40_000


def until_bookmark(response: httpx.Response, last: int) -> list[tuple[str, str]]:
    """Return the events (kind, object name) sent before a bookmark at ``last`` or later."""
    got = []
    for frame in frames(response):
        if frame.get("event") != "bookmark":
            got.append((frame["event"], json.loads(frame["data"])["subject"]["name"]))
        elif int(frame["id"]) >= last:
            break
    return got


@pytest.mark.timeout(60)
def test_filters_pass_only_what_was_asked_for(api_servers: ServerFactory, store_url: str) -> None:
    server = api_servers.start(store_url, sse_heartbeat_s=0.2)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        first = sql(http, "CREATE SCHEMA S1; CREATE TABLE S1.T (ID INT PRIMARY KEY)")
        sql(http, "CREATE TABLE T (ID INT PRIMARY KEY, V INT)")  # PUBLIC.T
        sql(http, "CREATE TABLE U (ID INT PRIMARY KEY)")
        sql(http, "CREATE INDEX T_V ON T (V)")
        sql(http, "ALTER TABLE U RENAME TO T2")
        last = sql(http, "DROP TABLE T2")

        def passed(**only: str) -> list[tuple[str, str]]:
            params = {"from_version": str(first), **only}
            with http.stream("GET", "/v1/events", params=params) as stream:
                return until_bookmark(stream, last)

        assert passed(table="T") == [
            ("TABLE_CREATE", "T"),  # S1.T
            ("INDEX_CREATE", "T_PK"),
            ("TABLE_CREATE", "T"),  # PUBLIC.T
            ("INDEX_CREATE", "T_PK"),
            ("INDEX_CREATE", "T_V"),
        ]
        assert passed(schema="PUBLIC", table="T", kinds="table_create,INDEX_CREATE") == [
            ("TABLE_CREATE", "T"),
            ("INDEX_CREATE", "T_PK"),
            ("INDEX_CREATE", "T_V"),
        ]
        assert passed(table="U", kinds="TABLE_ALTER") == [("TABLE_ALTER", "T2")]  # renamed
        assert passed(kinds="TABLE_DROP") == [("TABLE_DROP", "T2")]
        assert passed(schema="S1") == [
            ("SCHEMA_CREATE", "S1"),
            ("TABLE_CREATE", "T"),
            ("INDEX_CREATE", "T_PK"),
        ]
        assert [kind for kind, _ in passed()] == [
            "SCHEMA_CREATE",
            "ZONE_CREATE",  # the first table creates the Default zone
            "SET_DEFAULT_ZONE",
            "TABLE_CREATE",
            "INDEX_CREATE",
            "TABLE_CREATE",
            "INDEX_CREATE",
            "TABLE_CREATE",
            "INDEX_CREATE",
            "INDEX_CREATE",
            "TABLE_ALTER",
            "INDEX_RENAME",  # the primary-key index follows its table's name
            "INDEX_REMOVED",
            "TABLE_DROP",
        ]


def test_unknown_kinds_are_refused_with_the_accepted_ones(http: httpx.Client) -> None:
    response = http.get("/v1/events", params={"kinds": "TABLE_CREATE,TABLE_CRATE"})
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "VALIDATION_ERROR"
    assert "TABLE_CRATE is not an event kind" in body["detail"]
    assert "TABLE_ALTER" in body["detail"]
    for bad in ("1.x", "0.1", "-1"):
        refused = http.get("/v1/events", headers={"Last-Event-ID": bad})
        assert refused.status_code == 422 and "stream position" in refused.json()["detail"]


@pytest.mark.timeout(60)
def test_a_version_not_written_yet_is_waited_for(http: httpx.Client) -> None:
    latest = http.get("/v1/versions").json()["latest"]
    writer = threading.Timer(0.5, lambda: [sql(http, f"CREATE SCHEMA W{i}") for i in range(2)])
    with http.stream("GET", "/v1/events", params={"from_version": latest + 2}) as stream:
        assert stream.status_code == 200
        writer.start()
        ((event_id, kind, data),) = events_of(stream, 1)
    writer.join(30)
    assert (event_id, kind, data["subject"]["name"]) == (f"{latest + 2}.0", "SCHEMA_CREATE", "W1")


@pytest.mark.timeout(60)
def test_an_idle_filtered_stream_sends_bookmarks_to_resume_from(
    api_servers: ServerFactory, store_url: str
) -> None:
    server = api_servers.start(store_url, sse_heartbeat_s=0.3)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        start = http.get("/v1/versions").json()["latest"] + 1
        params = {"from_version": start, "table": "WANTED"}
        with http.stream("GET", "/v1/events", params=params) as stream:
            last = sql(http, "CREATE TABLE OTHER (ID INT PRIMARY KEY)")
            bookmark = next(f for f in frames(stream) if f.get("event") == "bookmark")
        assert bookmark["id"] == str(last)
        assert json.loads(bookmark["data"]) == {"version": last}
        wanted = sql(http, "CREATE TABLE WANTED (ID INT PRIMARY KEY)")
        resumed = {"Last-Event-ID": bookmark["id"]}
        with http.stream("GET", "/v1/events", params={"table": "WANTED"}, headers=resumed) as s:
            assert [i for i, _, _ in events_of(s, 2)] == [f"{wanted}.0", f"{wanted}.1"]


def test_the_client_filters_and_resumes_through_bookmarks(api_server: RunningServer) -> None:
    with CatalogClient(api_server.url) as client:
        start = client.versions().latest + 1
        client.execute(create_table("NOISE"))
        client.execute(create_table("KEPT"))
        kinds = [CatalogEvent.TABLE_CREATE]
        with client.events(start, table="KEPT", kinds=kinds) as events:
            (got,) = take(events, 1)
        assert (got.event, got.subject.name, got.version) == (
            CatalogEvent.TABLE_CREATE,
            "KEPT",
            start + 1,
        )


@pytest.mark.timeout(120)
def test_a_subscriber_that_stops_reading_is_cut_off_and_its_slot_freed(
    api_servers: ServerFactory, store_url: str
) -> None:
    server = api_servers.start(store_url, sse_send_timeout_s=1.0)
    host, port = "127.0.0.1", server.settings.port
    columns = ", ".join(f"C{i} VARCHAR(40)" for i in range(400))
    with httpx.Client(base_url=server.url, timeout=30) as http:
        latest = http.get("/v1/versions").json()["latest"]
        reader = socket.create_connection((host, port))
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        request = f"GET /v1/events?from_version={latest + 1} HTTP/1.1\r\nHost: {host}\r\n\r\n"
        reader.sendall(request.encode())
        deadline = time.monotonic() + 60
        metrics = ""
        for i in range(400):  # each create's event carries its 400 columns: buffers fill up
            sql(http, f"CREATE TABLE W{i} (ID BIGINT PRIMARY KEY, {columns})")
            metrics = http.get("/metrics").text
            if "catalog_sse_subscribers 0.0" in metrics or time.monotonic() > deadline:
                break
        reader.close()
    assert "catalog_sse_subscribers 0.0" in metrics, "the stream was not cut off"


def test_a_stream_that_falls_behind_is_told_where_to_resume(store_url: str) -> None:
    settings = ServerSettings(store=store_url, sse_backlog_versions=2)

    async def scenario() -> list[str]:
        opts = NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        async with CatalogNode.open(store_url, "n1", opts) as node:
            position = (node.service.latest_version + 1, -1)
            stream = _stream(node, position, EventFilter(), settings)
            sent = [await anext(stream)]  # the opening comment: the stream is subscribed
            for name in ("A", "B", "C", "D"):  # nobody reads meanwhile
                await node.manager.execute(create_table(name))
            sent += [frame async for frame in stream]
            return sent

    sent = run(scenario())
    last = sent[-1]
    assert last.startswith("event: error\n")
    error = json.loads(last.split("data: ", 1)[1])
    assert error["code"] == "SUBSCRIBER_TOO_SLOW"
    assert f"Last-Event-ID: {error['resume']}" in error["detail"]
    delivered = [f.split("\n", 1)[0].removeprefix("id: ") for f in sent[1:-1]]
    assert delivered[-1].split(".")[0] == error["resume"]  # right after what it was sent

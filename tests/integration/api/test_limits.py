"""Each limit is configurable and refuses cleanly: commands per batch, streams, request time."""

from __future__ import annotations

import time

import httpx

from tests.integration.api.servers import ServerFactory

TABLE = {
    "op": "create_table",
    "columns": [{"name": "ID", "type": "INT64", "nullable": False}],
    "primary_key": ["ID"],
}


def test_commands_per_batch(api_servers: ServerFactory, store_url: str) -> None:
    server = api_servers.start(store_url, max_commands=3)
    four = [{**TABLE, "name": f"T{i}"} for i in range(4)]
    refused = httpx.post(server.url + "/v1/ddl", json={"commands": four}, timeout=10)
    assert (refused.status_code, refused.json()["code"]) == (413, "TOO_MANY_COMMANDS")
    sql = "; ".join(f"CREATE TABLE S{i} (ID BIGINT PRIMARY KEY)" for i in range(4))
    refused = httpx.post(server.url + "/v1/sql", json={"sql": sql}, timeout=10)
    assert (refused.status_code, refused.json()["code"]) == (413, "TOO_MANY_COMMANDS")
    catalog = httpx.get(server.url + "/v1/catalog", timeout=10).json()
    assert catalog["tables"] == []  # nothing of a refused batch was applied
    ok = httpx.post(server.url + "/v1/ddl", json={"commands": four[:3]}, timeout=10)
    assert ok.status_code == 200


def test_event_streams_per_node(api_servers: ServerFactory, tmp_path: object) -> None:
    server = api_servers.start(f"sqlite:///{tmp_path}/catalog.db", max_subscribers=1)
    url = server.url + "/v1/events?from_version=1"
    with httpx.Client(timeout=10) as http:
        with http.stream("GET", url) as first:
            assert first.status_code == 200
            lines = first.iter_lines()  # kept: dropping the iterator would close the stream
            assert next(lines) == ": catalog events"
            second = http.get(url)
            assert (second.status_code, second.json()["code"]) == (503, "TOO_MANY_SUBSCRIBERS")
            assert second.headers["retry-after"] == "1"
        deadline = time.monotonic() + 10
        while True:  # the first stream's slot frees once the server notices it closed
            with http.stream("GET", url) as again:
                if again.status_code == 200:
                    break
            assert time.monotonic() < deadline, "the closed stream's slot was never freed"
            time.sleep(0.1)


def test_request_timeout(api_servers: ServerFactory, tmp_path: object) -> None:
    server = api_servers.start(
        f"sqlite:///{tmp_path}/catalog.db",
        delay_ms=0,
        max_clock_skew_ms=3000,
        request_timeout_s=0.3,
    )
    now = httpx.get(server.url + "/v1/time", timeout=10).json()["now"]
    later = now + (2000 << 16)  # 2 s ahead: the read waits for the clock to get there
    answer = httpx.get(server.url + "/v1/catalog", params={"at": str(later)}, timeout=10)
    assert (answer.status_code, answer.json()["code"]) == (504, "TIMEOUT")  # not the 2 s wait
    assert httpx.get(server.url + "/v1/catalog", timeout=10).status_code == 200

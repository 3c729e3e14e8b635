"""Hostile input through a real server: limits refuse it cleanly, and nobody else pays for it."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Mapping
from pathlib import Path

import httpx
import pytest

from api.wire.roles import Role
from catalog.commands.column_definitions import MAX_COLUMNS
from tests.integration.api.servers import RunningServer, ServerFactory, free_port, issue_token
from updatelog import open_log
from updatelog.kv import Put

CATALOG = str(Path(sys.executable).with_name("catalog"))


def _table(name: str, columns: int = 1) -> dict[str, object]:
    return {
        "op": "create_table",
        "name": name,
        "columns": [{"name": f"C{i}", "type": "INT64", "nullable": i != 0} for i in range(columns)],
        "primary_key": ["C0"],
    }


def _ddl(server: RunningServer, *commands: Mapping[str, object]) -> httpx.Response:
    return httpx.post(server.url + "/v1/ddl", json={"commands": list(commands)}, timeout=30)


def _tables(server: RunningServer) -> list[str]:
    answer = httpx.get(server.url + "/v1/schemas/PUBLIC/tables", timeout=10)
    return list(answer.json())


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("A\u200bB", "invisible formatting character"),  # zero-width space
        ("A\u202eB", "invisible formatting character"),  # right-to-left override
        ("A\x07B", "control character"),
        ("A/B", "'/'"),
        ("A\u2028B", "line separator"),
        (" ", "blank"),
    ],
)
def test_names_a_person_cannot_see_or_reach_are_refused(
    api_server: RunningServer, name: str, said: str
) -> None:
    answer = _ddl(api_server, _table(name))
    assert (answer.status_code, answer.json()["code"]) == (422, "VALIDATION_ERROR")
    assert said in answer.json()["detail"]
    assert _tables(api_server) == []


def test_names_are_one_name_however_the_accents_are_written(api_server: RunningServer) -> None:
    assert _ddl(api_server, _table("CAFE\u0301")).status_code == 200  # e + combining acute
    assert _tables(api_server) == ["CAF\u00c9"]  # stored composed (NFC)
    again = _ddl(api_server, _table("CAF\u00c9"))
    assert (again.status_code, again.json()["code"]) == (409, "TABLE_EXISTS")


def test_a_lone_surrogate_fails_its_own_request_only(api_server: RunningServer) -> None:
    """Ten valid DDLs group-committed with one holding a lone surrogate: ten commit."""
    bad = json.dumps({"commands": [_table("X")]}).replace('"X"', '"X\\ud800"')
    bad_default = json.dumps(
        {
            "commands": [
                {
                    **_table("Y"),
                    "columns": [
                        {"name": "C0", "type": "INT64", "nullable": False},
                        {"name": "S", "type": "STRING", "default": "\u0000"},
                    ],
                }
            ]
        }
    ).replace("\\u0000", "\\udc00")

    async def run() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=api_server.url, timeout=30) as http:
            headers = {"content-type": "application/json"}
            good = [http.post("/v1/ddl", json={"commands": [_table(f"T{i}")]}) for i in range(10)]
            odd = [
                http.post("/v1/ddl", content=body, headers=headers) for body in (bad, bad_default)
            ]
            return await asyncio.gather(*good, *odd)

    *good, bad_name, bad_value = asyncio.run(run())
    assert [r.status_code for r in good] == [200] * 10
    assert (bad_name.status_code, bad_name.json()["code"]) == (422, "VALIDATION_ERROR")
    assert "surrogate" in bad_name.json()["detail"]
    assert bad_value.status_code == 422, bad_value.text
    assert bad_value.json()["code"] == "VALIDATION_ERROR"
    assert sorted(_tables(api_server)) == sorted(f"T{i}" for i in range(10))


def test_columns_per_table_are_limited(api_server: RunningServer) -> None:
    wide = _ddl(api_server, _table("WIDE", MAX_COLUMNS + 1))
    assert (wide.status_code, wide.json()["code"]) == (422, "TOO_MANY_COLUMNS")
    assert f"at most {MAX_COLUMNS}" in wide.json()["detail"]
    assert _ddl(api_server, _table("FULL", MAX_COLUMNS)).status_code == 200
    add = {"op": "add_columns", "table": "FULL", "columns": [{"name": "ONE_MORE", "type": "INT32"}]}
    refused = _ddl(api_server, add)
    assert (refused.status_code, refused.json()["code"]) == (422, "TOO_MANY_COLUMNS")


def test_sql_statements_are_counted_before_parsing(
    api_servers: ServerFactory, tmp_path: object
) -> None:
    server = api_servers.start(f"sqlite:///{tmp_path}/catalog.db", max_commands=1000)
    script = "CREATE SCHEMA S; -- one ; two\n" * 30_000  # 900 KB, under the body limit
    answer = httpx.post(server.url + "/v1/sql", json={"sql": script}, timeout=60)
    assert (answer.status_code, answer.json()["code"]) == (413, "TOO_MANY_COMMANDS")
    assert "at most 1000 statements, this one 30000" in answer.json()["detail"]


def test_sql_nesting_is_limited(api_server: RunningServer) -> None:
    deep = "(" * 50_000 + "1" + ")" * 50_000
    sql = f"CREATE TABLE T (ID INT PRIMARY KEY, V INT DEFAULT {deep})"
    answer = httpx.post(api_server.url + "/v1/sql", json={"sql": sql}, timeout=60)
    assert (answer.status_code, answer.json()["code"]) == (422, "VALIDATION_ERROR")
    assert "nests parentheses 50001 deep; at most 64" in answer.json()["detail"]
    assert httpx.get(api_server.url + "/healthz", timeout=10).status_code == 200


def test_event_stream_slots_are_taken_at_admission(
    api_servers: ServerFactory, tmp_path: object
) -> None:
    """Forty simultaneous subscribers against a limit of four: exactly four get a stream."""
    server = api_servers.start(f"sqlite:///{tmp_path}/catalog.db", max_subscribers=4)

    async def run() -> tuple[list[int], int]:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            streams: list[httpx.Response] = []
            requests = [http.build_request("GET", "/v1/events?from_version=1") for _ in range(40)]
            answers = await asyncio.gather(*(http.send(r, stream=True) for r in requests))
            streams = [a for a in answers if a.status_code == 200]
            statuses = sorted(a.status_code for a in answers)
            for answer in answers:
                await answer.aclose()
            # Every slot comes back: four new streams are admitted once the old ones closed.
            admitted = 0
            for _ in range(100):
                again = [await http.send(r, stream=True) for r in requests[:4]]
                admitted = sum(a.status_code == 200 for a in again)
                for answer in again:
                    await answer.aclose()
                if admitted == 4:
                    break
                await asyncio.sleep(0.1)
            assert len(streams) <= 4
            return statuses, admitted

    statuses, admitted = asyncio.run(run())
    assert statuses == [200] * 4 + [503] * 36
    assert admitted == 4


def test_event_streams_per_principal(api_servers: ServerFactory, tmp_path: object) -> None:
    server = api_servers.start(
        f"sqlite:///{tmp_path}/catalog.db", max_subscribers=10, max_subscribers_per_principal=2
    )
    url = server.url + "/v1/events?from_version=1"
    with (
        httpx.Client(timeout=10) as http,
        http.stream("GET", url) as first,
        http.stream("GET", url) as second,
    ):
        assert (first.status_code, second.status_code) == (200, 200)
        third = http.get(url)
        assert (third.status_code, third.json()["code"]) == (503, "TOO_MANY_SUBSCRIBERS")
        assert "2 per principal" in third.json()["detail"]


def test_ddl_in_flight_is_limited_per_principal(
    api_servers: ServerFactory, tmp_path: object
) -> None:
    """Alice sends six DDLs at once against a limit of two: two run, four are told to wait,
    and Bob's DDL runs beside them."""
    store = f"sqlite:///{tmp_path}/catalog.db"
    server = api_servers.start(
        store, auth="on", delay_ms=2000, max_inflight_ddl=10, max_inflight_ddl_per_principal=2
    )
    alice, bob = (issue_token(store, Role.WRITER, subject=s) for s in ("alice", "bob"))

    async def run() -> tuple[list[httpx.Response], httpx.Response]:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:

            def ddl(token: str, table: str) -> Awaitable[httpx.Response]:
                headers = {"Authorization": f"Bearer {token}"}
                return http.post("/v1/ddl", json={"commands": [_table(table)]}, headers=headers)

            *alices, bobs = await asyncio.gather(
                *(ddl(alice, f"A{i}") for i in range(6)), ddl(bob, "B")
            )
            return alices, bobs

    alices, bobs = asyncio.run(run())
    assert sorted(a.status_code for a in alices) == [200] * 2 + [429] * 4
    refused = next(a for a in alices if a.status_code == 429)
    assert refused.json()["code"] == "TOO_MANY_REQUESTS"
    assert "2 from one caller" in refused.json()["detail"]
    assert refused.headers["Retry-After"] == "1"
    assert bobs.status_code == 200
    headers = {"Authorization": f"Bearer {alice}"}
    tables = httpx.get(server.url + "/v1/schemas/PUBLIC/tables", headers=headers, timeout=10)
    assert len(tables.json()) == 3  # nothing of a refused request was written
    again = httpx.post(
        server.url + "/v1/ddl", json={"commands": [_table("LATER")]}, headers=headers, timeout=30
    )
    assert again.status_code == 200  # the slots came back


def _closed_by_server(sock: socket.socket, drip: bytes, within_s: float) -> bool:
    """Send ``drip`` a byte every 0.2 s; return whether the server closed the connection."""
    deadline = time.monotonic() + within_s
    sock.settimeout(0.2)
    for byte in itertools.cycle(drip):
        if time.monotonic() > deadline:
            return False
        try:
            sock.sendall(bytes([byte]))
            if sock.recv(1024) == b"":
                return True
        except TimeoutError:
            continue
        except OSError:  # reset: closed
            return True
    raise AssertionError("unreachable")


def test_slow_request_headers_are_cut_off(api_servers: ServerFactory, tmp_path: object) -> None:
    """Slowloris: headers dripped a byte at a time, or nothing at all, lose the connection."""
    server = api_servers.start(f"sqlite:///{tmp_path}/catalog.db", header_timeout_s=1.0)
    address = ("127.0.0.1", server.settings.port)
    with socket.create_connection(address) as dripping:
        drip = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000
        assert _closed_by_server(dripping, drip, within_s=10)
    with socket.create_connection(address) as silent:
        silent.settimeout(10)
        assert silent.recv(1) == b""  # closed after about a second, not kept forever
    # A client that sends whole requests keeps its connection across the timeout.
    with httpx.Client(base_url=server.url, timeout=10) as http:
        for _ in range(3):
            assert http.get("/healthz").status_code == 200
            time.sleep(0.6)
        assert http.get("/healthz").status_code == 200
        assert http.post("/v1/ddl", json={"commands": [_table("T")]}).status_code == 200


def test_without_auth_only_loopback_names_are_answered(
    api_servers: ServerFactory, tmp_path: object
) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: the Host gives it away."""
    server = api_servers.start(
        f"sqlite:///{tmp_path}/catalog.db", allowed_hosts=frozenset({"catalog.internal"})
    )
    body = {"commands": [_table("T")]}
    evil = httpx.post(
        server.url + "/v1/ddl", json=body, headers={"host": "rebind.example:80"}, timeout=10
    )
    assert (evil.status_code, evil.json()["code"]) == (403, "HOST_NOT_ALLOWED")
    assert "rebind.example" in evil.json()["detail"]
    assert _tables(server) == []
    for host in ("localhost", "127.0.0.1:1", "[::1]:8000", "app.localhost", "catalog.internal"):
        answer = httpx.get(server.url + "/healthz", headers={"host": host}, timeout=10)
        assert answer.status_code == 200, host


def test_with_auth_every_host_needs_a_token(api_servers: ServerFactory, tmp_path: object) -> None:
    server = api_servers.start(f"sqlite:///{tmp_path}/catalog.db", auth="on")
    answer = httpx.get(
        server.url + "/v1/catalog", headers={"host": "catalog.example.com"}, timeout=10
    )
    assert (answer.status_code, answer.json()["code"]) == (401, "UNAUTHENTICATED")


def test_table_answers_do_not_grow_with_history(api_server: RunningServer) -> None:
    """Each ALTER adds a schema version; answers carry the current one, history comes paged."""
    assert _ddl(api_server, _table("T", 200)).status_code == 200
    for i in range(25):
        add = {"op": "add_columns", "table": "T", "columns": [{"name": f"N{i}", "type": "INT32"}]}
        assert _ddl(api_server, add).status_code == 200
    url = api_server.url + "/v1/schemas/PUBLIC/tables/T"
    table = httpx.get(url, timeout=10).json()["table"]
    assert [v["version"] for v in table["versions"]] == [26]
    assert len(table["versions"][0]["columns"]) == 225
    whole = httpx.get(api_server.url + "/v1/catalog", timeout=10).json()
    assert [len(t["versions"]) for t in whole["tables"]] == [1]

    seen: list[int] = []
    start: int | None = 1
    while start is not None:
        page = httpx.get(url + "/schema-versions", params={"from": start, "limit": 10}, timeout=10)
        assert page.status_code == 200
        body = page.json()
        seen += [v["version"] for v in body["schema_versions"]]
        start = body["next_schema_version"]
    assert seen == list(range(1, 27))
    too_many = httpx.get(url + "/schema-versions", params={"limit": 101}, timeout=10)
    assert (too_many.status_code, too_many.json()["code"]) == (422, "VALIDATION_ERROR")


def test_the_page_is_served_with_a_strict_policy(api_server: RunningServer) -> None:
    page = httpx.get(api_server.url + "/ui/", timeout=10)
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["x-content-type-options"] == "nosniff"
    script = httpx.get(api_server.url + "/ui/app.js", timeout=10).text
    assert (
        "sessionStorage" in script and "localStorage" not in script
    )  # the token dies with the tab
    answer = httpx.get(api_server.url + "/v1/catalog", timeout=10)
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" not in answer.headers


def test_a_corrupted_stored_value_is_refused_not_guessed(
    api_servers: ServerFactory, store_url: str
) -> None:
    """A byte flipped in the store: a server will not start on it, and says why in one line."""
    first = api_servers.start(store_url, node_name="n1")
    assert _ddl(first, _table("T")).status_code == 200
    first.stop()

    async def corrupt() -> None:
        log = open_log(store_url)
        try:
            key = log.keys.update(2)
            stored = (await log.store.range(key, key + "\0")).value
            assert stored is not None
            flipped = stored[:-1] + bytes([stored[-1] ^ 0xFF])
            await log.store.txn([], [Put(key, flipped)])
        finally:
            await log.close()

    asyncio.run(corrupt())
    port = str(free_port())
    flags = ["--port", port, "--delay-ms", "20", "--max-clock-skew-ms", "10"]
    serve = subprocess.run(
        [CATALOG, "serve", "--store", store_url, *flags],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert serve.returncode != 0
    assert "error: FORMAT_ERROR: " in serve.stderr and "corrupted" in serve.stderr
    assert "Traceback" not in serve.stderr and "Uvicorn running" not in serve.stderr


def test_a_request_id_reused_for_other_content_is_refused(api_server: RunningServer) -> None:
    """A retry is answered with its first outcome; the same id for another request is a 422."""

    def sql(text: str, request_id: str) -> httpx.Response:
        body = {"sql": text, "request_id": request_id}
        return httpx.post(api_server.url + "/v1/sql", json=body, timeout=30)

    first = sql("CREATE TABLE t (id INT PRIMARY KEY)", "nightly-1")
    assert first.status_code == 200
    retry = sql("create table   T (ID int primary key)", "nightly-1")  # the same commands
    assert retry.json() == first.json()
    reused = sql("CREATE TABLE u (id INT PRIMARY KEY)", "nightly-1")
    assert (reused.status_code, reused.json()["code"]) == (422, "REQUEST_ID_REUSED")
    assert "already used for a different request" in reused.json()["detail"]
    assert "version" in reused.json()["detail"]

    refused = sql("CREATE TABLE t (id INT PRIMARY KEY)", "nightly-2")
    assert (refused.status_code, refused.json()["code"]) == (409, "TABLE_EXISTS")
    assert sql("CREATE TABLE t (id INT PRIMARY KEY)", "nightly-2").json() == refused.json()
    reused_refusal = sql("CREATE TABLE v (id INT PRIMARY KEY)", "nightly-2")
    assert (reused_refusal.status_code, reused_refusal.json()["code"]) == (
        422,
        "REQUEST_ID_REUSED",
    )
    assert "was refused" in reused_refusal.json()["detail"]
    # Any command that parses can be recorded with its id (this default is a 71-bit integer).
    huge = sql(f"CREATE TABLE w (id INT PRIMARY KEY, d DOUBLE DEFAULT {2**70})", "nightly-3")
    assert huge.status_code == 200, huge.text
    assert (
        sql(f"CREATE TABLE w (id INT PRIMARY KEY, d DOUBLE DEFAULT {2**70})", "nightly-3").json()
        == huge.json()
    )
    assert _tables(api_server) == ["T", "W"]
    latest = httpx.get(api_server.url + "/v1/versions", timeout=10).json()["latest"]
    assert latest == huge.json()["version"]

    table = httpx.get(api_server.url + "/v1/schemas/PUBLIC/tables/T", timeout=10).json()
    table_id = table["table"]["id"]

    def commit(path: str) -> httpx.Response:
        body = {
            "table_id": table_id,
            "schema_version": 1,
            "mode": "append",
            "files": [{"path": path, "partition": 0, "rows": 1, "size": 10}],
            "request_id": "load-1",
        }
        return httpx.post(api_server.url + "/v1/data/commits", json=body, timeout=30)

    committed = commit("a.parquet")
    assert committed.status_code == 200
    assert commit("a.parquet").json() == committed.json()
    other = commit("b.parquet")
    assert (other.status_code, other.json()["code"]) == (422, "REQUEST_ID_REUSED")
    listed = httpx.get(
        api_server.url + "/v1/data/commits", params={"table_id": table_id}, timeout=10
    ).json()
    assert [c["seq"] for c in listed["commits"]] == [committed.json()["seq"]]

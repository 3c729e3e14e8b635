"""The REST API over raw HTTP against real uvicorn servers: every endpoint, every error class."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.api.servers import RunningServer, ServerFactory

ORDERS = {
    "op": "create_table",
    "schema": "PUBLIC",
    "name": "ORDERS",
    "columns": [
        {"name": "ID", "type": "INT64", "nullable": False},
        {"name": "AMOUNT", "type": "DECIMAL", "precision": 18, "scale": 2},
    ],
    "primary_key": ["ID"],
}


def _problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["code"] == code and body["status"] == status and body["detail"]
    return body


@pytest.fixture
def http(api_server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_server.url, timeout=20) as client:
        yield client


def test_ddl_then_reads_by_version_and_time(http: httpx.Client) -> None:
    created = http.post("/v1/ddl", json={"commands": [ORDERS]})
    assert created.status_code == 200
    result = created.json()
    assert result["applied"] == [True] and result["version"] == 2
    table = http.get("/v1/schemas/PUBLIC/tables/ORDERS").json()
    assert table["table"]["name"] == "ORDERS" and table["version"] == 2
    assert [i["name"] for i in table["indexes"]] == ["ORDERS_PK"]
    assert table["zone"]["name"] == "Default"
    assert http.get("/v1/schemas/PUBLIC/tables/ORDERS", params={"version": 2}).json() == table
    now = http.get("/v1/time").json()["now"]
    at_now = http.get("/v1/catalog", params={"at": str(now)}).json()
    assert at_now["version"] == 2 and [t["name"] for t in at_now["tables"]] == ["ORDERS"]
    v1 = http.get("/v1/catalog", params={"version": 1}).json()
    assert v1["tables"] == [] and [s["name"] for s in v1["schemas"]] == ["PUBLIC", "SYSTEM"]
    rfc3339 = dt.datetime.now(dt.UTC).isoformat()
    assert http.get("/v1/catalog", params={"at": rfc3339}).json()["version"] == 2
    assert http.get("/v1/schemas/PUBLIC/tables").json() == ["ORDERS"]
    index = http.get("/v1/schemas/PUBLIC/indexes/ORDERS_PK").json()
    assert index["index"]["unique"] is True
    zone = http.get('/v1/zones/"Default"').json()  # a mixed-case name is typed in quotes
    assert zone["table_ids"] == [table["table"]["id"]]
    waited = http.post("/v1/schema-sync/wait", params={"at": str(now)}).json()
    assert waited == {"at": now, "version": 2}


def test_sql_batch_is_atomic(http: httpx.Client) -> None:
    ok = http.post(
        "/v1/sql",
        json={
            "sql": "CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(10));"
            " CREATE INDEX t_v ON t (v)"
        },
    )
    assert ok.status_code == 200 and ok.json()["applied"] == [True, True]
    refused = http.post(
        "/v1/sql",
        json={"sql": "CREATE TABLE u (id INT PRIMARY KEY); CREATE TABLE t (id INT PRIMARY KEY)"},
    )
    _problem(refused, 409, "TABLE_EXISTS")
    _problem(http.get("/v1/schemas/PUBLIC/tables/U"), 404, "TABLE_NOT_FOUND")
    unsupported = http.post(
        "/v1/sql", json={"sql": "CREATE TABLE x (id INT PRIMARY KEY); SELECT 1"}
    )
    body = _problem(unsupported, 422, "VALIDATION_ERROR")
    assert "statement 2" in body["detail"] and "SELECT 1" in body["detail"]


def test_request_id_and_idempotency_key_apply_once(http: httpx.Client) -> None:
    first = http.post("/v1/ddl", json={"commands": [ORDERS], "request_id": "abc"}).json()
    again = http.post("/v1/ddl", json={"commands": [ORDERS], "request_id": "abc"}).json()
    assert again == first
    by_header = http.post(
        "/v1/ddl", json={"commands": [ORDERS]}, headers={"Idempotency-Key": "abc"}
    )
    assert by_header.json() == first
    mismatch = http.post(
        "/v1/ddl", json={"commands": [ORDERS], "request_id": "x"}, headers={"Idempotency-Key": "y"}
    )
    _problem(mismatch, 422, "VALIDATION_ERROR")
    assert http.get("/v1/versions").json()["latest"] == first["version"]


@pytest.mark.parametrize(
    ("request_kwargs", "status", "code"),
    [
        (
            {"content": b"{not json", "headers": {"content-type": "application/json"}},
            400,
            "MALFORMED_REQUEST",
        ),
        ({"json": {"commands": []}}, 422, "VALIDATION_ERROR"),
        ({"json": {"commands": [{"op": "drop_everything"}]}}, 422, "VALIDATION_ERROR"),
        (
            {"json": {"commands": [{"op": "create_schema", "name": "S", "extra": 1}]}},
            422,
            "VALIDATION_ERROR",
        ),
        ({"json": {"commands": [{"op": "create_schema", "name": 5}]}}, 422, "VALIDATION_ERROR"),
        ({"json": {"commands": [{"op": "create_schema", "name": ""}]}}, 422, "VALIDATION_ERROR"),
        ({"json": {"commands": {"op": "create_schema", "name": "S"}}}, 422, "VALIDATION_ERROR"),
        ({"json": ["not", "an", "object"]}, 422, "VALIDATION_ERROR"),
        ({"json": {"commands": [ORDERS], "request_id": ""}}, 422, "VALIDATION_ERROR"),
        ({"json": {"commands": [{"op": "drop_table", "name": "NOPE"}]}}, 404, "TABLE_NOT_FOUND"),
        (
            {"json": {"commands": [{"op": "drop_schema", "name": "SYSTEM"}]}},
            422,
            "VALIDATION_ERROR",
        ),
        (
            {"json": {"commands": [{"op": "create_zone", "name": "Z"}] * 2}},
            409,
            "ZONE_EXISTS",
        ),
        (  # the table creates the Default zone, which then is the default
            {"json": {"commands": [ORDERS, {"op": "drop_zone", "name": "Default"}]}},
            409,
            "ZONE_IN_USE",
        ),
        (
            {"json": {"commands": [{"op": "alter_zone", "name": "Default", "partitions": 3}]}},
            422,
            "UNSUPPORTED_CHANGE",
        ),
        (
            {"json": {"commands": [{"op": "start_building_index", "index_id": 999}]}},
            404,
            "INDEX_NOT_FOUND",
        ),
        (
            {"content": b"x" * (1024 * 1024 + 1), "headers": {"content-type": "application/json"}},
            413,
            "REQUEST_TOO_LARGE",
        ),
    ],
)
def test_bad_ddl_is_a_clean_4xx_and_changes_nothing(
    http: httpx.Client, request_kwargs: dict[str, Any], status: int, code: str
) -> None:
    before = http.get("/v1/versions").json()["latest"]
    _problem(http.post("/v1/ddl", **request_kwargs), status, code)
    assert http.get("/v1/versions").json()["latest"] == before


def test_conflict_codes_of_the_catalog(http: httpx.Client) -> None:
    assert http.post("/v1/ddl", json={"commands": [ORDERS]}).status_code == 200
    _problem(http.post("/v1/ddl", json={"commands": [ORDERS]}), 409, "TABLE_EXISTS")
    schema = {"op": "create_schema", "name": "S"}
    assert http.post("/v1/ddl", json={"commands": [schema]}).status_code == 200
    _problem(http.post("/v1/ddl", json={"commands": [schema]}), 409, "SCHEMA_EXISTS")
    table_in_s = {**ORDERS, "schema": "S"}
    assert http.post("/v1/ddl", json={"commands": [table_in_s]}).status_code == 200
    _problem(
        http.post("/v1/ddl", json={"commands": [{"op": "drop_schema", "name": "S"}]}),
        409,
        "SCHEMA_NOT_EMPTY",
    )
    pk = http.get("/v1/schemas/PUBLIC/indexes/ORDERS_PK").json()["index"]["id"]
    _problem(
        http.post("/v1/ddl", json={"commands": [{"op": "remove_index", "index_id": pk}]}),
        409,
        "INDEX_STATUS_CONFLICT",
    )
    _problem(
        http.post(
            "/v1/ddl",
            json={
                "commands": [
                    {
                        "op": "add_columns",
                        "table": "ORDERS",
                        "columns": [{"name": "ID", "type": "INT8"}],
                    }
                ]
            },
        ),
        409,
        "COLUMN_EXISTS",
    )


@pytest.mark.parametrize(
    ("path", "params", "status", "code"),
    [
        ("/v1/schemas/PUBLIC/tables/NOPE", {}, 404, "TABLE_NOT_FOUND"),
        ("/v1/schemas/NOPE/tables/T", {}, 404, "SCHEMA_NOT_FOUND"),
        ("/v1/schemas/PUBLIC/indexes/NOPE", {}, 404, "INDEX_NOT_FOUND"),
        ("/v1/zones/NOPE", {}, 404, "ZONE_NOT_FOUND"),
        ("/v1/catalog", {"version": 99}, 404, "VERSION_NOT_FOUND"),
        ("/v1/catalog", {"version": -1}, 422, "VALIDATION_ERROR"),
        ("/v1/catalog", {"version": "x"}, 422, "VALIDATION_ERROR"),
        ("/v1/catalog", {"version": 1, "at": "1"}, 422, "VALIDATION_ERROR"),
        ("/v1/catalog", {"at": "yesterday"}, 422, "VALIDATION_ERROR"),
        ("/v1/catalog", {"at": "2026-01-01T00:00:00"}, 422, "VALIDATION_ERROR"),
        (
            "/v1/catalog",
            {"at": str((int(time.time() * 1000) + 3_600_000) << 16)},
            422,
            "TIMESTAMP_IN_FUTURE",
        ),
        ("/v1/diff", {"from": 1}, 422, "VALIDATION_ERROR"),
        ("/v1/diff", {"from": 1, "to": 99}, 404, "VERSION_NOT_FOUND"),
        ("/v1/versions/99/ready", {"timeout": 0.2}, 504, "TIMEOUT"),
        ("/v1/versions/0/ready", {}, 422, "VALIDATION_ERROR"),
        ("/v1/no-such-thing", {}, 404, "NOT_FOUND"),
    ],
)
def test_bad_reads_are_clean_errors(
    http: httpx.Client, path: str, params: dict[str, Any], status: int, code: str
) -> None:
    _problem(http.get(path, params=params), status, code)


def test_version_0_is_the_empty_catalog_before_version_1(http: httpx.Client) -> None:
    """As in Ignite: by number, and as of any time before version 1 activates."""
    for params in ({"version": 0}, {"at": "1970-01-01T00:00:00Z"}):
        body = http.get("/v1/catalog", params=params).json()
        assert body["version"] == 0, body
        assert body["schemas"] == [] and body["zones"] == [] and body["tables"] == []
    diff = http.get("/v1/diff", params={"from": 0, "to": 1}).json()
    added = {(c["object_type"], c["name"]) for c in diff["changes"] if c["change"] == "added"}
    assert {("schema", "PUBLIC"), ("schema", "SYSTEM")} <= added, diff


def test_wrong_method_is_405(http: httpx.Client) -> None:
    _problem(http.delete("/v1/catalog"), 405, "METHOD_NOT_ALLOWED")


def test_versions_diff_and_ready(http: httpx.Client) -> None:
    http.post("/v1/ddl", json={"commands": [ORDERS]})
    http.post(
        "/v1/sql",
        json={"sql": "ALTER TABLE orders ADD COLUMN note VARCHAR(20); DROP INDEX IF EXISTS nope"},
    )
    versions = http.get("/v1/versions").json()
    assert versions["earliest"] == 1 and versions["latest"] == 3
    activations = [v["activation_ts"] for v in versions["versions"]]
    assert activations == sorted(activations) and len(set(activations)) == 3
    ready = http.get("/v1/versions/3/ready", params={"timeout": 5}).json()
    assert ready["ready"] is True and ready["activation_ts"] == activations[2]
    changes = http.get("/v1/diff", params={"from": 1, "to": 3}).json()["changes"]
    assert {(c["object_type"], c["name"], c["change"]) for c in changes} == {
        ("zone", "Default", "added"),  # created by the first table
        ("table", "ORDERS", "added"),
        ("index", "ORDERS_PK", "added"),
    }
    altered = http.get("/v1/diff", params={"from": 2, "to": 3}).json()["changes"]
    assert [(c["object_type"], c["change"]) for c in altered] == [("table", "altered")]
    # Only what changed: no whole table before and after, the one column added.
    assert altered[0]["before"] is None and altered[0]["after"] is None
    assert altered[0]["fields"] == [{"field": "schema_version", "before": 1, "after": 2}]
    (note,) = altered[0]["columns"]
    assert (note["name"], note["change"], note["before"]) == ("NOTE", "added", None)
    assert note["after"]["type"] == "STRING" and note["after"]["length"] == 20


def test_ready_waits_for_a_version_that_arrives_later(http: httpx.Client) -> None:
    latest = http.get("/v1/versions").json()["latest"]
    answer: dict[str, Any] = {}

    def wait() -> None:
        answer["response"] = http.get(f"/v1/versions/{latest + 1}/ready", params={"timeout": 10})

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.2)
    assert waiter.is_alive()
    http.post("/v1/ddl", json={"commands": [ORDERS]})
    waiter.join(15)
    assert answer["response"].status_code == 200


def test_health_ready_metrics_nodes(http: httpx.Client) -> None:
    assert http.get("/healthz").json() == {"status": "ok"}
    assert http.get("/readyz").json()["status"] == "ready"
    http.post("/v1/ddl", json={"commands": [ORDERS]})
    http.post("/v1/ddl", json={"commands": [ORDERS]})
    metrics = http.get("/metrics").text
    assert 'catalog_ddl_commands_total{op="create_table",outcome="ok"} 1.0' in metrics
    assert 'catalog_ddl_commands_total{op="create_table",outcome="TABLE_EXISTS"} 1.0' in metrics
    for name in (
        "catalog_execute_seconds_bucket",
        "catalog_cas_conflicts_total",
        "catalog_cas_retries_total",
        "catalog_latest_version 2.0",
        "catalog_earliest_version 1.0",
        "catalog_apply_lag_versions 0.0",
        "catalog_safe_time_lag_ms",
        "catalog_sse_subscribers 0.0",
    ):
        assert name in metrics, name
    nodes = http.get("/v1/cluster/nodes").json()["nodes"]
    assert nodes[0]["applied_version"] == 2


def test_openapi_is_served(http: httpx.Client) -> None:
    spec = http.get("/openapi.json").json()
    for path in (
        "/v1/ddl",
        "/v1/sql",
        "/v1/catalog",
        "/v1/schemas/{schema}/tables/{name}",
        "/v1/versions",
        "/v1/versions/{version}/ready",
        "/v1/diff",
        "/v1/events",
        "/v1/time",
        "/v1/schema-sync/wait",
        "/v1/cluster/nodes",
        "/healthz",
        "/readyz",
        "/metrics",
    ):
        assert path in spec["paths"], path
    docs = http.get("/docs", follow_redirects=True)
    assert docs.status_code == 200 and str(docs.url).endswith("/ui/docs/")
    assert 'src="swagger-ui-bundle.js"' in docs.text and "//" not in docs.text.split("<body>")[1]


class EventReader:
    """Reads SSE frames from one streaming response, a few at a time."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.iter_lines()

    def take(self, count: int) -> list[tuple[str, str, dict[str, Any]]]:
        events: list[tuple[str, str, dict[str, Any]]] = []
        frame: dict[str, str] = {}
        for line in self._lines:
            if line == "":
                if "data" in frame:
                    data = json.loads(frame["data"])
                    events.append((frame.get("id", ""), frame.get("event", ""), data))
                    if len(events) >= count:
                        return events
                frame = {}
            elif not line.startswith(":"):
                key, _, value = line.partition(": ")
                frame[key] = value
        return events


def test_events_replay_then_live_then_resume_without_loss(http: httpx.Client) -> None:
    http.post("/v1/ddl", json={"commands": [ORDERS]})  # version 2, with the Default zone
    with http.stream("GET", "/v1/events", params={"from_version": 2}) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        reader = EventReader(stream)
        replayed = reader.take(4)
        assert [(i, e) for i, e, _ in replayed] == [
            ("2.0", "ZONE_CREATE"),
            ("2.1", "SET_DEFAULT_ZONE"),
            ("2.3", "TABLE_CREATE"),
            ("2.4", "INDEX_CREATE"),
        ]
        assert replayed[2][2]["subject"]["name"] == "ORDERS"
        http.post("/v1/sql", json={"sql": "CREATE SCHEMA s1; CREATE SCHEMA s2"})  # live: version 3
        live = reader.take(1)
        assert [(i, e) for i, e, _ in live] == [("3.0", "SCHEMA_CREATE")]
    # Disconnected after 3.0; resume: 3.2 (the next entry with an event; 3.1 reserves ids)
    # comes next, then later versions, nothing twice.
    http.post("/v1/sql", json={"sql": "DROP TABLE orders"})  # version 4
    with http.stream("GET", "/v1/events", headers={"Last-Event-ID": "3.0"}) as stream:
        resumed = EventReader(stream).take(3)
    assert [(i, e) for i, e, _ in resumed] == [
        ("3.2", "SCHEMA_CREATE"),
        ("4.0", "INDEX_REMOVED"),
        ("4.1", "TABLE_DROP"),
    ]
    assert resumed[0][2]["subject"]["name"] == "S2"


def test_events_from_a_compacted_version_are_refused(
    api_server: RunningServer, http: httpx.Client
) -> None:
    for i in range(4):
        http.post("/v1/ddl", json={"commands": [{"op": "create_schema", "name": f"S{i}"}]})
    import asyncio

    future = asyncio.run_coroutine_threadsafe(
        api_server.node.manager.compact(keep_versions=2), _loop_of(api_server)
    )
    snapshot = future.result(10)
    assert snapshot == 4
    _problem(http.get("/v1/events", params={"from_version": 2}), 410, "VERSION_COMPACTED")
    _problem(http.get("/v1/catalog", params={"version": 2}), 410, "VERSION_COMPACTED")
    with http.stream("GET", "/v1/events", params={"from_version": 5}) as stream:
        assert EventReader(stream).take(1)[0][0] == "5.0"
    # A bookmark of the snapshot's version resumes at the first retained update.
    with http.stream("GET", "/v1/events", headers={"Last-Event-ID": "4"}) as stream:
        assert EventReader(stream).take(1)[0][0] == "5.0"


def _loop_of(server: RunningServer) -> Any:
    return server.node.service._watch_task.get_loop()  # type: ignore[union-attr]


def test_a_second_server_sees_the_change_right_after_the_first_answers(
    api_servers: ServerFactory, etcd_server: Any
) -> None:
    import uuid

    store = f"etcd://{etcd_server.endpoint}/two-servers-{uuid.uuid4().hex}"
    a = api_servers.start(store, node_name="a", delay_ms=100, max_clock_skew_ms=50)
    b = api_servers.start(store, node_name="b", delay_ms=100, max_clock_skew_ms=50)
    with httpx.Client(timeout=20) as client:
        for i in range(5):
            result = client.post(
                f"{a.url}/v1/ddl", json={"commands": [{**ORDERS, "name": f"T{i}"}]}
            ).json()
            now = client.get(f"{b.url}/v1/time").json()["now"]
            seen = client.get(f"{b.url}/v1/catalog", params={"at": str(now)}).json()
            assert seen["version"] >= result["version"]
            assert f"T{i}" in [t["name"] for t in seen["tables"]]

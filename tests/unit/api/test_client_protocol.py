"""The client's I/O-free parts: SSE frames, the event cursor, errors, retry and failover."""

from __future__ import annotations

import datetime as dt
import json

import httpx
import pytest

from api.client import RetryPolicy, errors
from api.client.calls import command_dicts, execute_call, read_params
from api.client.events import EventCursor, Reconnects, SseDecoder, SseFrame
from api.client.retries import Failover, base_urls, retry_after
from catalog import commands as c
from catalog.column_types import ColumnType

TABLE_EVENT = {
    "event": "TABLE_CREATE",
    "version": 2,
    "index": 0,
    "activation_ts": 5 << 16,
    "subject": {"type": "table", "id": 3, "name": "T", "schema": "PUBLIC"},
}
TABLE = {
    "id": 3,
    "schema_id": 0,
    "name": "T",
    "zone_id": 2,
    "pk_index_id": 4,
    "primary_key": [0],
    "colocation_columns": [0],
    "next_column_id": 1,
    "versions": [
        {"version": 1, "columns": [{"id": 0, "name": "ID", "type": "INT64", "nullable": False}]}
    ],
}


def frames(text: str) -> list[SseFrame]:
    decoder = SseDecoder()
    return [f for line in text.split("\n") if (f := decoder.feed(line)) is not None]


def test_sse_decoder_reads_ids_events_data_and_skips_comments() -> None:
    got = frames(": hello\n\nid: 1.0\nevent: X\ndata: a\ndata: b\n\n: keep-alive\n\ndata:c\n\n")
    assert [(f.id, f.event, f.data) for f in got] == [
        ("1.0", "X", ["a", "b"]),
        (None, "message", ["c"]),
    ]


def frame_of(event: dict[str, object], event_id: str) -> SseFrame:
    return SseFrame(id=event_id, event=str(event["event"]), data=[json.dumps(event)])


def test_cursor_resumes_and_drops_what_it_delivered() -> None:
    cursor = EventCursor(from_version=2)
    assert cursor.request() == ({"from_version": "2"}, {"Accept": "text/event-stream"})
    with pytest.raises(errors.ResponseFormatError, match="entry"):  # an event needs its entry
        cursor.accept(frame_of(TABLE_EVENT, "2.0"))
    event = {**TABLE_EVENT, "entry": {"type": "new_table", "table": TABLE}}
    message = cursor.accept(frame_of(event, "2.0"))
    assert message is not None and message.subject.name == "T" and message.id == "2.0"
    assert (
        message.subject.schema_ == "PUBLIC" and message.to_json()["subject"]["schema"] == "PUBLIC"
    )
    assert message.to_json()["entry"]["type"] == "new_table"
    assert cursor.request()[1]["Last-Event-ID"] == "2.0"
    assert cursor.accept(frame_of(event, "2.0")) is None  # a replayed duplicate
    assert cursor.accept(frame_of(event, "1.5")) is None
    assert cursor.accept(SseFrame(data=["x"])) is None  # no id: not a catalog event


def test_cursor_moves_past_bookmarks_and_resumes_where_a_cut_off_says() -> None:
    sse = {"Accept": "text/event-stream"}
    cursor = EventCursor(from_version=2, filters={"table": "T"})
    assert cursor.request() == ({"from_version": "2", "table": "T"}, sse)
    assert cursor.accept(SseFrame(id="7", event="bookmark", data=['{"version": 7}'])) is None
    assert cursor.request() == ({"table": "T"}, {"Last-Event-ID": "7", **sse})
    event = {**TABLE_EVENT, "entry": {"type": "new_table", "table": TABLE}}
    assert cursor.accept(frame_of(event, "7.3")) is None  # at or before the bookmark
    slow = {"code": "SUBSCRIBER_TOO_SLOW", "detail": "fell behind", "resume": "9.1"}
    assert cursor.accept(SseFrame(event="error", data=[json.dumps(slow)])) is None
    assert cursor.last_event_id == "9.1"
    message = cursor.accept(frame_of(event, "9.2"))
    assert message is not None and message.id == "9.2"


def test_error_frames_raise_typed_errors() -> None:
    cursor = EventCursor(from_version=1)
    compacted = SseFrame(event="error", data=['{"code": "VERSION_COMPACTED", "detail": "gone"}'])
    with pytest.raises(errors.CompactedError) as info:
        cursor.accept(compacted)
    assert (info.value.code, info.value.detail, info.value.status) == (
        "VERSION_COMPACTED",
        "gone",
        None,
    )
    with pytest.raises(errors.EventStreamError) as other:
        cursor.accept(SseFrame(event="error", data=['{"code": "STORAGE_UNAVAILABLE"}']))
    assert other.value.code == "STORAGE_UNAVAILABLE"
    with pytest.raises(errors.EventStreamError):
        cursor.accept(SseFrame(event="error", data=["not json"]))
    with pytest.raises(errors.ResponseFormatError):
        cursor.accept(SseFrame(id="3.0", event="TABLE_CREATE", data=["{}"]))


def test_a_live_cursor_is_pinned_and_a_bad_saved_id_refused() -> None:
    cursor = EventCursor()
    assert cursor.needs_pin
    cursor.pin(7)
    assert cursor.request()[0] == {"from_version": "8"} and cursor.pinned
    with pytest.raises(ValueError, match="version"):
        EventCursor(last_event_id="nope")


def problem(status: int, code: str, **extra: object) -> httpx.Response:
    body = {"type": "t", "title": "x", "status": status, "code": code, "detail": "d", **extra}
    return httpx.Response(status, json=body, request=httpx.Request("GET", "http://h/v1/x"))


@pytest.mark.parametrize(
    ("status", "code", "kind"),
    [
        (400, "MALFORMED_REQUEST", errors.InvalidRequestError),
        (413, "REQUEST_TOO_LARGE", errors.InvalidRequestError),
        (422, "VALIDATION_ERROR", errors.InvalidRequestError),
        (422, "TIMESTAMP_IN_FUTURE", errors.InvalidRequestError),
        (404, "TABLE_NOT_FOUND", errors.NotFoundError),
        (409, "TABLE_EXISTS", errors.AlreadyExistsError),
        (409, "ZONE_IN_USE", errors.ConflictError),
        (410, "VERSION_COMPACTED", errors.CompactedError),
        (503, "STORAGE_UNAVAILABLE", errors.UnavailableError),
        (504, "TIMEOUT", errors.WaitTimeoutError),
        (500, "INTERNAL_ERROR", errors.ServerError),
        (418, "TEAPOT", errors.ServerError),
    ],
)
def test_problem_responses_map_to_classes(
    status: int, code: str, kind: type[errors.CatalogApiError]
) -> None:
    error = errors.error_from_response(problem(status, code, errors=[{"loc": ["a"], "msg": "m"}]))
    assert type(error) is kind
    assert (error.code, error.status, error.detail, error.url) == (
        code,
        status,
        "d",
        "http://h/v1/x",
    )
    assert error.errors == [{"loc": ["a"], "msg": "m"}]
    assert str(error) == f"[{code} {status}] d"


def test_a_response_that_is_not_a_problem_still_gets_a_class() -> None:
    request = httpx.Request("GET", "http://h/")
    error = errors.error_from_response(
        httpx.Response(502, text="<html>bad gateway", request=request)
    )
    assert (type(error), error.code, error.status) == (errors.ServerError, "HTTP_502", 502)


def test_only_transient_503s_are_retried() -> None:
    assert retry_after(problem(503, "NOT_READY")) == 0.0
    retryable = problem(503, "STORAGE_UNAVAILABLE")
    retryable.headers["Retry-After"] = "1"
    assert retry_after(retryable) == 1.0
    assert retry_after(problem(503, "SETTINGS_MISMATCH")) is None
    assert retry_after(problem(504, "TIMEOUT")) is None
    assert retry_after(problem(409, "TABLE_EXISTS")) is None
    assert retry_after(problem(429, "TOO_MANY_REQUESTS")) == 0.0  # nothing was applied


def test_retry_policy_backs_off_with_a_cap() -> None:
    policy = RetryPolicy(backoff_s=0.1, backoff_cap_s=0.5)
    for attempt, ceiling in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.5), (10, 0.5)]:
        assert ceiling / 2 <= policy.pause(attempt) <= ceiling
    assert 0.25 <= policy.pause(1, retry_after=1.0) <= 0.5


def test_reconnects_are_bounded_but_reset_by_progress() -> None:
    reconnects = Reconnects(RetryPolicy(max_reconnects=2, backoff_s=0.01), healthy_after_s=5)
    reconnects.failed("a")
    reconnects.failed("b")
    reconnects.delivered()
    reconnects.failed("c")
    reconnects.failed("d")
    reconnects.failed("e", lived_s=60)  # a long-lived connection counts as progress
    reconnects.failed("f")
    with pytest.raises(errors.UnreachableError, match="3 failed"):
        reconnects.failed("g")


def test_base_urls_and_failover_order() -> None:
    assert base_urls("http://a:1/, http://b:2") == ["http://a:1", "http://b:2"]
    with pytest.raises(ValueError):
        base_urls("")
    with pytest.raises(ValueError):
        base_urls(["a:1"])
    failover = Failover(["http://a", "http://b", "http://c"])
    assert failover.order(4) == ["http://a", "http://b", "http://c", "http://a"]
    assert failover.order(1) == ["http://a", "http://b", "http://c"]  # every URL gets a try
    failover.answered("http://b")
    assert failover.order(2)[0] == "http://b"
    failover.failed("http://b")
    assert failover.order(1)[0] == "http://c"
    failover.failed("http://a")  # not the preferred one: nothing changes
    assert failover.order(1)[0] == "http://c"


def test_requests_carry_a_request_id_and_dumped_commands() -> None:
    table = c.CreateTable(
        name="T",
        columns=[c.Column(name="ID", type=ColumnType.INT64, nullable=False)],
        primary_key=["ID"],
    )
    call = execute_call([table, {"op": "drop_table", "name": "X"}], None)
    assert len(call.body["request_id"]) == 32
    assert call.body["commands"][0]["op"] == "create_table"
    assert call.body["commands"][0]["schema"] == "PUBLIC"
    assert call.body["commands"][1] == {"op": "drop_table", "name": "X"}
    assert execute_call(table, "mine").body["request_id"] == "mine"
    assert (
        execute_call(table, None).body["request_id"] != execute_call(table, None).body["request_id"]
    )
    assert command_dicts({"op": "x"}) == [{"op": "x"}]


def test_read_params() -> None:
    assert read_params(None, None) == {}
    assert read_params(3, None) == {"version": "3"}
    moment = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert read_params(None, moment) == {"at": "2026-01-01T00:00:00+00:00"}
    assert read_params(None, 42) == {"at": "42"}
    with pytest.raises(ValueError):
        read_params(1, 2)
    with pytest.raises(ValueError):
        read_params(None, -1)

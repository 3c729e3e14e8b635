"""Parsing of ``at=``, event ids and request ids: only the documented errors, never a crash."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.server.moments import parse_timestamp
from api.server.routes.events import parse_event_id
from catalog.errors import CatalogError, ValidationError
from schemasync.clock import MAX_TIMESTAMP, hlc


def test_timestamps() -> None:
    assert parse_timestamp("12345") == 12345
    assert parse_timestamp("1970-01-01T00:00:01Z") == hlc(1000)
    for bad in ("³", "١٢٣", "yesterday", "2026-01-01T00:00:00", str(2**64), ""):
        with pytest.raises(CatalogError):
            parse_timestamp(bad)


def test_event_ids() -> None:
    assert parse_event_id("3.0") == (3, 0)
    version, index = parse_event_id("3")  # a bookmark: after the whole version
    assert version == 3 and index > 1 << 32
    for bad in ("³.1", "0.1", "1.-1", "a.b", "", "3.", "99999999999999999999.0"):
        with pytest.raises(CatalogError):
            parse_event_id(bad)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=40))
def test_any_text_is_a_timestamp_or_a_validation_error(text: str) -> None:
    try:
        value = parse_timestamp(text)
    except ValidationError as e:
        assert "at=" in e.message or "timestamp" in e.message  # names what it refused
        return
    assert 0 <= value <= MAX_TIMESTAMP
    if text.strip().isascii() and text.strip().isdigit():
        assert value == int(text.strip())
    else:
        assert value & 0xFFFF == 0  # a wall-clock time: logical part 0


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=dt.datetime(1970, 1, 1), timezones=st.just(dt.UTC)))
def test_rfc3339_times_are_their_milliseconds(moment: dt.datetime) -> None:
    ms = int(moment.timestamp() * 1000)
    assert parse_timestamp(moment.isoformat()) == hlc(ms)
    assert parse_timestamp(moment.isoformat().replace("+00:00", "Z")) == hlc(ms)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=40))
def test_any_text_is_an_event_id_or_a_validation_error(text: str) -> None:
    try:
        version, index = parse_event_id(text)
    except CatalogError:
        return
    assert version >= 1 and index >= 0

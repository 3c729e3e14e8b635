"""Parsing of ``at=``, event ids and request ids: only the documented errors, never a crash."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.routes.events import parse_event_id
from api.routes.params import parse_timestamp
from catalog.errors import CatalogError
from schemasync.clock import hlc


def test_timestamps() -> None:
    assert parse_timestamp("12345") == 12345
    assert parse_timestamp("1970-01-01T00:00:01Z") == hlc(1000)
    for bad in ("³", "١٢٣", "yesterday", "2026-01-01T00:00:00", str(2**64), ""):
        with pytest.raises(CatalogError):
            parse_timestamp(bad)


def test_event_ids() -> None:
    assert parse_event_id("3.0") == (3, 0)
    for bad in ("3", "³.1", "0.1", "1.-1", "a.b", ""):
        with pytest.raises(CatalogError):
            parse_event_id(bad)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=40))
def test_any_text_is_a_timestamp_or_a_validation_error(text: str) -> None:
    with contextlib.suppress(CatalogError):
        parse_timestamp(text)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=40))
def test_any_text_is_an_event_id_or_a_validation_error(text: str) -> None:
    try:
        version, index = parse_event_id(text)
    except CatalogError:
        return
    assert version >= 1 and index >= 0

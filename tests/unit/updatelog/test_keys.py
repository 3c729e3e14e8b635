"""The key layout: fixed-width ordered update keys, prefixes, fixed-width integers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from updatelog.errors import FormatError
from updatelog.keys import VERSION_DIGITS, KeyLayout, decode_u64, encode_u64, prefix_range_end


def test_keys_without_prefix() -> None:
    keys = KeyLayout()
    assert keys.version == "catalog.version"
    assert keys.snapshot_version == "catalog.snapshot.version"
    assert keys.safe_time == "catalog.safe_time"
    assert keys.settings == "catalog.settings"
    assert keys.update(7) == "catalog.update." + "0" * (VERSION_DIGITS - 1) + "7"
    assert keys.request("req-1") == "catalog.request.req-1"
    assert keys.subspace("nodes") == "catalog.nodes."
    assert keys.auth_keys == "catalog.auth.keys"


@pytest.mark.parametrize("prefix", ["tenant/a", "/tenant/a", "tenant/a/", "//tenant/a//"])
def test_prefix_is_normalised(prefix: str) -> None:
    keys = KeyLayout(prefix)
    assert keys.prefix == "tenant/a"
    assert keys.version == "tenant/a/catalog.version"
    assert keys.update(1).startswith("tenant/a/catalog.update.")


def test_update_keys_are_fixed_width_and_cover_64_bits() -> None:
    keys = KeyLayout()
    assert len(keys.update(0)) == len(keys.update(2**64 - 1))
    with pytest.raises(ValueError, match="outside"):
        keys.update(-1)
    with pytest.raises(ValueError, match="outside"):
        keys.update(10**VERSION_DIGITS)


@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
def test_update_key_byte_order_is_numeric_order(a: int, b: int) -> None:
    keys = KeyLayout("p")
    ka, kb = keys.update(a).encode(), keys.update(b).encode()
    assert (ka < kb) == (a < b)
    assert keys.version_of_update(keys.update(a)) == a


def test_update_range_is_half_open() -> None:
    keys = KeyLayout()
    start, end = keys.update_range(3, 5)
    inside = [keys.update(v) for v in (3, 4, 5)]
    assert all(start <= k < end for k in inside)
    assert not start <= keys.update(6) < end
    assert not start <= keys.update(2) < end


def test_catalogs_with_different_prefixes_do_not_overlap() -> None:
    a, b = KeyLayout("a"), KeyLayout("ab")
    start, end = a.all_range
    assert all(start <= k < end for k in (a.version, a.update(1), a.request("x")))
    assert not any(start <= k < end for k in (b.version, b.update(1), b.request("x")))
    assert not start <= KeyLayout().version < end


@pytest.mark.parametrize(
    "key",
    [
        "catalog.version",
        "catalog.update.12",
        "catalog.update." + "x" * VERSION_DIGITS,
        "other.update." + "0" * VERSION_DIGITS,
    ],
)
def test_version_of_update_refuses_other_keys(key: str) -> None:
    with pytest.raises(FormatError):
        KeyLayout().version_of_update(key)


@pytest.mark.parametrize("bad", ["", "a\nb", "tab\there", "\x7f"])
def test_request_ids_are_checked(bad: str) -> None:
    with pytest.raises(ValueError):
        KeyLayout().request(bad)


def test_a_subspace_is_an_owners_root_under_the_prefix() -> None:
    keys = KeyLayout("tenant")
    assert keys.subspace("data") == "tenant/catalog.data."
    start, end = keys.all_range
    assert start <= keys.subspace("data") < end


@pytest.mark.parametrize("bad", ["", "a.b", "x/y", "n1", "version", "request", "chunk"])
def test_a_subspace_is_a_plain_name_of_no_log_key(bad: str) -> None:
    with pytest.raises(ValueError):
        KeyLayout().subspace(bad)


def test_prefix_with_control_characters_is_refused() -> None:
    with pytest.raises(ValueError, match="control"):
        KeyLayout("a\x00b")


def test_prefix_range_end() -> None:
    assert prefix_range_end("catalog.") == "catalog/"
    with pytest.raises(ValueError):
        prefix_range_end("")


def test_u64_encoding() -> None:
    assert encode_u64(0) == b"\x00" * 8
    assert encode_u64(258) == b"\x00" * 6 + b"\x01\x02"
    assert decode_u64(encode_u64(2**64 - 1)) == 2**64 - 1
    with pytest.raises(ValueError):
        encode_u64(-1)
    with pytest.raises(ValueError):
        encode_u64(2**64)
    with pytest.raises(FormatError):
        decode_u64(b"\x00" * 7)

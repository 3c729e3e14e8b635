"""Envelope format: golden files of every format decode forever; anything else is FormatError."""

from __future__ import annotations

import zlib
from pathlib import Path

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from updatelog import envelope, requests
from updatelog.chunks import Manifest, decode_manifest
from updatelog.envelope import CURRENT_FORMAT, MAGIC, Envelope, Kind
from updatelog.errors import FormatError
from updatelog.log import ClusterSettings, RequestRecord

GOLDEN = Path(__file__).parents[2] / "golden" / "updatelog"

SAFE_TIME = (1_700_000_000_000 << 16) | 7
EXPIRY = 1_800_000_000_000
DIGEST = bytes(range(32))
MANIFEST_TAG = "u00000000000000000042.0193a1b2c3d4deadbeef"
SETTINGS = ClusterSettings(delay_ms=500, max_clock_skew_ms=250, format_version=1)

# What each golden file of each format means; the bytes themselves live in the files.
FORMAT1: dict[str, tuple[Kind, bytes]] = {
    "update.bin": (Kind.UPDATE, b"update payload \x00\x01\xfe\xff"),
    "snapshot.bin": (Kind.SNAPSHOT, b"snapshot payload"),
    "empty_update.bin": (Kind.UPDATE, b""),
    "settings.bin": (
        Kind.SETTINGS,
        msgpack.packb({"delay_ms": 500, "max_clock_skew_ms": 250, "format_version": 1}),
    ),
    "version.bin": (Kind.VERSION, (42).to_bytes(8, "big")),
    "safe_time.bin": (Kind.SAFE_TIME, SAFE_TIME.to_bytes(8, "big")),
    "request.bin": (Kind.REQUEST, (17).to_bytes(8, "big")),
    "node.bin": (Kind.NODE, b"node registry entry"),
    "refusal.bin": (Kind.REFUSAL, (17).to_bytes(8, "big") + b"refusal payload"),
    "manifest.bin": (
        Kind.MANIFEST,
        msgpack.packb({"tag": MANIFEST_TAG, "count": 3, "size": 150_000}),
    ),
    "request_until.bin": (Kind.REQUEST_UNTIL, (17).to_bytes(8, "big") + EXPIRY.to_bytes(8, "big")),
    "refusal_until.bin": (
        Kind.REFUSAL_UNTIL,
        (17).to_bytes(8, "big") + EXPIRY.to_bytes(8, "big") + b"refusal payload",
    ),
    "request_digest.bin": (
        Kind.REQUEST_DIGEST,
        (17).to_bytes(8, "big") + EXPIRY.to_bytes(8, "big") + DIGEST,
    ),
    "refusal_digest.bin": (
        Kind.REFUSAL_DIGEST,
        (17).to_bytes(8, "big") + EXPIRY.to_bytes(8, "big") + DIGEST + b"refusal payload",
    ),
}
GOLDEN_FORMATS = {1: FORMAT1}


def _frame(fmt: int, kind: int, body: bytes) -> bytes:
    framed = MAGIC + bytes((fmt, kind)) + body
    return framed + zlib.crc32(framed).to_bytes(4, "big")


def test_every_golden_file_is_listed() -> None:
    for fmt, expected in GOLDEN_FORMATS.items():
        on_disk = {p.name for p in (GOLDEN / f"format{fmt}").glob("*.bin")}
        assert on_disk == set(expected)
    folders = {p.name for p in GOLDEN.iterdir() if p.is_dir()}
    assert folders == {f"format{fmt}" for fmt in GOLDEN_FORMATS}


@pytest.mark.parametrize(
    ("fmt", "name"),
    [(fmt, name) for fmt, files in GOLDEN_FORMATS.items() for name in files],
)
def test_golden_files_decode_forever(fmt: int, name: str) -> None:
    kind, body = GOLDEN_FORMATS[fmt][name]
    data = (GOLDEN / f"format{fmt}" / name).read_bytes()
    assert envelope.decode(data) == Envelope(fmt, kind, body)


def test_golden_meanings() -> None:
    folder = GOLDEN / "format1"
    assert envelope.decode_int((folder / "version.bin").read_bytes(), Kind.VERSION) == 42
    assert envelope.decode_int((folder / "safe_time.bin").read_bytes(), Kind.SAFE_TIME) == SAFE_TIME
    assert envelope.decode_int((folder / "request.bin").read_bytes(), Kind.REQUEST) == 17
    assert envelope.decode_settings((folder / "settings.bin").read_bytes()) == SETTINGS
    request = (folder / "request.bin").read_bytes()
    assert requests.decode_record(request) == RequestRecord(17)
    refusal = (folder / "refusal.bin").read_bytes()
    assert requests.decode_record(refusal) == RequestRecord(17, b"refusal payload")
    until = requests.decode_record((folder / "request_until.bin").read_bytes())
    assert (until, until.expires_ms) == (RequestRecord(17), EXPIRY)
    refused = requests.decode_record((folder / "refusal_until.bin").read_bytes())
    assert (refused, refused.expires_ms) == (RequestRecord(17, b"refusal payload"), EXPIRY)
    digested = requests.decode_record((folder / "request_digest.bin").read_bytes())
    assert (digested, digested.expires_ms, digested.digest) == (RequestRecord(17), EXPIRY, DIGEST)
    refused = requests.decode_record((folder / "refusal_digest.bin").read_bytes())
    assert (refused.refusal, refused.expires_ms, refused.digest) == (
        b"refusal payload",
        EXPIRY,
        DIGEST,
    )
    manifest = envelope.decode_as((folder / "manifest.bin").read_bytes(), Kind.MANIFEST)
    assert decode_manifest(manifest.body) == Manifest(MANIFEST_TAG, 3, 150_000)


@given(st.binary(max_size=64), st.sampled_from(list(Kind)))
def test_request_records_only_raise_format_error(body: bytes, kind: Kind) -> None:
    try:
        record = requests.decode_record(_frame(CURRENT_FORMAT, kind, body))
    except FormatError:
        return
    assert kind in (
        Kind.REQUEST,
        Kind.REFUSAL,
        Kind.REQUEST_UNTIL,
        Kind.REFUSAL_UNTIL,
        Kind.REQUEST_DIGEST,
        Kind.REFUSAL_DIGEST,
    )
    assert record.version == int.from_bytes(body[:8], "big")


@pytest.mark.parametrize("name", sorted(GOLDEN_FORMATS[CURRENT_FORMAT]))
def test_writer_still_writes_the_current_golden_bytes(name: str) -> None:
    # A writer change that alters these bytes needs a new format version and golden folder.
    kind, body = GOLDEN_FORMATS[CURRENT_FORMAT][name]
    golden = (GOLDEN / f"format{CURRENT_FORMAT}" / name).read_bytes()
    assert envelope.encode(kind, body) == golden


def test_request_records_round_trip_with_and_without_a_digest() -> None:
    for digest in (b"", DIGEST):
        committed = requests.decode_record(requests.encode_committed(17, EXPIRY, digest))
        refused = requests.decode_record(requests.encode_refused(17, EXPIRY, b"no", digest))
        assert (committed.digest, committed.refusal) == (digest, None)
        assert (refused.digest, refused.refusal) == (digest, b"no")
    assert RequestRecord(17, digest=DIGEST).same_request(DIGEST)
    assert not RequestRecord(17, digest=DIGEST).same_request(bytes(32))
    assert RequestRecord(17).same_request(DIGEST)  # recorded before digests: cannot tell
    with pytest.raises(ValueError, match="32 bytes"):
        requests.encode_committed(17, EXPIRY, b"short")


def test_settings_round_trip() -> None:
    assert envelope.decode_settings(envelope.encode_settings(SETTINGS)) == SETTINGS


def test_negative_settings_are_refused_at_write() -> None:
    with pytest.raises(ValueError, match="delay_ms"):
        envelope.encode_settings(ClusterSettings(delay_ms=-1, max_clock_skew_ms=0))


def test_newer_format_is_refused_with_a_clear_error() -> None:
    data = _frame(CURRENT_FORMAT + 1, Kind.UPDATE, b"from the future")
    with pytest.raises(FormatError, match=r"format version 2.*upgrade"):
        envelope.decode(data)


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(FormatError, match="unknown kind 200"):
        envelope.decode(_frame(1, 200, b"x"))


def test_wrong_kind_is_refused() -> None:
    data = envelope.encode(Kind.UPDATE, b"x")
    with pytest.raises(FormatError, match="expected a value of kind SNAPSHOT, found UPDATE"):
        envelope.decode_as(data, Kind.SNAPSHOT)


@pytest.mark.parametrize("kind", [Kind.VERSION, Kind.SAFE_TIME, Kind.REQUEST])
def test_integer_kinds_need_eight_bytes(kind: Kind) -> None:
    with pytest.raises(FormatError, match="8-byte"):
        envelope.decode(_frame(1, kind, b"\x01\x02"))


def test_integer_envelopes_order_like_their_values() -> None:
    values = [0, 1, 255, 256, 2**32, SAFE_TIME, 2**64 - 1]
    encoded = [envelope.encode_int(Kind.SAFE_TIME, v) for v in values]
    assert sorted(encoded) == encoded


@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
def test_integer_envelope_order_matches_numeric_order(a: int, b: int) -> None:
    ea, eb = envelope.encode_int(Kind.SAFE_TIME, a), envelope.encode_int(Kind.SAFE_TIME, b)
    assert (ea < eb) == (a < b)
    assert envelope.decode_int(ea, Kind.SAFE_TIME) == a


@pytest.mark.parametrize(
    "body",
    [
        msgpack.packb([500, 250, 1]),
        msgpack.packb({"delay_ms": 500, "max_clock_skew_ms": 250}),
        msgpack.packb({"delay_ms": 500, "max_clock_skew_ms": 250, "format_version": 1, "x": 1}),
        msgpack.packb({"delay_ms": -5, "max_clock_skew_ms": 250, "format_version": 1}),
        msgpack.packb({"delay_ms": True, "max_clock_skew_ms": 250, "format_version": 1}),
        msgpack.packb({"delay_ms": 1.5, "max_clock_skew_ms": 250, "format_version": 1}),
        b"\xc1",
        b"\x81",
        b"\x81\xc4\x01a\x01",
    ],
)
def test_malformed_settings_are_format_errors(body: bytes) -> None:
    with pytest.raises(FormatError):
        envelope.decode_settings(envelope.encode(Kind.SETTINGS, body))


def test_every_single_bit_flip_is_detected() -> None:
    data = (GOLDEN / "format1" / "update.bin").read_bytes()
    for index in range(len(data)):
        for bit in range(8):
            flipped = bytearray(data)
            flipped[index] ^= 1 << bit
            with pytest.raises(FormatError):
                envelope.decode(bytes(flipped))


def test_every_truncation_is_detected() -> None:
    data = (GOLDEN / "format1" / "settings.bin").read_bytes()
    for length in range(len(data)):
        with pytest.raises(FormatError):
            envelope.decode(data[:length])


@given(st.binary(max_size=64))
def test_random_bytes_only_ever_raise_format_error(data: bytes) -> None:
    try:
        decoded = envelope.decode(data)
    except FormatError:
        return
    # Only a value with the magic, a known format and a matching checksum gets here.
    assert data.startswith(MAGIC)
    assert decoded.format_version == CURRENT_FORMAT


@given(st.binary(max_size=64), st.sampled_from(list(Kind)))
def test_random_bodies_behind_a_valid_frame_only_raise_format_error(
    body: bytes, kind: Kind
) -> None:
    data = _frame(CURRENT_FORMAT, kind, body)
    try:
        if kind is Kind.SETTINGS:
            envelope.decode_settings(data)
        elif kind in (Kind.VERSION, Kind.SAFE_TIME, Kind.REQUEST):
            assert envelope.decode_int(data, kind) == int.from_bytes(body, "big")
        else:
            assert envelope.decode(data).body == body
    except FormatError:
        pass


@given(st.sampled_from(list(Kind)), st.binary(max_size=256))
def test_round_trip(kind: Kind, body: bytes) -> None:
    if kind in (Kind.VERSION, Kind.SAFE_TIME, Kind.REQUEST):
        body = body[:8].rjust(8, b"\x00")
    assert envelope.decode(envelope.encode(kind, body)) == Envelope(CURRENT_FORMAT, kind, body)


@given(st.sampled_from(list(Kind)), st.lists(st.binary(max_size=64), max_size=8))
def test_pieces_frame_exactly_as_the_joined_body(kind: Kind, pieces: list[bytes]) -> None:
    framed = envelope.encode_pieces(kind, pieces)
    assert framed[1:-1] == pieces  # the body's pieces are passed on, not copied
    assert b"".join(framed) == envelope.encode(kind, b"".join(pieces))

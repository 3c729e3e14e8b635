"""The envelope around every stored value: format version, kind and checksum.

Format 1, byte by byte::

    0..1    magic  b"UL"
    2       format version (1)
    3       kind (see ``Kind``)
    4..n-5  body
    n-4..   CRC-32 (big-endian) of bytes 0..n-5, i.e. of header and body

The checksum trails the body on purpose: two envelopes of the same format and kind whose bodies
have the same length compare byte by byte exactly as their bodies do. With ``encode_u64`` bodies
that lets etcd's ``Compare(value(safe_time) < X)`` order safe times while the value still carries
its format version.

Readers accept every format listed in ``_BODY_READERS`` (every version ever written) and refuse
newer or unknown ones, bad magic, bad checksums and malformed bodies with ``FormatError`` and
never with any other exception. Writers always write ``CURRENT_FORMAT``. A new format adds a
reader and keeps the old ones; the golden files in ``tests/golden/updatelog/`` prove that every
format keeps decoding.
"""

from __future__ import annotations

import enum
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack

from updatelog.errors import FormatError
from updatelog.keys import decode_u64, encode_u64
from updatelog.log import ClusterSettings

MAGIC = b"UL"
CURRENT_FORMAT = 1
_HEADER = 4
_TRAILER = 4


class Kind(enum.IntEnum):
    """What an envelope holds. Wire values are stable: never renumber or reuse one."""

    UPDATE = 1
    """An opaque update payload, stored at ``catalog.update.<N>``."""
    SNAPSHOT = 2
    """An opaque full-snapshot payload, stored at ``catalog.update.<S>``."""
    SETTINGS = 3
    """``ClusterSettings`` as a msgpack map, stored at ``catalog.settings``."""
    VERSION = 4
    """A version number (``encode_u64``): ``catalog.version``, ``catalog.snapshot.version``."""
    SAFE_TIME = 5
    """An HLC timestamp (``encode_u64``): ``catalog.safe_time``."""
    REQUEST = 6
    """The version that committed a request id (``encode_u64``): ``catalog.request.<id>``."""
    NODE = 7
    """An opaque node-registry payload, stored at ``catalog.nodes.<name>``."""
    REFUSAL = 8
    """A refused request id: the version it was refused at (``encode_u64``) then an opaque
    refusal payload, stored at ``catalog.request.<id>``."""
    AUTH_KEYS = 9
    """The API's token-signing keys (an opaque payload), stored at ``catalog.auth.keys``."""
    MANIFEST = 10
    """A large value written as chunks: a msgpack map naming them (``updatelog.chunks``),
    stored where the value itself would be (an update or snapshot key)."""
    REQUEST_UNTIL = 11
    """A committed request id with its expiry: version, then expiry in wall-clock
    milliseconds (``encode_u64`` each), stored at ``catalog.request.<id>``."""
    REFUSAL_UNTIL = 12
    """A refused request id with its expiry: version, expiry (``encode_u64`` each), then an
    opaque refusal payload, stored at ``catalog.request.<id>``."""
    REQUEST_DIGEST = 13
    """A committed request id with its expiry and the digest of its content: version, expiry
    (``encode_u64`` each), then a 32-byte digest, stored at ``catalog.request.<id>``."""
    REFUSAL_DIGEST = 14
    """A refused request id with its expiry and the digest of its content: version, expiry
    (``encode_u64`` each), a 32-byte digest, then an opaque refusal payload, stored at
    ``catalog.request.<id>``."""
    RETENTION_LEASE = 15
    """A retention lease (an opaque payload), stored at ``catalog.leases.<id>``."""
    CLUSTER_ID = 16
    """The cluster's id (a uuid as text), stored at ``catalog.cluster``."""


@dataclass(frozen=True, slots=True)
class Envelope:
    """A decoded envelope."""

    format_version: int
    kind: Kind
    body: bytes


def _read_body_v1(kind: Kind, body: bytes) -> bytes:
    if kind in (Kind.VERSION, Kind.SAFE_TIME, Kind.REQUEST):
        decode_u64(body)
    return body


# One reader per format ever written; each validates the body and returns it in the current
# format's body encoding.
_BODY_READERS: dict[int, Callable[[Kind, bytes], bytes]] = {1: _read_body_v1}


def encode(kind: Kind, body: bytes) -> bytes:
    """Wrap ``body`` in a current-format envelope of ``kind``.

    Args:
        kind: what the body is.
        body: the payload bytes.

    Returns:
        The envelope bytes to store.
    """
    return b"".join(encode_pieces(kind, (body,)))


def encode_pieces(kind: Kind, body: Sequence[bytes]) -> list[bytes]:
    """Wrap a body given as pieces, without joining them: the envelope's own pieces, in order.

    A snapshot of hundreds of megabytes stays in the pieces it was encoded in all the way to
    the store's chunks; joining it would hold the interpreter's lock for the whole copy.

    Args:
        kind: what the body is.
        body: the payload, as pieces whose concatenation is the body.

    Returns:
        The header, the body's pieces and the trailer; their concatenation is ``encode``'s.
    """
    head = MAGIC + bytes((CURRENT_FORMAT, int(kind)))
    crc = zlib.crc32(head)
    for piece in body:
        crc = zlib.crc32(piece, crc)  # a large piece is summed without the lock held
    return [head, *body, crc.to_bytes(_TRAILER, "big")]


def decode(data: bytes) -> Envelope:
    """Check and unwrap an envelope of any supported format.

    Args:
        data: the stored bytes.

    Returns:
        The format version, kind and body.

    Raises:
        FormatError: the value is truncated, corrupted (magic or checksum), of an unknown kind,
            or of a format version this reader does not know (e.g. written by a newer release).
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise FormatError(f"expected bytes, got {type(data).__name__}")
    raw = data if type(data) is bytes else bytes(data)
    if len(raw) < _HEADER + _TRAILER:
        raise FormatError(f"value of {len(raw)} bytes is too short for an envelope")
    if raw[:2] != MAGIC:
        raise FormatError(f"value does not start with the envelope magic {MAGIC!r}")
    fmt = raw[2]
    reader = _BODY_READERS.get(fmt)
    if reader is None:
        raise FormatError(
            f"value has format version {fmt}, this release reads versions "
            f"{min(_BODY_READERS)}..{max(_BODY_READERS)}; upgrade it to read newer values"
        )
    # The checksum reads the value in place: a large one is copied once, for its body.
    if zlib.crc32(memoryview(raw)[:-_TRAILER]).to_bytes(_TRAILER, "big") != raw[-_TRAILER:]:
        raise FormatError("value checksum mismatch: the stored value is corrupted")
    try:
        kind = Kind(raw[3])
    except ValueError:
        raise FormatError(f"value has unknown kind {raw[3]}") from None
    return Envelope(fmt, kind, reader(kind, raw[_HEADER:-_TRAILER]))


def decode_as(data: bytes, *kinds: Kind) -> Envelope:
    """Decode an envelope and require it to be one of ``kinds``.

    Args:
        data: the stored bytes.
        *kinds: the acceptable kinds.

    Returns:
        The decoded envelope.

    Raises:
        FormatError: as ``decode``, or the kind is not one of ``kinds``.
    """
    envelope = decode(data)
    if envelope.kind not in kinds:
        wanted = ", ".join(k.name for k in kinds)
        raise FormatError(f"expected a value of kind {wanted}, found {envelope.kind.name}")
    return envelope


def encode_int(kind: Kind, value: int) -> bytes:
    """Wrap an unsigned integer (version, safe time, request version) in an envelope.

    Envelopes of one kind built here compare byte by byte in numeric order.

    Args:
        kind: ``Kind.VERSION``, ``Kind.SAFE_TIME`` or ``Kind.REQUEST``.
        value: an integer in ``0..2**64-1``.

    Returns:
        The envelope bytes.

    Raises:
        ValueError: ``kind`` does not hold an integer, or ``value`` does not fit in 64 bits.
    """
    if kind not in (Kind.VERSION, Kind.SAFE_TIME, Kind.REQUEST):
        raise ValueError(f"kind {kind.name} does not hold an integer")
    return encode(kind, encode_u64(value))


def decode_int(data: bytes, kind: Kind) -> int:
    """Unwrap an integer written by ``encode_int`` with the same ``kind``.

    Args:
        data: the stored bytes.
        kind: the expected kind.

    Returns:
        The integer.

    Raises:
        FormatError: as ``decode_as``.
    """
    return decode_u64(decode_as(data, kind).body)


_SETTINGS_FIELDS = ("delay_ms", "max_clock_skew_ms", "format_version")
_WAREHOUSE = "warehouse"
"""The optional setting: absent from clusters created without a warehouse."""


def encode_settings(settings: ClusterSettings) -> bytes:
    """Wrap cluster settings in a ``Kind.SETTINGS`` envelope (a msgpack map body).

    Args:
        settings: the cluster settings.

    Returns:
        The envelope bytes.

    Raises:
        ValueError: a setting is not a non-negative integer (it could never be read back).
    """
    for name in _SETTINGS_FIELDS:
        value = getattr(settings, name)
        if type(value) is not int or value < 0:
            raise ValueError(
                f"cluster setting {name} must be a non-negative integer, got {value!r}"
            )
    fields: dict[str, int | str] = {name: getattr(settings, name) for name in _SETTINGS_FIELDS}
    if settings.warehouse is not None:
        if not isinstance(settings.warehouse, str) or not settings.warehouse:
            raise ValueError(f"the warehouse must be a folder, got {settings.warehouse!r}")
        fields[_WAREHOUSE] = settings.warehouse
    return encode(Kind.SETTINGS, msgpack.packb(fields))


def decode_settings(data: bytes) -> ClusterSettings:
    """Unwrap cluster settings written by ``encode_settings``.

    Args:
        data: the stored bytes.

    Returns:
        The settings.

    Raises:
        FormatError: as ``decode_as``, or the body is not a map of exactly the known
            non-negative integer fields.
    """
    body = decode_as(data, Kind.SETTINGS).body
    try:
        fields: Any = msgpack.unpackb(body, raw=False, strict_map_key=True)
    except (ValueError, TypeError, msgpack.UnpackException) as e:
        raise FormatError(f"cluster settings are not valid msgpack: {e}") from e
    if not isinstance(fields, dict) or set(fields) - {_WAREHOUSE} != set(_SETTINGS_FIELDS):
        raise FormatError(
            f"cluster settings must be a map of {', '.join(_SETTINGS_FIELDS)} (and a warehouse)"
        )
    for name in _SETTINGS_FIELDS:
        value = fields[name]
        if type(value) is not int or value < 0:
            raise FormatError(f"cluster setting {name} must be a non-negative integer")
    warehouse = fields.get(_WAREHOUSE)
    if warehouse is not None and (not isinstance(warehouse, str) or not warehouse):
        raise FormatError("the cluster's warehouse setting must be a folder")
    return ClusterSettings(
        delay_ms=fields["delay_ms"],
        max_clock_skew_ms=fields["max_clock_skew_ms"],
        format_version=fields["format_version"],
        warehouse=warehouse,
    )

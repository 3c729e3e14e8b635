"""What ``catalog.request.<id>`` records: the version that committed a request, or its refusal.

A request id gets exactly one outcome while its record lives. The append that commits it
records the version; a refusal is recorded too (``UpdateLog.record_refusal``), guarded by the
version it was judged against, so a copy of the same request still in flight elsewhere cannot
commit afterwards. Every record carries an expiry: past it, the id is free again (a retry after
the window is a new request) and compaction deletes the record.
"""

from __future__ import annotations

import time

from updatelog import envelope
from updatelog.envelope import Kind
from updatelog.errors import FormatError
from updatelog.keys import decode_u64, encode_u64
from updatelog.log import AppendConflict, AppendResult, RequestRecord

_U64 = 8


def encode_committed(version: int, expires_ms: int) -> bytes:
    """Return the stored value saying ``version`` committed the request, until ``expires_ms``."""
    return envelope.encode(Kind.REQUEST_UNTIL, encode_u64(version) + encode_u64(expires_ms))


def encode_refused(version: int, expires_ms: int, refusal: bytes) -> bytes:
    """Return the stored value saying the request was refused with the log at ``version``."""
    body = encode_u64(version) + encode_u64(expires_ms) + bytes(refusal)
    return envelope.encode(Kind.REFUSAL_UNTIL, body)


def decode_record(data: bytes) -> RequestRecord:
    """Unwrap a request record of any format ever written.

    Raises:
        FormatError: the value is not a request record of a known format.
    """
    decoded = envelope.decode_as(
        data, Kind.REQUEST, Kind.REFUSAL, Kind.REQUEST_UNTIL, Kind.REFUSAL_UNTIL
    )
    body = decoded.body
    if decoded.kind is Kind.REQUEST:
        return RequestRecord(decode_u64(body))
    if decoded.kind is Kind.REFUSAL:
        if len(body) < _U64:
            raise FormatError("a refusal record is shorter than its version")
        return RequestRecord(decode_u64(body[:_U64]), body[_U64:])
    if len(body) < 2 * _U64 or (decoded.kind is Kind.REQUEST_UNTIL and len(body) != 2 * _U64):
        raise FormatError(f"a {decoded.kind.name} record has {len(body)} bytes")
    version, expires = decode_u64(body[:_U64]), decode_u64(body[_U64 : 2 * _U64])
    refusal = body[2 * _U64 :] if decoded.kind is Kind.REFUSAL_UNTIL else None
    return RequestRecord(version, refusal, expires)


def wall_ms() -> int:
    """Return the wall clock in milliseconds, against which request records expire."""
    return time.time_ns() // 1_000_000


def is_expired(record: RequestRecord, now_ms: int) -> bool:
    """Return whether ``record`` no longer names a request at wall-clock ``now_ms``."""
    return 0 < record.expires_ms <= now_ms


def request_conflict(
    version: int, safe_time: int, request_id: str, record: RequestRecord
) -> AppendResult:
    """Return the ``REQUEST`` conflict reporting ``record`` as the outcome of ``request_id``."""
    return AppendResult(
        False,
        version,
        safe_time,
        AppendConflict.REQUEST,
        record.version,
        request_id,
        record.refusal,
    )

"""What ``catalog.request.<id>`` records: the version that committed a request, or its refusal.

A request id gets exactly one outcome. The append that commits it records the version; a
refusal is recorded too (``UpdateLog.record_refusal``), guarded by the version it was judged
against, so a copy of the same request still in flight elsewhere cannot commit afterwards.
"""

from __future__ import annotations

from updatelog import envelope
from updatelog.envelope import Kind
from updatelog.errors import FormatError
from updatelog.keys import decode_u64, encode_u64
from updatelog.log import AppendConflict, AppendResult, RequestRecord

_VERSION_BYTES = 8


def encode_committed(version: int) -> bytes:
    """Return the stored value saying ``version`` committed the request."""
    return envelope.encode_int(Kind.REQUEST, version)


def encode_refused(version: int, refusal: bytes) -> bytes:
    """Return the stored value saying the request was refused with the log at ``version``."""
    return envelope.encode(Kind.REFUSAL, encode_u64(version) + bytes(refusal))


def decode_record(data: bytes) -> RequestRecord:
    """Unwrap a value written by ``encode_committed`` or ``encode_refused``.

    Raises:
        FormatError: the value is not a request record of a known format.
    """
    decoded = envelope.decode_as(data, Kind.REQUEST, Kind.REFUSAL)
    if decoded.kind is Kind.REQUEST:
        return RequestRecord(decode_u64(decoded.body))
    if len(decoded.body) < _VERSION_BYTES:
        raise FormatError("a refusal record is shorter than its version")
    version = decode_u64(decoded.body[:_VERSION_BYTES])
    return RequestRecord(version, decoded.body[_VERSION_BYTES:])


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

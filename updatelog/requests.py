"""What ``catalog.request.<id>`` records: the version that committed a request, or its refusal.

A request id gets exactly one outcome while its record lives. The append that commits it
records the version; a refusal is recorded too (``UpdateLog.record_refusal``), guarded by the
version it was judged against, so a copy of the same request still in flight elsewhere cannot
commit afterwards. Every record carries an expiry: past it, the id is free again (a retry after
the window is a new request) and compaction deletes the record. A record may carry the digest
of the request's content, so that the id sent again with other content is refused instead of
being answered with the first request's outcome.
"""

from __future__ import annotations

import time

from updatelog import envelope
from updatelog.envelope import Kind
from updatelog.errors import FormatError
from updatelog.keys import decode_u64, encode_u64, prefix_range_end
from updatelog.kv import Delete, KvStore, equals
from updatelog.log import AppendConflict, AppendResult, RequestRecord

_U64 = 8


DIGEST_BYTES = 32
"""The length of a request digest (SHA-256)."""


def encode_committed(version: int, expires_ms: int, digest: bytes = b"") -> bytes:
    """Return the stored value saying ``version`` committed the request, until ``expires_ms``."""
    body = encode_u64(version) + encode_u64(expires_ms)
    if not digest:
        return envelope.encode(Kind.REQUEST_UNTIL, body)
    return envelope.encode(Kind.REQUEST_DIGEST, body + _checked(digest))


def encode_refused(version: int, expires_ms: int, refusal: bytes, digest: bytes = b"") -> bytes:
    """Return the stored value saying the request was refused with the log at ``version``."""
    head = encode_u64(version) + encode_u64(expires_ms)
    if not digest:
        return envelope.encode(Kind.REFUSAL_UNTIL, head + bytes(refusal))
    return envelope.encode(Kind.REFUSAL_DIGEST, head + _checked(digest) + bytes(refusal))


def _checked(digest: bytes) -> bytes:
    if len(digest) != DIGEST_BYTES:
        raise ValueError(f"a request digest has {DIGEST_BYTES} bytes, not {len(digest)}")
    return bytes(digest)


_RECORD_KINDS = {
    # kind: (bytes before the refusal, whether a refusal follows, whether a digest is there)
    Kind.REQUEST_UNTIL: (2 * _U64, False, False),
    Kind.REFUSAL_UNTIL: (2 * _U64, True, False),
    Kind.REQUEST_DIGEST: (2 * _U64 + DIGEST_BYTES, False, True),
    Kind.REFUSAL_DIGEST: (2 * _U64 + DIGEST_BYTES, True, True),
}


def decode_record(data: bytes) -> RequestRecord:
    """Unwrap a request record of any format ever written.

    Raises:
        FormatError: the value is not a request record of a known format.
    """
    decoded = envelope.decode_as(data, Kind.REQUEST, Kind.REFUSAL, *_RECORD_KINDS)
    body = decoded.body
    if decoded.kind is Kind.REQUEST:
        return RequestRecord(decode_u64(body))
    if decoded.kind is Kind.REFUSAL:
        if len(body) < _U64:
            raise FormatError("a refusal record is shorter than its version")
        return RequestRecord(decode_u64(body[:_U64]), body[_U64:])
    head, refused, has_digest = _RECORD_KINDS[decoded.kind]
    if len(body) < head or (not refused and len(body) != head):
        raise FormatError(f"a {decoded.kind.name} record has {len(body)} bytes")
    version, expires = decode_u64(body[:_U64]), decode_u64(body[_U64 : 2 * _U64])
    digest = body[2 * _U64 : head] if has_digest else b""
    return RequestRecord(version, body[head:] if refused else None, expires, digest)


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
        record.digest,
    )


async def collect_expired(store: KvStore, prefix: str, now_ms: int, *, page: int) -> int:
    """Delete the expired request records under ``prefix``; return how many went.

    A record that cannot be read is kept (it is reported when its id is used), and one that
    changed since it was read is left to the next collection.
    """
    start, end = prefix, prefix_range_end(prefix)
    removed = 0
    while start < end:
        read = await store.range(start, end, limit=page)
        for kv in read.kvs:
            try:
                record = decode_record(kv.value)
            except FormatError:
                continue  # never delete what cannot be read; it is reported on use
            if is_expired(record, now_ms):
                result = await store.txn([equals(kv.key, kv.value)], [Delete(kv.key)])
                removed += int(result.succeeded)
        if not read.more or not read.kvs:
            break
        start = read.kvs[-1].key + "\x00"
    return removed

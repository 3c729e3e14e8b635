"""Request parameters every read shares: which version or time."""

from __future__ import annotations

import datetime as dt

from catalog.catalog import Catalog
from catalog.errors import ErrorCode, ValidationError
from catalog.runtime.node import CatalogNode
from schemasync.clock import MAX_TIMESTAMP, hlc

VERSION_DOC = "An exact catalog version (0 is the empty catalog before version 1)."
NAME_DOC = (
    "A name as typed in SQL: unquoted it folds to upper case (orders is ORDERS); in double "
    'quotes it stays exact ("orders", URL-encoded %22orders%22).'
)
AT_DOC = (
    "A hybrid timestamp (integer: milliseconds << 16 | logical) or an RFC 3339 time with an "
    "offset; the read first waits until metadata is complete at that time."
)


def parse_timestamp(text: str) -> int:
    """Parse ``at=``: a hybrid timestamp integer, or an RFC 3339 time with an offset.

    Raises:
        ValidationError: neither form, no offset, or out of range.
    """
    text = text.strip()
    if text.isascii() and text.isdigit():
        value = int(text)
        if value > MAX_TIMESTAMP:
            raise ValidationError(f"timestamp {text} does not fit in 64 bits")
        return value
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError as e:
        raise ValidationError(
            f"at={text!r} is neither a hybrid timestamp nor an RFC 3339 time"
        ) from e
    if moment.tzinfo is None:
        raise ValidationError(f"at={text!r} needs an offset, e.g. 2026-01-01T00:00:00Z")
    ms = int(moment.timestamp() * 1000)
    if ms < 0:
        raise ValidationError(f"at={text!r} is before 1970")
    return hlc(ms)


async def resolve_catalog(node: CatalogNode, version: int | None, at: str | None) -> Catalog:
    """Return the catalog a read asks for: by ``version``, as of ``at``, or the latest.

    Raises:
        ValidationError: both ``version`` and ``at`` were given.
        CatalogError: VERSION_COMPACTED or VERSION_NOT_FOUND.
        SchemaSyncError: ``at`` is too far in the future.
    """
    if version is not None and at is not None:
        raise ValidationError("give either version= or at=, not both")
    if version is not None:
        if version < 0:
            raise ValidationError("version must be at least 0", code=ErrorCode.VALIDATION_ERROR)
        return node.service.catalog(version)
    if at is not None:
        ts = parse_timestamp(at)
        await node.schema_sync.wait_for_metadata_completeness(ts)
        return node.service.active_catalog(ts)
    return node.service.latest_catalog()

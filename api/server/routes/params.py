"""Request parameters every read shares: which version or time."""

from __future__ import annotations

from api.server.moments import parse_timestamp
from catalog.catalog import Catalog
from catalog.errors import ErrorCode, ValidationError
from catalog.runtime.node import CatalogNode

VERSION_DOC = "An exact catalog version (0 is the empty catalog before version 1)."
NAME_DOC = (
    "A name as typed in SQL: unquoted it folds to upper case (orders is ORDERS); in double "
    'quotes it stays exact ("orders", URL-encoded %22orders%22).'
)
AT_DOC = (
    "A hybrid timestamp (integer: milliseconds << 16 | logical) or an RFC 3339 time with an "
    "offset; the read first waits until metadata is complete at that time."
)


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

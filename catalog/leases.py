"""Retention leases: a job keeps what a read as of one moment needs until it is done.

A lease names a moment T, a lifetime and an owner. While it holds, compaction keeps the
catalog version active at T (and so every version after it), and data expiry, which deletes
only what no retained version can read, keeps every file a read at T needs. A lease is kept
in the store beside the log, attached to a store lease of its lifetime, so it disappears on
its own when its owner stops renewing it, even when no node is running; it can also be
released at once. Every node sees the same leases: a compaction by any node (or by ``catalog
compact``) reads them just before it snapshots, and says which lease held it back.

Keys, under the log's ``leases`` subspace (``KeyLayout.subspace``)::

    <prefix>/catalog.leases.<id>        one lease (``RetentionLease``, JSON)
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from catalog.errors import (
    CatalogError,
    ConcurrentUpdateError,
    ErrorCode,
    NotFoundError,
    ValidationError,
)
from catalog.model import Model
from schemasync.clock import describe_ts
from updatelog import envelope
from updatelog.envelope import Kind
from updatelog.keys import KeyLayout, prefix_range_end
from updatelog.kv import Delete, Get, KvStore, Put
from updatelog.requests import wall_ms

if TYPE_CHECKING:
    from catalog.service import CatalogService

MAX_LEASE_TTL_S = 7 * 24 * 3600
"""The longest a lease may hold without being renewed: a week."""
MAX_LEASES = 1000
"""The most leases held at once in a catalog."""
MAX_OWNER_CHARS = 200


class RetentionLease(Model):
    """One lease: what it keeps (a read as of ``at``), whose it is, until when.

    Attributes:
        id: the lease's id (to release it).
        at: the hybrid timestamp a read keeps being answerable at.
        owner: who took it, in words (a job's name).
        principal: the caller that took it (the token's subject; ``anonymous`` with auth off).
        taken_ms: when it was taken (wall-clock milliseconds).
        expires_ms: when it ends unless released before (wall-clock milliseconds).
    """

    id: str
    at: int
    owner: str
    principal: str
    taken_ms: int
    expires_ms: int

    def describe(self) -> str:
        """Return the lease in words, for messages and logs."""
        return f"lease {self.id} of {self.owner} (a read as of {describe_ts(self.at)})"


class RetentionLeases:
    """The retention leases of one catalog in one store."""

    def __init__(self, store: KvStore, keys: KeyLayout) -> None:
        self.store = store
        self.prefix = keys.subspace("leases")

    async def take(
        self, service: CatalogService, at: int, ttl_s: float, owner: str, principal: str
    ) -> RetentionLease:
        """Take a lease keeping reads as of ``at`` answerable for ``ttl_s`` seconds.

        Raises:
            ValidationError: a lifetime out of 1 s to ``MAX_LEASE_TTL_S``, or an empty or
                overlong owner.
            ConcurrentUpdateError: TOO_MANY_LEASES, ``MAX_LEASES`` hold already.
            CatalogError: VERSION_COMPACTED, ``at`` is before the earliest version kept (also
                when a compaction got there while the lease was being taken).
        """
        if not 1 <= ttl_s <= MAX_LEASE_TTL_S:
            raise ValidationError(
                f"a lease holds 1 to {MAX_LEASE_TTL_S} seconds (a week), got {ttl_s:g}; "
                "renew a longer one before it ends"
            )
        owner = owner.strip()
        if not owner or len(owner) > MAX_OWNER_CHARS or not owner.isprintable():
            raise ValidationError(
                f"a lease's owner is 1 to {MAX_OWNER_CHARS} printable characters naming who "
                "holds it (a job's name)"
            )
        service.active_catalog_version(at)  # VERSION_COMPACTED before the earliest kept
        if len(await self.list()) >= MAX_LEASES:
            raise ConcurrentUpdateError(
                f"this catalog holds {MAX_LEASES} leases already; release ones no longer needed",
                code=ErrorCode.TOO_MANY_LEASES,
            )
        now = wall_ms()
        lease = RetentionLease(
            id=uuid.uuid4().hex[:16],
            at=at,
            owner=owner,
            principal=principal,
            taken_ms=now,
            expires_ms=now + int(ttl_s * 1000),
        )
        store_lease = await self.store.grant_lease(max(1, int(ttl_s + 0.999)))
        value = envelope.encode(Kind.RETENTION_LEASE, lease.model_dump_json().encode())
        await self.store.txn([], [Put(self.prefix + lease.id, value, store_lease)])
        try:  # a compaction that read the leases before this one was written may have run
            service.active_catalog_version(at)
        except CatalogError:
            await self.release(lease.id)
            raise
        return lease

    async def list(self) -> list[RetentionLease]:
        """Return the leases that hold now, earliest moment first."""
        read = await self.store.range(self.prefix, prefix_range_end(self.prefix))
        now = wall_ms()
        leases = [_decoded(kv.value) for kv in read.kvs]
        return sorted((x for x in leases if x.expires_ms > now), key=lambda x: (x.at, x.id))

    async def get(self, lease_id: str) -> RetentionLease:
        """Return one lease that holds.

        Raises:
            NotFoundError: LEASE_NOT_FOUND, no such lease holds (released or ended).
        """
        read = await self.store.txn([], [Get(self.prefix + _checked(lease_id))])
        value = read.reads[0].value
        if value is not None:
            lease = _decoded(value)
            if lease.expires_ms > wall_ms():
                return lease
        raise NotFoundError(
            f"lease {lease_id} does not hold (released, or its time ran out)",
            code=ErrorCode.LEASE_NOT_FOUND,
        )

    async def release(self, lease_id: str) -> None:
        """Release a lease at once (releasing one that does not hold is no error)."""
        await self.store.txn([], [Delete(self.prefix + _checked(lease_id))])


def _decoded(value: bytes) -> RetentionLease:
    return RetentionLease.model_validate_json(envelope.decode_as(value, Kind.RETENTION_LEASE).body)


def _checked(lease_id: str) -> str:
    if not (1 <= len(lease_id) <= 64 and lease_id.isascii() and lease_id.isalnum()):
        raise NotFoundError(f"lease {lease_id!r} does not exist", code=ErrorCode.LEASE_NOT_FOUND)
    return lease_id


def holding_back(
    leases: list[RetentionLease], service: CatalogService, version: int
) -> tuple[int, RetentionLease | None]:
    """Return the version a compaction to ``version`` may go to, and the lease that held it.

    A compaction keeps the version active at each lease's moment: it goes no further than
    the earliest lease's (the version it asked for when no lease holds it back).
    """
    for lease in leases:  # earliest moment first
        try:
            kept = service.active_catalog_version(lease.at)
        except CatalogError:  # its moment is before every version kept: nothing more to keep
            continue
        if kept < version:
            return kept, lease
        return version, None
    return version, None

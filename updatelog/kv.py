"""The key-value seam: the few operations the update log needs from a store, and nothing more.

A store keeps ``str`` keys (UTF-8; byte order equals code-point order) and ``bytes`` values, a
store-wide revision that every write transaction raises by one, and leases that make keys
disappear on their own. It knows nothing of versions, safe time or catalogs: every rule of the
log lives once, in ``updatelog.kv_log.KvUpdateLog``, over this protocol. Two stores implement it:
``updatelog.kv_etcd.EtcdKvStore`` (etcd, the distributed store) and
``updatelog.kv_sqlite.SqliteKvStore`` (one SQLite file, the embedded default), as Kubernetes'
kine puts etcd and SQLite behind one interface.

The operations::

    txn(compares, success, failure)   one atomic transaction; reads ride in it as Get/GetRange
    range(start, end, limit, ...)     an ordered read of [start, end)
    watch(start, end, from_revision)  changes in revision order, from a revision on
    grant_lease / keep_alive / revoke keys that expire without a refresh
    compact(revision)                 drop the store's own history up to a revision
    close()

Outcomes: a transaction either answers (``TxnResult``), or raises ``UnknownOutcomeError`` when
its answer was lost (it may have committed: the caller reads back), or a definite refusal that
changed nothing: ``UpdateTooLargeError`` (over the store's request limit) or
``StoreQuotaExceededError``. Reads retry on their own within the store's timeout and then raise
``StorageUnavailableError``.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from updatelog.errors import StorageUnavailableError


class LeaseExpiredError(StorageUnavailableError):
    """A put named a lease the store no longer has (it expired): grant a new one."""


class CompareOp(enum.Enum):
    """How ``Compare`` relates a key's value to its operand."""

    EQUAL = "=="
    LESS = "<"
    GREATER = ">"


@dataclass(frozen=True, slots=True)
class Compare:
    """One condition of a transaction.

    With ``value`` None it tests presence: ``EQUAL`` holds when the key is absent (the only
    presence test the log needs). Otherwise it compares the stored bytes with ``value``
    (byte-wise, as etcd does); a missing key fails the comparison unless ``or_absent``.
    """

    key: str
    op: CompareOp
    value: bytes | None = None
    or_absent: bool = False


def absent(key: str) -> Compare:
    """Return the condition "``key`` does not exist"."""
    return Compare(key, CompareOp.EQUAL, None)


def equals(key: str, value: bytes | None) -> Compare:
    """Return "``key`` holds ``value``" (None: "``key`` does not exist")."""
    return Compare(key, CompareOp.EQUAL, value)


def less_or_absent(key: str, value: bytes) -> Compare:
    """Return "``key`` is absent or holds bytes ordered before ``value``"."""
    return Compare(key, CompareOp.LESS, value, or_absent=True)


def greater(key: str, value: bytes) -> Compare:
    """Return "``key`` holds bytes ordered after ``value``" (false when absent)."""
    return Compare(key, CompareOp.GREATER, value)


@dataclass(frozen=True, slots=True)
class Put:
    """Write ``value`` at ``key``, attached to ``lease`` (0: none)."""

    key: str
    value: bytes
    lease: int = 0


@dataclass(frozen=True, slots=True)
class Delete:
    """Delete ``key``, or every key in ``[key, end)`` when ``end`` is given."""

    key: str
    end: str | None = None


@dataclass(frozen=True, slots=True)
class Get:
    """Read ``key``, or up to ``limit`` keys (0: all) of ``[key, end)`` when ``end`` is given."""

    key: str
    end: str | None = None
    limit: int = 0


Op = Put | Delete | Get


@dataclass(frozen=True, slots=True)
class KeyValue:
    """One stored key: its value and the revision of its last change."""

    key: str
    value: bytes
    mod_revision: int


@dataclass(frozen=True, slots=True)
class Read:
    """What one ``Get`` found: the keys in order, and whether ``limit`` cut it short."""

    kvs: list[KeyValue]
    more: bool = False

    @property
    def value(self) -> bytes | None:
        """The first key's value (a single-key ``Get``), or None when it is absent."""
        return self.kvs[0].value if self.kvs else None


@dataclass(frozen=True, slots=True)
class TxnResult:
    """The answer of ``txn``: which branch ran, the store revision after it, its reads.

    ``reads`` holds one ``Read`` per ``Get`` of the branch that ran, in order.
    """

    succeeded: bool
    revision: int
    reads: list[Read]


@dataclass(frozen=True, slots=True)
class WatchChanges:
    """Changed keys, in revision order; every change up to ``revision`` was reported.

    A store may coalesce several changes of one key into its latest value, and may leave
    deletions out; keys whose value is ``None`` were deleted.
    """

    changes: list[tuple[str, bytes | None, int]]
    revision: int


@dataclass(frozen=True, slots=True)
class WatchCompacted:
    """The history the watch needed is gone: read the keys again and watch on from there."""

    revision: int


WatchItem = WatchChanges | WatchCompacted


@runtime_checkable
class KvStore(Protocol):
    """A transactional, watchable key-value store (see the module doc).

    Attributes:
        max_request_bytes: the most bytes one request may carry; the log writes larger values
            as chunks.
        timeout_s: the bound of one operation, retries included.
    """

    max_request_bytes: int
    timeout_s: float

    async def txn(
        self, compares: Sequence[Compare], success: Sequence[Op], failure: Sequence[Op] = ()
    ) -> TxnResult:
        """Run ``success`` if every compare holds, else ``failure``; atomically, once.

        Raises:
            UnknownOutcomeError: the answer was lost; the transaction may have committed.
            UpdateTooLargeError: the request is over the store's limit; nothing was written.
            StoreQuotaExceededError: the store is full; nothing was written.
        """
        ...

    async def range(self, start: str, end: str, *, limit: int = 0) -> Read:
        """Read the keys of ``[start, end)`` in order, at most ``limit`` (0: all).

        Raises:
            StorageUnavailableError: no answer within the store's timeout.
        """
        ...

    async def keys(self, start: str, end: str, *, limit: int = 0) -> list[str]:
        """Return the keys of ``[start, end)`` in order, at most ``limit`` (0: all), no values."""
        ...

    def watch(self, start: str, end: str, from_revision: int) -> AsyncIterator[WatchItem]:
        """Yield the changes of ``[start, end)`` made at ``from_revision`` and after.

        The iterator ends (or raises ``StorageUnavailableError``) when the store is closed or
        lost; callers watch again from the last revision they saw + 1.
        """
        ...

    async def grant_lease(self, ttl_s: int) -> int:
        """Grant a lease of ``ttl_s`` seconds and return its id."""
        ...

    async def keep_alive(self, lease: int) -> bool:
        """Renew ``lease`` for its ttl; False when it has already expired."""
        ...

    async def compact(self, revision: int) -> None:
        """Drop the store's history of changes before ``revision`` (never the current keys)."""
        ...

    async def close(self) -> None:
        """Release connections and end every watch. Idempotent."""
        ...

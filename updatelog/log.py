"""The ``UpdateLog`` protocol: versioned opaque payloads with CAS append, watch and snapshots.

The log knows nothing about tables. It stores ``bytes`` under contiguous version numbers and
guards every append with two compare-and-set conditions (the previous version and the safe
time), exactly as docs/design.md's "Storage" and "Time" sections describe.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from updatelog.keys import KeyLayout
from updatelog.kv import KvStore


class AppendConflict(enum.Enum):
    """Why an append did not commit."""

    VERSION = "version"
    """``catalog.version`` is no longer ``version - 1``."""
    SAFE_TIME = "safe_time"
    """``catalog.safe_time`` is already ``>= proposal_ts``."""
    REQUEST = "request"
    """One of the request ids is already recorded: committed by ``request_version``, or
    refused (``request_refusal``) with the log at ``request_version``."""


@dataclass(frozen=True, slots=True)
class AppendResult:
    """The outcome of ``UpdateLog.append``.

    Attributes:
        committed: True when the payload was written as ``version``.
        version: the latest version in the log after the attempt (the appended one on success).
        safe_time: the safe time in the log after the attempt.
        conflict: why it did not commit; None on success.
        request_version: for ``AppendConflict.REQUEST``, the version that committed the
            already-recorded request id (or the version it was refused at).
        request_id: for ``AppendConflict.REQUEST``, which request id was already recorded.
        request_refusal: for ``AppendConflict.REQUEST``, the refusal payload when that request
            was refused rather than committed.
        request_digest: for ``AppendConflict.REQUEST``, the digest recorded with the id (empty
            when it was recorded without one).
    """

    committed: bool
    version: int
    safe_time: int
    conflict: AppendConflict | None = None
    request_version: int | None = None
    request_id: str | None = None
    request_refusal: bytes | None = None
    request_digest: bytes = b""

    @property
    def request(self) -> RequestRecord | None:
        """The recorded outcome of ``request_id`` for a ``REQUEST`` conflict, else None."""
        if self.request_version is None:
            return None
        return RequestRecord(self.request_version, self.request_refusal, digest=self.request_digest)


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """The one outcome of a request id.

    Attributes:
        version: the version that committed the request, or the latest version when it was
            refused.
        refusal: the caller's opaque refusal payload; None when the request committed.
    """

    version: int
    refusal: bytes | None = None
    expires_ms: int = field(default=0, compare=False)
    """Wall-clock milliseconds after which the id names no request any more (0: never, for
    records written by releases before expiry existed)."""
    digest: bytes = field(default=b"", compare=False)
    """The digest of the request's content (32 bytes), so that the id reused for
    other content is told apart from a retry; empty when recorded without one."""

    def same_request(self, digest: bytes) -> bool:
        """Return whether content with ``digest`` may be the request this record is about.

        A record or a caller without a digest cannot tell, and counts as the same request.
        """
        return not self.digest or not digest or self.digest == digest

    @property
    def refused(self) -> bool:
        """True when the request was refused rather than committed."""
        return self.refusal is not None


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One stored version: an update payload, or the full snapshot at the snapshot version."""

    version: int
    payload: bytes
    is_snapshot: bool = False


@dataclass(frozen=True, slots=True)
class SafeTimeAdvanced:
    """Watch event: the log's safe time is now at least ``safe_time``."""

    safe_time: int


@dataclass(frozen=True, slots=True)
class SnapshotRequired:
    """Watch event: the next version to deliver was compacted into a snapshot.

    The consumer must reload from ``read(snapshot_version)`` (whose first entry is the
    snapshot) and then watch again from ``snapshot_version + 1``.
    """

    snapshot_version: int


WatchEvent = LogEntry | SafeTimeAdvanced | SnapshotRequired


@dataclass(frozen=True, slots=True)
class SafeTimeResult:
    """The outcome of ``raise_safe_time``: the resulting safe time and the latest version."""

    safe_time: int
    version: int


@dataclass(frozen=True, slots=True)
class ClusterSettings:
    """Settings fixed for the life of a cluster, written once at initialisation.

    Attributes:
        delay_ms: the schema-sync delay.
        max_clock_skew_ms: the maximum clock skew.
        format_version: the stored format.
        warehouse: the folder (an absolute path) under which every table's data lives, each
            table in a folder of its own recorded when it is created; None for a cluster
            created without one, until a node names one.
    """

    delay_ms: int
    max_clock_skew_ms: int
    format_version: int = 1
    warehouse: str | None = None

    def __str__(self) -> str:
        text = (
            f"schema-sync delay {self.delay_ms} ms, maximum clock skew "
            f"{self.max_clock_skew_ms} ms, format {self.format_version}"
        )
        return text if self.warehouse is None else f"{text}, warehouse {self.warehouse}"

    def fixed(self) -> tuple[int, int, int]:
        """Return the settings no node may see otherwise: delay, clock skew, format."""
        return (self.delay_ms, self.max_clock_skew_ms, self.format_version)


RequestIds = Sequence[str] | Mapping[str, bytes]
"""The request ids an append records: the ids alone, or each with its request's digest."""


@runtime_checkable
class UpdateLog(Protocol):
    """A durable, totally ordered log of versioned payloads guarded by compare-and-set.

    Versions start at 1 and are contiguous from ``earliest_version()`` (the snapshot version,
    or 1 before any snapshot) to ``latest_version()``. An empty log has latest version 0.

    Attributes:
        store: the key-value store under the log. What is not the log but lives beside it
            (data commits, the node registry, the API's signing keys) is kept by the package
            that owns it, over this same store, under a ``keys.subspace(name)`` of its own.
        keys: the catalog's key layout in ``store``.
        request_ttl_ms: how long a request id keeps its outcome (its record's lifetime).
    """

    store: KvStore
    keys: KeyLayout
    request_ttl_ms: int

    async def append(
        self, version: int, payload: bytes, proposal_ts: int, request_ids: RequestIds = ()
    ) -> AppendResult:
        """Append ``payload`` as ``version`` in one atomic transaction.

        It commits only if ``catalog.version == version - 1`` (or absent when ``version == 1``),
        ``catalog.safe_time < proposal_ts``, and no ``request_ids`` entry is recorded yet. On
        commit it also sets ``catalog.safe_time = proposal_ts`` and records every request id
        (with the digest of its request's content, when ``request_ids`` maps ids to digests).
        An ambiguous outcome (timeout during commit) is resolved by reading back.

        Raises:
            StorageUnavailableError: the store did not answer within the bounded retries.
        """
        ...

    async def read(self, from_version: int, to_version: int | None = None) -> list[LogEntry]:
        """Read versions ``from_version..to_version`` (inclusive; default: latest) in one range.

        Raises:
            LogCompactedError: ``from_version`` is older than the snapshot version.
        """
        ...

    async def latest_version(self) -> int:
        """Return ``catalog.version``, or 0 for an empty log."""
        ...

    async def earliest_version(self) -> int:
        """Return the snapshot version, 1 when no snapshot was saved, or 0 for an empty log."""
        ...

    async def safe_time(self) -> int:
        """Return ``catalog.safe_time``, or 0 if never set."""
        ...

    async def raise_safe_time(self, ts: int) -> SafeTimeResult:
        """Raise ``catalog.safe_time`` to ``ts`` by compare-and-set; never lower it."""
        ...

    async def request_record(self, request_id: str) -> RequestRecord | None:
        """Return the recorded outcome of ``request_id``, or None if it is unknown."""
        ...

    async def record_refusal(
        self, request_id: str, version: int, refusal: bytes, digest: bytes = b""
    ) -> AppendResult:
        """Record that ``request_id`` (with content ``digest``) was refused at ``version``.

        One atomic transaction: it commits only if ``catalog.version == version`` and the request
        id is not recorded yet, so a copy of the request still in flight cannot commit later.
        Nothing else changes (no new version). Repeating it is harmless.

        Returns:
            Success (``version`` unchanged), a ``REQUEST`` conflict carrying the id's recorded
            outcome, or a ``VERSION`` conflict with the latest version (judge again there).

        Raises:
            StorageUnavailableError: the store did not answer within the bounded retries.
        """
        ...

    async def record_unchanged(
        self, request_id: str, version: int, digest: bytes = b""
    ) -> AppendResult:
        """Record that ``request_id`` (with content ``digest``) changed nothing at ``version``.

        For a request whose every command was a no-op: its id is answered from then on as
        committed at ``version``, which holds no outcome for it, and no version is written.
        Guarded as ``record_refusal`` is, with the same results.

        Raises:
            StorageUnavailableError: the store did not answer within the bounded retries.
        """
        ...

    def watch(self, from_version: int) -> AsyncGenerator[WatchEvent, None]:
        """Yield every version from ``from_version`` on, in order, then live ones.

        Never skips or repeats a version. Interleaves ``SafeTimeAdvanced`` events. If the next
        version to deliver has been compacted, yields ``SnapshotRequired`` and stops. The
        generator holds a connection or stream: close it (``aclose``) when done.
        """
        ...

    async def save_snapshot(self, version: int, payload: bytes | Sequence[bytes]) -> bool:
        """Overwrite ``version`` with a snapshot and delete older versions, atomically.

        ``payload`` is the snapshot, or pieces whose concatenation is the snapshot: a large
        one is stored from its pieces without ever being joined in memory.

        Returns False (and changes nothing) if the snapshot would move backwards or stay.
        """
        ...

    async def init_settings(self, settings: ClusterSettings) -> ClusterSettings:
        """Store ``settings`` if none are stored yet, and return the stored ones.

        The warehouse is the cluster's: the one stored wins over the one asked for, and a
        cluster stored without one takes the one asked for.

        Raises:
            SettingsMismatchError: the stored delay, clock skew or format differ from
                ``settings``.
        """
        ...

    def collect_requests_under(self, prefix: str) -> None:
        """Have garbage collection delete expired request records under ``prefix`` too.

        The hook for an owner beside the log (its keys under ``keys.subspace(name)``) whose
        records carry request ids in the log's format (``updatelog.requests``).

        Raises:
            ValueError: ``prefix`` is not under this log's key prefix.
        """
        ...

    async def close(self) -> None:
        """Release connections and stop background work. Idempotent.

        Registry entries are not removed: they expire after their ttl, as after a crash.
        """
        ...

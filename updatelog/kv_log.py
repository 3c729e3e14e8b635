"""``KvUpdateLog``: every rule of the update log, once, over the key-value seam.

The rules (docs/design.md, "Storage" and "Time"): an append is one transaction that requires
``catalog.version == N - 1``, ``catalog.safe_time < u`` and that none of its request ids names a
live record, and then writes the update, the version, the safe time and the request records. A
value over the store's request limit is written as chunks first (``updatelog.chunks``) and made
visible by that same transaction, which then writes the manifest. A snapshot at S moves
``catalog.snapshot.version`` to S and deletes everything older in one transaction; the store's
own history is then compacted, and expired request records and orphaned chunks are collected.

Outcomes: a refusal by the store (too large, full) is definite and changes nothing. A write whose
answer was lost is read back: the update key holding exactly our bytes means it committed;
otherwise the same compare-and-set is sent again, and its compares guarantee that at most one
of the attempts commits. Only when the store stays silent past its timeout does the caller get
"may have committed".
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from updatelog import envelope, requests
from updatelog.backoff import Backoff, send_repeatable
from updatelog.chunks import Chunks, ChunksMissingError, manifest_tag
from updatelog.envelope import Envelope, Kind
from updatelog.errors import (
    FormatError,
    LogCompactedError,
    SettingsMismatchError,
    StorageUnavailableError,
    UnknownOutcomeError,
    UpdateTooLargeError,
)
from updatelog.keys import VERSION_DIGITS, KeyLayout, check_int, prefix_range_end
from updatelog.kv import (
    Compare,
    Delete,
    Get,
    KvStore,
    Op,
    Put,
    Read,
    TxnResult,
    absent,
    equals,
    greater,
    less_or_absent,
)
from updatelog.kv_append import Append
from updatelog.kv_watch import watch_log
from updatelog.listing import Listing
from updatelog.log import (
    AppendConflict,
    AppendResult,
    ClusterSettings,
    LogEntry,
    RequestIds,
    RequestRecord,
    SafeTimeResult,
    WatchEvent,
)

T = TypeVar("T")

DEFAULT_REQUEST_TTL_S = 24 * 3600.0
"""How long a request id names its outcome (as idempotency keys elsewhere)."""
MAX_UPDATE_BYTES = 512 * 1024 * 1024
"""The hard limit of one update (a batch of commands); larger ones are refused up front."""
CHUNK_GRACE_MS = 10 * 60 * 1000
"""Chunks no manifest names are collected once this old: no writer takes that long."""
_MARGIN = 32 * 1024  # room in a request for keys and the small puts beside a value
_PAGE = 256
_MAX_BACKOFF_S = 0.25


def _enc(value: int) -> bytes:
    return envelope.encode_int(Kind.VERSION, value)


def _int(read: Read, kind: Kind) -> int:
    value = read.value
    return 0 if value is None else envelope.decode_int(value, kind)


DELETE_BATCH = 16
"""Versions whose updates one transaction deletes after a snapshot replaced them."""


class KvUpdateLog:
    """The ``UpdateLog`` over a ``KvStore`` (see the module doc).

    Args:
        store: the key-value store; the log owns it and closes it.
        prefix: key prefix, so several catalogs can share one store.
        request_ttl_s: how long a request id keeps its outcome.
        relist_interval_s: how often a watch reads the keys again to catch a silent stream.
        max_update_bytes: the largest update ``append`` accepts.
    """

    def __init__(
        self,
        store: KvStore,
        *,
        prefix: str = "",
        request_ttl_s: float = DEFAULT_REQUEST_TTL_S,
        relist_interval_s: float = 1.5,
        max_update_bytes: int = MAX_UPDATE_BYTES,
    ) -> None:
        if request_ttl_s <= 0 or relist_interval_s <= 0 or max_update_bytes <= 0:
            raise ValueError("request_ttl_s, relist_interval_s, max_update_bytes must be positive")
        self.store = store
        self.keys = KeyLayout(prefix)
        self.request_ttl_ms = int(request_ttl_s * 1000)
        self.relist_interval_s = relist_interval_s
        self.max_update_bytes = max_update_bytes
        self.chunks = Chunks(store, self.keys, max(4096, store.max_request_bytes - _MARGIN))
        self._request_prefixes = [self.keys.request_prefix]
        self._closed = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.store!r}, prefix={self.keys.prefix!r})"

    def __str__(self) -> str:
        return f"{self.store}{f' under prefix {self.keys.prefix}' if self.keys.prefix else ''}"

    # -- writing ----------------------------------------------------------------------------

    async def _stored(
        self, value: Sequence[bytes], kind: str, version: int
    ) -> tuple[bytes, str | None]:
        """Return what to store for ``value`` (its pieces): itself, or its chunks' manifest."""
        if len(value) == 1 and len(value[0]) <= self.chunks.chunk_bytes:
            return value[0], None
        if sum(len(piece) for piece in value) <= self.chunks.chunk_bytes:
            return b"".join(value), None
        stored = await self.chunks.write(kind, version, value)
        return stored, manifest_tag(stored)

    async def append(
        self, version: int, payload: bytes, proposal_ts: int, request_ids: RequestIds = ()
    ) -> AppendResult:
        """Append ``payload`` as ``version`` (see ``UpdateLog.append`` and the module doc)."""
        check_int("version", version, 1)
        check_int("proposal_ts", proposal_ts, 1)
        if len(payload) > self.max_update_bytes:
            raise UpdateTooLargeError(
                f"update {version} is {len(payload):,} bytes, over the log's limit of "
                f"{self.max_update_bytes:,}; split the batch into smaller ones"
            )
        stored, tag = await self._stored((envelope.encode(Kind.UPDATE, payload),), "u", version)
        append = Append(self, version, stored, proposal_ts, request_ids)
        result = await append.run()
        if tag is not None and not result.committed:
            await self.chunks.discard(tag)
        return result

    async def record_refusal(
        self, request_id: str, version: int, refusal: bytes, digest: bytes = b""
    ) -> AppendResult:
        """Record that ``request_id`` was refused with the log at ``version`` (see UpdateLog)."""
        return await self._record(
            "record_refusal",
            request_id,
            version,
            lambda expires: requests.encode_refused(version, expires, refusal, digest),
        )

    async def record_unchanged(
        self, request_id: str, version: int, digest: bytes = b""
    ) -> AppendResult:
        """Record that ``request_id`` changed nothing at ``version`` (see UpdateLog)."""
        return await self._record(
            "record_unchanged",
            request_id,
            version,
            lambda expires: requests.encode_committed(version, expires, digest),
        )

    async def _record(
        self, what: str, request_id: str, version: int, value_of: Callable[[int], bytes]
    ) -> AppendResult:
        """Record ``request_id``'s outcome as of ``version`` without a new version.

        ``value_of(expires_ms)`` is the record. One transaction: it commits only if the log is
        still at ``version`` and the id is free (or holds the expired record seen last time).
        """
        check_int("version", version, 1)
        keys, key = self.keys, self.keys.request(request_id)
        reads = [Get(keys.version), Get(keys.safe_time), Get(key)]
        replace: bytes | None = None
        while True:
            value = value_of(requests.wall_ms() + self.request_ttl_ms)
            result = await self._send(
                what,
                [equals(keys.version, _enc(version)), equals(key, replace)],
                [Put(key, value), *reads],
                reads,
            )
            latest = _int(result.reads[-3], Kind.VERSION)
            safe = _int(result.reads[-2], Kind.SAFE_TIME)
            if result.succeeded:
                return AppendResult(True, latest, safe)
            recorded = result.reads[-1].value
            if recorded is not None:
                record = requests.decode_record(recorded)
                if requests.is_expired(record, requests.wall_ms()) and recorded != replace:
                    replace = recorded
                    continue
                return requests.request_conflict(latest, safe, request_id, record)
            if replace is not None:
                replace = None
                continue
            return AppendResult(False, latest, safe, AppendConflict.VERSION)

    async def _send(
        self,
        what: str,
        compares: Sequence[Compare],
        success: Sequence[Op],
        failure: Sequence[Op] = (),
    ) -> TxnResult:
        return await send_repeatable(self.store, what, compares, success, failure)

    async def raise_safe_time(self, ts: int) -> SafeTimeResult:
        """Raise ``catalog.safe_time`` to ``ts`` by compare-and-set; never lower it.

        A repeat after a lost answer is harmless: the compare only ever raises the value.
        """
        check_int("ts", ts, 0)
        keys = self.keys
        reads = [Get(keys.version), Get(keys.safe_time)]
        value = envelope.encode_int(Kind.SAFE_TIME, ts)
        result = await self._send(
            "raise_safe_time",
            [less_or_absent(keys.safe_time, value)],
            [Put(keys.safe_time, value), *reads],
            reads,
        )
        latest, safe = _int(result.reads[-2], Kind.VERSION), _int(result.reads[-1], Kind.SAFE_TIME)
        return SafeTimeResult(max(safe, ts), latest)

    # -- reading ----------------------------------------------------------------------------

    async def _get(self, *keys: str) -> list[Read]:
        return (await self.store.txn([], [Get(k) for k in keys])).reads

    async def latest_version(self) -> int:
        """Return ``catalog.version``, or 0 for an empty log."""
        (version,) = await self._get(self.keys.version)
        return _int(version, Kind.VERSION)

    async def _bounds(self) -> tuple[int, int]:
        latest, snapshot = await self._get(self.keys.version, self.keys.snapshot_version)
        return _int(latest, Kind.VERSION), _int(snapshot, Kind.VERSION)

    async def earliest_version(self) -> int:
        """Return the snapshot version, 1 when no snapshot was saved, or 0 for an empty log."""
        latest, snapshot = await self._bounds()
        return snapshot or min(latest, 1)

    async def safe_time(self) -> int:
        """Return ``catalog.safe_time``, or 0 if never set."""
        (safe,) = await self._get(self.keys.safe_time)
        return _int(safe, Kind.SAFE_TIME)

    async def request_record(self, request_id: str) -> RequestRecord | None:
        """Return the live outcome of ``request_id``, or None (unknown, or expired)."""
        (read,) = await self._get(self.keys.request(request_id))
        if read.value is None:
            return None
        record = requests.decode_record(read.value)
        return None if requests.is_expired(record, requests.wall_ms()) else record

    async def read(self, from_version: int, to_version: int | None = None) -> list[LogEntry]:
        """Read versions ``from_version..to_version`` (inclusive; default: latest), in pages.

        Returns:
            The entries in version order; the one at the snapshot version is the snapshot.

        Raises:
            LogCompactedError: ``from_version`` is older than the snapshot version (also when
                a snapshot overtakes the read).
            FormatError: a stored value is corrupted or of an unknown format.
        """
        check_int("from_version", from_version, 1)
        if to_version is not None:
            check_int("to_version", to_version, 0)
        latest, snapshot = await self._bounds()
        self._check_retained(from_version, snapshot)
        last = latest if to_version is None else min(to_version, latest)
        entries: list[LogEntry] = []
        next_version = from_version
        if next_version == snapshot and next_version <= last:
            found = await self._snapshot_entry(snapshot)
            if found is not None:
                entries.append(found)
                next_version += 1
        while next_version <= last:
            end = min(last, next_version + _PAGE - 1)
            page = await self.store.range(*self.keys.update_range(next_version, end))
            got = await self._entries(page, next_version)
            if len(got) != end - next_version + 1:
                self._check_retained(next_version, (await self._bounds())[1])
                raise FormatError(
                    f"the log has a gap: version {next_version + len(got)} is missing"
                )
            entries.extend(got)
            next_version = end + 1
        return entries

    def _check_retained(self, version: int, snapshot: int) -> None:
        if version < snapshot:
            raise LogCompactedError(
                f"version {version} was compacted into the snapshot at {snapshot}",
                earliest_version=snapshot,
            )

    async def _snapshot_entry(self, version: int) -> LogEntry | None:
        """Return the snapshot at ``version``, or None if it sits at its update key (old layout)."""
        (read,) = await self._get(self.keys.snapshot(version))
        if read.value is None:
            return None
        body = (await self.resolve(version, read.value, Kind.SNAPSHOT)).body
        return LogEntry(version, body, is_snapshot=True)

    async def _entries(self, read: Read, first: int | None) -> list[LogEntry]:
        """Decode the update keys of a range read, checking that they are contiguous.

        ``first`` is the version the read must start at; None lets it start anywhere (a
        watch's listing, which learns of a snapshot from the bounds read beside it).
        """
        entries: list[LogEntry] = []
        for kv in read.kvs:
            version = self.keys.version_of_update(kv.key)
            expected = entries[-1].version + 1 if entries else (first or version)
            if version != expected:
                raise FormatError(f"the log has a gap: version {expected} is missing")
            env = await self.resolve(version, kv.value, Kind.UPDATE, Kind.SNAPSHOT)
            entries.append(LogEntry(version, env.body, env.kind is Kind.SNAPSHOT))
        return entries

    async def resolve(self, version: int, stored: bytes, *kinds: Kind) -> Envelope:
        """Decode a stored value of ``version``, assembling its chunks if it has any.

        Raises:
            LogCompactedError: its chunks are gone because a snapshot overtook the read.
            FormatError: the value or its chunks are corrupted or missing while retained.
        """
        try:
            return await self.chunks.resolve(stored, *kinds)
        except ChunksMissingError:
            self._check_retained(version, (await self._bounds())[1])
            raise

    async def list_updates(self, next_version: int, limit: int = _PAGE) -> Listing:
        """Read up to ``limit`` updates from ``next_version`` and the bounds, in one transaction.

        Raises:
            FormatError: a stored value is corrupted.
            StorageUnavailableError: the store did not answer in time.
        """
        keys = self.keys
        start, end = keys.update(next_version), prefix_range_end(keys.update_prefix)
        result = await self.store.txn(
            [],
            [
                Get(start, end, limit),
                Get(keys.snapshot_version),
                Get(keys.safe_time),
                Get(keys.snapshot(next_version)),
            ],
        )
        updates, snapshot_read, safe, at_start = result.reads
        snapshot = _int(snapshot_read, Kind.VERSION)
        entries = await self._entries(updates, None)
        if snapshot == next_version and at_start.value is not None:
            # A watch from the snapshot version starts with the snapshot, as ``read`` does.
            body = (await self.resolve(snapshot, at_start.value, Kind.SNAPSHOT)).body
            rest = [e for e in entries if e.version > snapshot]
            entries = [LogEntry(snapshot, body, is_snapshot=True), *rest]
        return Listing(result.revision, snapshot, _int(safe, Kind.SAFE_TIME), entries, updates.more)

    def watch(self, from_version: int) -> AsyncGenerator[WatchEvent, None]:
        """Yield every version from ``from_version`` on, in order, then live ones.

        See ``updatelog.kv_watch`` for how it survives lost streams and compaction.

        Raises:
            StorageUnavailableError: the log is closed, or the store stayed unreachable.
        """
        check_int("from_version", from_version, 1)
        if self._closed:
            # A closed log refuses a new watch rather than ending it at once, so that a
            # follower re-watching in a loop backs off instead of spinning.
            raise StorageUnavailableError(f"{self} is closed")
        return watch_log(self, from_version)

    def is_closed(self) -> bool:
        """Return whether ``close`` was called."""
        return self._closed

    # -- settings, closing --------------------------------------------------------

    async def init_settings(self, settings: ClusterSettings) -> ClusterSettings:
        """Store ``settings`` if none are stored yet, and return the stored ones.

        The warehouse is the cluster's: the one stored wins over the one asked for, and a
        cluster stored without one takes the one asked for (compare-and-set on the stored
        value, so two nodes naming different ones agree on one).

        Raises:
            SettingsMismatchError: the stored delay, clock skew or format differ from
                ``settings``.
        """
        key = self.keys.settings
        value = envelope.encode_settings(settings)
        result = await self._send("init_settings", [absent(key)], [Put(key, value)], [Get(key)])
        while True:
            stored_value = value if result.succeeded else result.reads[0].value
            stored = settings if stored_value is None else envelope.decode_settings(stored_value)
            if stored.fixed() != settings.fixed():
                raise SettingsMismatchError(
                    f"this node is configured with {settings}, but the catalog"
                    f"{f' under prefix {self.keys.prefix}' if self.keys.prefix else ''} was "
                    f"initialised with {stored}; these never change: start the node with the "
                    "catalog's values (--delay-ms, --max-clock-skew-ms)"
                )
            if result.succeeded or stored.warehouse is not None or settings.warehouse is None:
                return stored
            # A cluster created without a warehouse takes this node's.
            value = envelope.encode_settings(replace(stored, warehouse=settings.warehouse))
            result = await self._send(
                "init_settings", [equals(key, stored_value)], [Put(key, value)], [Get(key)]
            )

    async def close(self) -> None:
        """End every watch and close the store. Idempotent.

        Registry entries are not removed: they expire with their lease, as after a crash.
        """
        if self._closed:
            return
        self._closed = True
        await self.store.close()

    # -- snapshots and compaction -----------------------------------------------------------

    async def save_snapshot(self, version: int, payload: bytes | Sequence[bytes]) -> bool:
        """Save the snapshot at ``version``; then delete the updates it replaces.

        A large snapshot's chunks are written first, each in its own transaction, so commits
        go on meanwhile. The transaction that saves it compares ``catalog.snapshot.version <
        version`` (or absent) and ``catalog.version >= version``, and deletes the older
        snapshots; from then on no read reaches an update below ``version``, and those are
        deleted a few versions per transaction (``DELETE_BATCH``): a million tables' worth of
        updates freed at once would hold the store's write lock, and every commit, for
        seconds. Afterwards the store's history before the previous snapshot is compacted, and
        expired request records and orphaned chunks go.

        Returns:
            True if saved; False (nothing changed) if it would not move the snapshot forward or
            ``version`` is not in the log.

        Raises:
            StorageUnavailableError: the store did not answer in time; it may have committed.
        """
        check_int("version", version, 1)
        keys = self.keys
        pieces = (payload,) if isinstance(payload, bytes) else payload
        # A snapshot may be hundreds of megabytes: framing it is no work for the event loop,
        # and it stays in its pieces until they are cut into chunks.
        framed = await asyncio.to_thread(envelope.encode_pieces, Kind.SNAPSHOT, pieces)
        stored, tag = await self._stored(framed, "s", version)
        reads = [Get(keys.version), Get(keys.snapshot_version), Get(keys.snapshot(version))]
        success: list[Op] = [
            Get(keys.snapshot_version),
            Put(keys.snapshot_version, _enc(version)),
            Put(keys.snapshot(version), stored),
            Delete(keys.snapshot(0), keys.snapshot(version)),
            Delete(*keys.chunks_before("s", version)),
        ]
        compares = [
            less_or_absent(keys.snapshot_version, _enc(version)),
            greater(keys.version, _enc(version - 1)),
        ]
        ambiguous = False
        backoff = Backoff(self.store.timeout_s)
        while True:
            try:
                result = await self.store.txn(compares, success, reads)
            except UnknownOutcomeError as e:
                ambiguous = True
                if backoff.exhausted():
                    raise StorageUnavailableError(f"{e.message}; the snapshot may be saved") from e
                await backoff.pause()
                result = await self.store.txn([], reads)
                if result.reads[2].value == stored:
                    await self._after_snapshot(0)
                    return True
                continue
            if result.succeeded:
                previous = result.reads[0].kvs
                since = _int(result.reads[0], Kind.VERSION) if previous else 0
                await self._delete_updates(since, version)
                await self._after_snapshot(previous[0].mod_revision if previous else 0)
                return True
            latest = _int(result.reads[0], Kind.VERSION)
            current = _int(result.reads[1], Kind.VERSION)
            if ambiguous and current == version and result.reads[2].value == stored:
                return True
            if tag is not None:
                await self.chunks.discard(tag)
            if version <= current or version > latest:
                return False

    async def _delete_updates(self, since: int, version: int) -> None:
        """Delete the updates (and their chunks) below ``version``, from ``since`` on in batches.

        Everything below ``since`` went with an earlier snapshot; one range delete sweeps what
        an interrupted deletion may have left there (nothing, normally).
        """
        keys = self.keys
        start = max(since, 1)
        for first in range(start, version, DELETE_BATCH):
            last = min(first + DELETE_BATCH, version) - 1
            ops = [Delete(*keys.update_range(0 if first == start else first, last))]
            if last == version - 1:
                ops.append(Delete(*keys.chunks_before("u", version)))
            await self.store.txn([], ops)

    async def _after_snapshot(self, previous_revision: int) -> None:
        """Compact the store's history up to the previous snapshot and collect garbage.

        History is kept back to the previous snapshot (not this one) so that a watch that is
        a little behind goes on from its stream instead of reading the keys again.
        """
        if previous_revision > 0:
            await self.store.compact(previous_revision)
        await self.collect_garbage()

    async def collect_garbage(self, now_ms: int | None = None) -> int:
        """Delete expired request records and chunks that no manifest names; return how many.

        Request records are those of the log and those under every prefix an owner
        registered (``collect_requests_under``).

        Chunks younger than ``CHUNK_GRACE_MS`` are kept: their writer may still commit.
        """
        now = requests.wall_ms() if now_ms is None else now_ms
        removed = await self._collect_requests(now)
        tags = await self.chunks.tags()
        if not tags:
            return removed
        snapshot = (await self._bounds())[1]
        for tag in sorted(tags):
            kind, version = tag[0], int(tag[1 : 1 + VERSION_DIGITS])
            born = int(tag[2 + VERSION_DIGITS : 14 + VERSION_DIGITS], 16)
            key = self.keys.update(version) if kind == "u" else self.keys.snapshot(version)
            (read,) = await self._get(key)
            named = read.value is not None and manifest_tag(read.value) == tag
            # At or above the snapshot a value may still be on its way (a writer between its
            # chunks and its manifest, another node's snapshot): only age makes it garbage.
            # Below it, no manifest transaction can commit any more.
            retained = version >= snapshot
            if named and retained:
                continue
            if now - born >= CHUNK_GRACE_MS or not retained:
                await self.chunks.discard(tag)
                removed += 1
        return removed

    def collect_requests_under(self, prefix: str) -> None:
        """Have ``collect_garbage`` delete the expired request records under ``prefix`` too.

        For an owner beside the log (under a ``KeyLayout.subspace``) whose records carry
        request ids written with ``updatelog.requests``: they expire as the log's own do.
        Registering one prefix again changes nothing.

        Raises:
            ValueError: ``prefix`` is not under this log's key prefix.
        """
        start, end = self.keys.all_range
        if not start <= prefix < end:
            raise ValueError(f"{prefix!r} is not under this log's keys ({start!r})")
        if prefix not in self._request_prefixes:
            self._request_prefixes.append(prefix)

    async def _collect_requests(self, now: int) -> int:
        removed = 0
        for prefix in self._request_prefixes:
            removed += await requests.collect_expired(self.store, prefix, now, page=_PAGE)
        return removed

"""The log's watch: list, then watch the store from the list's revision + 1, and recover.

Every watch follows one loop, whatever the store: read the updates from the next undelivered
version at some revision R (one transaction), deliver them, then follow the store's watch of the
log's keys from R + 1. It never skips or repeats a version:

- **The store's watch ends** (stream lost, store closed): a new one starts from the last
  revision processed + 1.
- **The store compacted the revision** the watch needed: the keys, which compaction does not
  touch, are read again, and a new watch starts.
- **The watch hangs silently**: every ``relist_interval_s`` the keys are read again and what the
  watch did not bring is delivered; a watch that stayed silent while there was news is replaced.
- **A version arrives out of order** (a gap): the keys are read again.

Deliveries are deduplicated by version, safe times only ever rise, and a safe time is delivered
only after every update committed at or before it. When the next version was compacted into a
snapshot, ``SnapshotRequired`` ends the watch. Chunk keys are outside the watched range: a large
update's manifest arrives in the watch, and its chunks are read from the store.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Protocol

from updatelog import envelope
from updatelog.envelope import Envelope, Kind
from updatelog.errors import FormatError, LogCompactedError, StorageUnavailableError
from updatelog.keys import KeyLayout, prefix_range_end
from updatelog.kv import KvStore, WatchChanges, WatchItem
from updatelog.listing import Listing
from updatelog.log import LogEntry, SafeTimeAdvanced, SnapshotRequired, WatchEvent

_MAX_BACKOFF_S = 0.5


class _Log(Protocol):
    """What a watch needs of its log (``KvUpdateLog``)."""

    keys: KeyLayout
    store: KvStore
    relist_interval_s: float

    def is_closed(self) -> bool: ...

    async def resolve(self, version: int, stored: bytes, *kinds: Kind) -> Envelope: ...

    async def list_updates(self, next_version: int) -> Listing: ...


class _Restart(Exception):
    """Internal: leave the follow loop; ``relist`` says whether to read the keys first."""

    def __init__(self, relist: bool) -> None:
        super().__init__()
        self.relist = relist


class _Watch:
    """The state of one watch: what was delivered, and up to which revision it is known."""

    def __init__(self, log: _Log, from_version: int) -> None:
        self.log = log
        self.keys = log.keys
        self.next_version = from_version
        self.sent_safe_time = 0
        self.revision = 0  # every change at or before it has been processed
        self.snapshot_required: int | None = None
        # The watched range: safe time, settings, snapshots, updates (not chunks, requests,
        # data commits or the registry, which sort before it).
        self.start = self.keys.safe_time
        self.end = prefix_range_end(self.keys.update_prefix)

    def from_listing(self, entries: list[LogEntry], snapshot: int) -> list[WatchEvent]:
        """Return what a listing adds, or ``SnapshotRequired`` if it is too late for it."""
        if snapshot > self.next_version:
            self.snapshot_required = snapshot
            return [SnapshotRequired(snapshot)]
        out: list[WatchEvent] = []
        for entry in entries:
            if entry.version == self.next_version:
                out.append(entry)
                self.next_version += 1
            elif entry.version > self.next_version:
                raise FormatError(f"the log has a gap: version {self.next_version} is missing")
        return out

    def safe_time(self, ts: int) -> list[WatchEvent]:
        if ts > self.sent_safe_time:
            self.sent_safe_time = ts
            return [SafeTimeAdvanced(ts)]
        return []

    async def from_changes(self, item: WatchChanges) -> tuple[list[WatchEvent], bool]:
        """Return the deliveries from one batch of changes, and whether a relist is needed."""
        keys = self.keys
        out: list[WatchEvent] = []
        safe = 0
        for key, value, revision in item.changes:
            if value is not None:
                if key.startswith(keys.update_prefix):
                    version = keys.version_of_update(key)
                    if version > self.next_version:
                        return out, True  # something between was missed; the keys know
                    if version == self.next_version:
                        try:
                            env = await self.log.resolve(version, value, Kind.UPDATE, Kind.SNAPSHOT)
                        except LogCompactedError:
                            return out, True  # a snapshot took its chunks: the keys tell
                        out.append(LogEntry(version, env.body, env.kind is Kind.SNAPSHOT))
                        self.next_version += 1
                elif key == keys.snapshot_version:
                    snapshot = envelope.decode_int(value, Kind.VERSION)
                    if snapshot > self.next_version:
                        self.snapshot_required = snapshot
                        out.append(SnapshotRequired(snapshot))
                        return out, False
                elif key == keys.safe_time:
                    safe = max(safe, envelope.decode_int(value, Kind.SAFE_TIME))
            self.revision = max(self.revision, revision)
        self.revision = max(self.revision, item.revision)
        # A batch never splits one revision, so every update committed with (or before) this
        # safe time has been delivered above.
        out.extend(self.safe_time(safe))
        return out, False


async def watch_log(log: _Log, from_version: int) -> AsyncGenerator[WatchEvent, None]:
    """Yield ``log``'s versions from ``from_version`` on, then live ones; see module doc.

    Raises:
        FormatError: a stored value is corrupted; the watch never skips it.
        StorageUnavailableError: the store stayed unreachable for longer than its timeout.
    """
    watch = _Watch(log, from_version)
    relist = True
    delay = 0.02
    while not log.is_closed():
        if relist:
            try:
                listing = await log.list_updates(watch.next_version)
            except LogCompactedError:
                continue  # a snapshot overtook the listing: the next one says so
            except StorageUnavailableError:
                if log.is_closed():
                    return
                raise
            for event in watch.from_listing(listing.entries, listing.snapshot_version):
                yield event
            if watch.snapshot_required is not None:
                return
            if listing.more:
                continue
            for event in watch.safe_time(listing.safe_time):
                yield event
            watch.revision = max(watch.revision, listing.revision)
        try:
            stream = log.store.watch(watch.start, watch.end, watch.revision + 1)
        except StorageUnavailableError:
            if log.is_closed():
                return
            raise
        try:
            async with contextlib.aclosing(_follow(watch, stream)) as events:
                async for event in events:
                    yield event
                    delay = 0.02
            if watch.snapshot_required is not None:
                return
            relist = False  # the store's watch ended: go on from the last revision
        except _Restart as restart:
            relist = restart.relist
        except StorageUnavailableError:
            if log.is_closed():
                return
            raise
        if not relist and not log.is_closed():
            await asyncio.sleep(delay)
            delay = min(delay * 2, _MAX_BACKOFF_S)


async def _follow(
    watch: _Watch, stream: AsyncIterator[WatchItem]
) -> AsyncGenerator[WatchEvent, None]:
    """Deliver what ``stream`` brings, with periodic relists; raise ``_Restart`` to renew it."""
    log = watch.log
    loop = asyncio.get_running_loop()
    last_relist = loop.time()
    heard = False  # whether the stream said anything since the last relist
    pending: asyncio.Task[WatchItem] | None = None
    try:
        while not log.is_closed():
            if pending is None:
                pending = asyncio.ensure_future(anext(stream))
            wait = max(log.relist_interval_s - (loop.time() - last_relist), 0.0)
            done, _ = await asyncio.wait({pending}, timeout=wait)
            if not done:
                news = False
                try:
                    listing = await log.list_updates(watch.next_version)
                except LogCompactedError:
                    raise _Restart(relist=True) from None
                for event in watch.from_listing(listing.entries, listing.snapshot_version):
                    news = True
                    yield event
                if watch.snapshot_required is not None:
                    return
                if not listing.more:
                    for event in watch.safe_time(listing.safe_time):
                        news = True
                        yield event
                    watch.revision = max(watch.revision, listing.revision)
                if listing.more or (news and not heard):
                    # The stream missed news it should have brought: it is stuck.
                    raise _Restart(relist=listing.more)
                last_relist, heard = loop.time(), False
                continue
            task, pending = pending, None
            try:
                item = task.result()
            except StopAsyncIteration:
                return
            heard = True
            if not isinstance(item, WatchChanges):
                raise _Restart(relist=True)  # compacted: the keys still hold every version
            events, gap = await watch.from_changes(item)
            for event in events:
                yield event
            if watch.snapshot_required is not None:
                return
            if gap:
                raise _Restart(relist=True)
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        closer = getattr(stream, "aclose", None)
        if closer is not None:
            with contextlib.suppress(Exception):
                await closer()

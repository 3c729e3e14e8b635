"""``CatalogService``: the read side. Applies the log into a versioned cache and fires events.

Every retained version is kept as an immutable ``Catalog``; versions share structure, so
keeping thousands costs little. A version is published only once the log holds it durably
(read back from the log, or answered "committed" to this node's own append), all at once:
readers see version N whole or not at all. Events fire after publication, in entry order, and
``catalog_ready(N)`` resolves once they are done.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

from catalog.catalog import Catalog
from catalog.collector import collector_paused
from catalog.errors import (
    CatalogError,
    ErrorCode,
    NodeStoppingError,
    NotFoundError,
    VersionCompactedError,
)
from catalog.event_feed import CatalogEventParameters, EventFeed, EventFilter
from catalog.events import CatalogEvent
from catalog.marshalling import decode_update
from catalog.snapshots import decode_snapshot
from catalog.update import RequestOutcome, VersionedUpdate
from schemasync.clock import describe_ts
from schemasync.watermark import Watermark
from updatelog.errors import (
    FormatError,
    LogCompactedError,
    StorageUnavailableError,
    StoreRegressedError,
)
from updatelog.log import LogEntry, SafeTimeAdvanced, SnapshotRequired, UpdateLog

log = logging.getLogger(__name__)


Listener = Callable[[CatalogEventParameters], Awaitable[None] | None]


_EMPTY = Catalog()
"""Version 0: the empty catalog every log starts from."""


class _Window:
    """The retained versions: ``versions[i]`` is version ``earliest + i``.

    Appending publishes a version (list appends are atomic); truncation swaps the window.
    """

    __slots__ = ("activations", "earliest", "updates", "versions")

    def __init__(self, earliest: int) -> None:
        self.earliest = earliest
        self.versions: list[Catalog] = []
        self.activations: list[int] = []
        self.updates: dict[int, bytes] = {}
        """The update that produced each retained version, as its stored bytes (none for a
        loaded snapshot). Decoded on demand: kept decoded, a version's entries would hold
        a second copy of every descriptor it changed."""


@dataclass(frozen=True, slots=True)
class _Expected:
    """What this node is appending: the payload, and the catalogs before and after it."""

    payload: bytes
    before: Catalog
    update: VersionedUpdate
    after: Catalog


class CatalogService:
    """Versioned, immutable local cache of the catalog, fed by the update log.

    Args:
        log: the update log to apply.
        node_name: for log messages.
    """

    def __init__(self, log: UpdateLog, *, node_name: str = "node") -> None:
        self._log = log
        self.node_name = node_name
        self._window = _Window(earliest=1)
        self._listeners: dict[CatalogEvent, list[Listener]] = {}
        self._feeds: set[EventFeed] = set()
        self.applied = Watermark(0)
        """The latest version applied here with its listeners finished."""
        self._stopped = False
        self.observed_safe_time = Watermark(0)
        """The log's safe time as observed after applying every version before it."""
        self._watch_task: asyncio.Task[None] | None = None
        self.watch_live = False
        self.failure: BaseException | None = None
        self.regression: StoreRegressedError | None = None
        """Set once the store went back in time under this node (``store_went_back``)."""
        self.went_back_listeners: list[Callable[[StoreRegressedError], None]] = []
        """Called once when the store went back (the node stops writing to it)."""
        self._expected: _Expected | None = None
        self._applying = asyncio.Lock()
        """Held while one version is applied and its events fire, so that the watch and this
        node's own committed appends apply versions one at a time, in order."""

    # -- reads ----------------------------------------------------------------------------

    @property
    def earliest_version(self) -> int:
        """Return the earliest retained version (0 before anything was applied)."""
        window = self._window
        return window.earliest if window.versions else 0

    @property
    def latest_version(self) -> int:
        """Return the latest published version (0 before anything was applied)."""
        window = self._window
        return window.earliest + len(window.versions) - 1 if window.versions else 0

    def latest_catalog(self) -> Catalog:
        """Return the latest published catalog.

        Raises:
            NotFoundError: VERSION_NOT_FOUND before version 1 was applied.
            StoreRegressedError: the store went back in time under this node.
        """
        if self.regression is not None:
            raise self.regression
        window = self._window
        if not window.versions:
            raise NotFoundError(
                "no catalog version is applied yet", code=ErrorCode.VERSION_NOT_FOUND
            )
        return window.versions[-1]

    def catalog(self, version: int) -> Catalog:
        """Return catalog ``version`` exactly.

        Version 0 is the empty catalog before version 1, as in Ignite: no schema, no zone,
        active from the earliest time until version 1 activates.

        Raises:
            VersionCompactedError: the version is older than the snapshot.
            NotFoundError: VERSION_NOT_FOUND for a version not applied here (yet), or < 0.
        """
        window = self._window
        index = version - window.earliest
        if index < 0:
            if version == 0 and window.earliest == 1:
                return _EMPTY
            if version < 0:
                raise NotFoundError(
                    f"there is no catalog version {version}; versions start at 0",
                    code=ErrorCode.VERSION_NOT_FOUND,
                )
            raise VersionCompactedError(version, window.earliest)
        if index >= len(window.versions):
            raise NotFoundError(
                f"catalog version {version} is not applied on {self.node_name} "
                f"(latest is {self.latest_version})",
                code=ErrorCode.VERSION_NOT_FOUND,
            )
        return window.versions[index]

    def active_catalog_version(self, ts: int) -> int:
        """Return the version active at hybrid timestamp ``ts`` among those applied here.

        Only exact after ``wait_for_metadata_completeness(ts)``.

        Before version 1 activates, version 0 (the empty catalog) is active.

        Raises:
            VersionCompactedError: ``ts`` is before the earliest retained version's activation.
            NotFoundError: VERSION_NOT_FOUND when no version is applied here yet, or ``ts``
                is negative.
        """
        window = self._window
        index = bisect.bisect_right(window.activations, ts) - 1
        if index < 0:
            if window.earliest > 1:
                raise VersionCompactedError(window.earliest - 1, window.earliest)
            if window.versions and ts >= 0:
                return 0
            raise NotFoundError(
                f"no catalog version is active at {describe_ts(ts)}",
                code=ErrorCode.VERSION_NOT_FOUND,
            )
        return window.earliest + index

    def active_catalog(self, ts: int) -> Catalog:
        """Return the catalog active at hybrid timestamp ``ts`` (see ``active_catalog_version``)."""
        # The hot path of every read "as of T", so it reads the window itself: ``_publish``
        # appends a version before its activation, so an activation found has its catalog.
        window = self._window
        index = bisect.bisect_right(window.activations, ts) - 1
        if index >= 0:
            return window.versions[index]
        return self.catalog(self.active_catalog_version(ts))  # raises why there is none

    def digest(self, version: int) -> str:
        """Return the digest of catalog ``version`` (equal on every node that applied it)."""
        return self.catalog(version).digest()

    def request_outcome(self, version: int, request_id: str) -> RequestOutcome | None:
        """Return what version ``version`` recorded for ``request_id``, if it is retained."""
        payload = self._window.updates.get(version)
        update = decode_update(payload) if payload is not None else None
        for outcome in update.requests if update is not None else ():
            if outcome.request_id == request_id:
                return outcome
        return None

    def retains_update(self, version: int) -> bool:
        """Return whether the update that produced ``version`` is retained here."""
        return version in self._window.updates

    def update(self, version: int) -> VersionedUpdate:
        """Return the update that produced retained version ``version``.

        Raises:
            VersionCompactedError: the version is older than the earliest retained update
                (a snapshot has no update).
            NotFoundError: VERSION_NOT_FOUND for a version not applied here (yet).
        """
        window = self._window
        found = window.updates.get(version)
        if found is not None:
            return decode_update(found)
        if version > self.latest_version:
            self.catalog(version)  # raises VERSION_NOT_FOUND
        first = min(window.updates, default=self.latest_version + 1)
        raise VersionCompactedError(version, first)

    def events(self, version: int) -> Iterator[CatalogEventParameters]:
        """Return the events of retained version ``version``, in entry order, one at a time.

        They are computed as they are taken (a replay holds one event at a time, however
        many entries the version has).

        Raises:
            VersionCompactedError: the version's update or its predecessor is not retained.
            NotFoundError: VERSION_NOT_FOUND for a version not applied here (yet).
        """
        update = self.update(version)
        before = self.catalog(version - 1) if version > 1 else Catalog()
        return update.events_from(before)

    async def catalog_ready(self, version: int) -> None:
        """Wait until ``version`` is applied here and its event listeners have finished.

        Raises:
            NodeStoppingError: the service was closed before it applied ``version``.
        """
        if self._stopped and self.applied.value < version:
            raise self._stopping()
        await self.applied.wait_for(version)

    def _stopping(self) -> NodeStoppingError:
        latest = self.applied.value
        return NodeStoppingError(self.node_name, f"it applies no catalog version after {latest}")

    # -- events ---------------------------------------------------------------------------

    def listen(self, event: CatalogEvent, listener: Listener) -> None:
        """Call ``listener`` (sync or async) for every ``event`` applied from now on."""
        self._listeners.setdefault(event, []).append(listener)

    def unlisten(self, event: CatalogEvent, listener: Listener) -> None:
        """Stop calling ``listener`` for ``event``."""
        with contextlib.suppress(ValueError):
            self._listeners.get(event, []).remove(listener)

    def subscribe(self, limit: int = 10_000, only: EventFilter | None = None) -> EventFeed:
        """Return a feed of the events of every version published from now on (see ``EventFeed``).

        With ``only``, the feed receives the events that pass it.

        Its ``first_version`` is the first version it receives; earlier ones are in
        ``events(version)`` while retained. Call ``unsubscribe`` when done.
        """
        feed = EventFeed(self.latest_version + 1, limit, only)
        self._feeds.add(feed)
        return feed

    def unsubscribe(self, feed: EventFeed) -> None:
        """Stop feeding ``feed``."""
        self._feeds.discard(feed)

    def expect(
        self, payload: bytes, before: Catalog, update: VersionedUpdate, after: Catalog
    ) -> None:
        """Remember the update this node is appending and the catalog its validation built.

        When the log then delivers exactly ``payload`` on top of exactly ``before``, the node
        publishes ``after`` instead of decoding the payload and applying its entries again: the
        same entries applied to the same catalog, so the same catalog, at half the cost.
        """
        self._expected = _Expected(payload, before, update, after)

    async def appended(self, version: int, payload: bytes) -> None:
        """Publish ``version``, which this node's append just committed, without the watch.

        The append's compare-and-set made ``version`` follow the log's ``version - 1``; when
        that is the latest version here, ``version`` is applied at once (from the catalog
        ``expect`` remembered) and the watch skips it when it arrives. Otherwise this waits for
        the watch to deliver it. Either way ``version`` is applied here when this returns.
        """
        async with self._applying:
            if self.failure is None and self.latest_version == version - 1:
                await self._apply(LogEntry(version, payload), fire=True)
        await self.catalog_ready(version)

    def _expected_catalog(self, entry: LogEntry, before: Catalog) -> Catalog | None:
        expected, self._expected = self._expected, None
        if expected is None or expected.before is not before or expected.payload != entry.payload:
            return None
        return expected.update.completed(before, expected.after)

    def _has_listeners(self, update: VersionedUpdate) -> bool:
        return any(e.event is not None and self._listeners.get(e.event) for e in update.entries)

    async def _fire(self, events: list[CatalogEventParameters]) -> None:
        for params in events:
            for listener in list(self._listeners.get(params.event, ())):
                await self._call(listener, params)

    async def _call(self, listener: Listener, params: CatalogEventParameters) -> None:
        try:
            result = listener(params)
            if inspect.isawaitable(result):
                await result
        except Exception:
            # A broken listener must not stop the node from applying the log.
            log.exception(
                "%s: listener %r failed on %s of version %d",
                self.node_name,
                listener,
                params.event,
                params.version,
            )

    # -- applying the log -----------------------------------------------------------------

    async def recover(self) -> None:
        """Load the snapshot (or version 1) and range-read the tail. Fires no events."""
        earliest = await self._log.earliest_version()
        if earliest == 0:
            return
        try:
            entries = await self._log.read(earliest)
        except LogCompactedError as e:
            entries = await self._log.read(e.earliest_version)
        with collector_paused(collect_after=True):
            for entry in entries:
                await self._apply(entry, fire=False)

    def start(self) -> None:
        """Start following the log from the latest applied version (again, after ``close``)."""
        self._stopped = False
        if self._watch_task is None:
            self._watch_task = asyncio.get_running_loop().create_task(
                self._follow(), name=f"catalog-watch-{self.node_name}"
            )

    async def _follow(self) -> None:
        backoff = 0.05
        while True:
            reloaded = False
            try:
                async with contextlib.aclosing(self._log.watch(self.latest_version + 1)) as events:
                    async for event in events:
                        self.watch_live = True
                        backoff = 0.05
                        if isinstance(event, LogEntry):
                            async with self._applying:
                                await self._apply(event, fire=True)
                        elif isinstance(event, SafeTimeAdvanced):
                            self.observed_safe_time.advance(event.safe_time)
                        elif isinstance(event, SnapshotRequired):
                            await self._reload(event.snapshot_version)
                            reloaded = True
                            break
            except StorageUnavailableError as e:
                self.watch_live = False
                log.warning("%s: watch interrupted (%s); resuming", self.node_name, e)
            except (FormatError, ValueError, CatalogError) as e:
                # A corrupted, too-new or inconsistent value: stop rather than skip or guess.
                # Readers keep the versions applied so far; readiness reports the failure.
                self.watch_live = False
                self.failure = e
                log.error("%s: cannot apply the log: %s", self.node_name, e)
                self.applied.fail_waiters(e)
                return
            except Exception:
                # Anything else came from the store client, not from the log's content: a
                # dead watch task would leave every catalog_ready waiting forever, so resume.
                self.watch_live = False
                log.exception("%s: watch failed unexpectedly; resuming", self.node_name)
            if reloaded:
                continue  # follow on from the snapshot's tail at once
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)

    async def _reload(self, snapshot_version: int) -> None:
        for entry in await self._log.read(snapshot_version):
            async with self._applying:
                await self._apply(entry, fire=True)

    async def _apply(self, entry: LogEntry, *, fire: bool) -> None:
        if entry.is_snapshot:
            await self._load_snapshot(entry)
            return
        latest = self.latest_version
        if entry.version <= latest:
            return  # already applied (a re-read after a watch resumed)
        if entry.version != latest + 1:
            raise FormatError(
                f"{self.node_name}: the log skipped from version {latest} to {entry.version}"
            )
        before = self._window.versions[-1] if self._window.versions else Catalog()
        prepared = self._expected_catalog(entry, before)
        events: list[CatalogEventParameters] | None = None
        if prepared is not None and not (fire and (self._listeners or self._feeds)):
            catalog = prepared
        else:
            update = decode_update(entry.payload)
            if update.version != entry.version:
                raise FormatError(f"log key {entry.version} holds update {update.version}")
            if fire and (self._feeds or self._has_listeners(update)):
                events = []
            catalog = update.apply_to(before, events)
        self._publish(catalog.sealed(), entry.payload)
        if events is not None:
            await self._fire(events)
            for feed in list(self._feeds):
                feed.offer(catalog.version, events)
        self.applied.advance(catalog.version)

    async def _load_snapshot(self, entry: LogEntry) -> None:
        # A million tables take seconds to load: a worker thread does it, so a node that fell
        # behind a compaction goes on answering reads of the versions it has meanwhile.
        snapshot = await asyncio.to_thread(decode_snapshot, entry.payload)
        if snapshot.version != entry.version:
            raise FormatError(f"log key {entry.version} holds snapshot {snapshot.version}")
        if self.earliest_version <= entry.version <= self.latest_version:
            self.truncate_before(entry.version)
            return
        window = _Window(earliest=snapshot.version)
        window.versions.append(snapshot)
        window.activations.append(snapshot.activation_ts)
        self._window = window
        self.applied.advance(snapshot.version)

    def _publish(self, catalog: Catalog, payload: bytes) -> None:
        window = self._window
        if not window.versions:
            window.earliest = catalog.version
        window.updates[catalog.version] = bytes(payload)
        # Append the catalog before its activation: a reader that finds the activation
        # always finds the catalog it indexes.
        window.versions.append(catalog)
        window.activations.append(catalog.activation_ts)

    def truncate_before(self, version: int) -> None:
        """Drop every retained version older than ``version`` (after a snapshot at it)."""
        window = self._window
        if version <= window.earliest or not window.versions:
            return
        cut = min(version - window.earliest, len(window.versions) - 1)
        new = _Window(earliest=window.earliest + cut)
        new.versions = window.versions[cut:]
        new.activations = window.activations[cut:]
        new.updates = {v: u for v, u in window.updates.items() if v >= new.earliest}
        self._window = new

    def store_went_back(self, error: StoreRegressedError) -> None:
        """Stop at once: the store is below what this node applied, or another cluster's.

        The watch stops (nothing more is applied on top of versions the store lost), the node
        turns unready, and latest reads, changes and data commits are refused with
        ``error`` until the node is restarted. Versions up to the store's own stay readable.
        """
        if self.regression is not None:
            return
        self.regression = error
        self.failure = error
        self.watch_live = False
        log.error("%s: %s", self.node_name, error.message)
        task, self._watch_task = self._watch_task, None
        if task is not None:
            task.cancel()
        self.applied.fail_waiters(error)
        for listener in self.went_back_listeners:
            listener(error)

    async def close(self) -> None:
        """Stop following the log. Idempotent."""
        task, self._watch_task = self._watch_task, None
        self.watch_live = False
        self._stopped = True
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        # Nothing will apply another version here: fail the waits instead of leaving them hang.
        self.applied.fail_waiters(self._stopping())

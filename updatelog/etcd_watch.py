"""The watch of ``EtcdUpdateLog``: list, then watch from the list's revision + 1, and recover.

Every watch follows one loop: read the updates from the next undelivered version at some
revision R (a range read), deliver them, then open a gRPC watch stream over the catalog's prefix
from R + 1. It must never skip or repeat a version, whatever happens to the stream:

- **The stream ends or errors** (member killed, connection dropped, stream cancelled on the
  client side): a new stream starts from the ``mod_revision`` of the last event processed + 1
  (or R + 1 when none came). It never uses a watch response's header revision, which etcd sets
  to its current revision even on a chunk of older events while a watcher catches up.
- **etcd compacted the revision** the stream needed (``compact_revision`` set): the state is
  read again from the keys, which compaction does not touch, and a new stream starts.
- **The member is lost**: a transport error marks its endpoint failed, so the next stream and
  the next read go to another member. Streams ask for a leader (``hasleader`` metadata), so a
  member cut off from the quorum cancels them instead of going quiet.
- **The stream hangs silently**: every ``relist_interval_s`` the watch reads the keys again and
  delivers what the stream did not; a stream that stayed silent while there was news is
  replaced.

Deliveries are deduplicated by version (only the next version is delivered), safe times only
ever rise, and a safe time is delivered only after every update committed at or before it.
When the next version was compacted into a snapshot, ``SnapshotRequired`` ends the watch.

pyetcd's own watch helper is not used: it drops server-side cancellations without telling the
callback, and closing it does not end the server stream. Each watch here owns one stream on
pyetcd's channel, with a thread that moves responses onto the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass
from typing import Any

import grpc  # type: ignore[import-untyped]
from pyetcd import etcdrpc
from pyetcd.etcdrpc import kv_pb2

from updatelog import envelope
from updatelog.envelope import Kind
from updatelog.errors import FormatError, StorageUnavailableError
from updatelog.etcd import EtcdUpdateLog, TransientEtcdError, describe
from updatelog.log import LogEntry, SafeTimeAdvanced, SnapshotRequired, WatchEvent

_PUT = kv_pb2.Event.PUT
_MAX_BACKOFF_S = 0.5
# Transport failures that say "this member cannot serve us now": try another one.
_ENDPOINT_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


@dataclass(frozen=True, slots=True)
class _Ended:
    """The stream is over: closed by the server, failed, or cancelled."""

    detail: str
    code: grpc.StatusCode | None


class _Stream:
    """One gRPC watch stream; a thread moves its responses onto an asyncio queue."""

    def __init__(
        self,
        log: EtcdUpdateLog,
        start_revision: int,
        sink: asyncio.Queue[tuple[int, Any]],
        generation: int,
    ) -> None:
        self._log = log
        self._start_revision = start_revision
        self._sink = sink
        self._loop = asyncio.get_running_loop()
        self.generation = generation
        self._stop = threading.Event()
        self._call: Any = None
        self.endpoint: Any = None
        self.client: Any = None

    def open(self, client: Any) -> _Stream:
        """Start the stream on the client's current endpoint (runs in a worker thread)."""
        start, end = self._log.keys.all_range
        create = etcdrpc.WatchCreateRequest(
            key=start.encode(),
            range_end=end.encode(),
            start_revision=self._start_revision,
        )
        request = etcdrpc.WatchRequest(create_request=create)
        channel = client.channel  # picks a member that has not failed recently
        self.client, self.endpoint = client, client.endpoint_in_use
        metadata = (*(client.metadata or ()), ("hasleader", "true"))
        stub = etcdrpc.WatchStub(channel)
        self._call = stub.Watch(
            self._requests(request), credentials=client.call_credentials, metadata=metadata
        )
        threading.Thread(
            target=self._pump, name=f"etcd-watch-{self.generation}", daemon=True
        ).start()
        return self

    def _requests(self, create: Any) -> Iterator[Any]:
        yield create
        # Keep the request side open: etcd ends nothing when it closes, and we cancel instead.
        self._stop.wait()

    def _pump(self) -> None:
        try:
            for response in self._call:
                self._post(response)
            self._post(_Ended("the server closed the watch stream", None))
        except grpc.RpcError as e:
            code = e.code() if isinstance(e, grpc.Call) else None
            self._post(_Ended(describe(e), code))
        finally:
            self._stop.set()

    def _post(self, item: Any) -> None:
        # A closed loop means the watch is gone; nobody is left to tell.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._sink.put_nowait, (self.generation, item))

    def cancel(self) -> None:
        """End the stream from the client side. Safe from any thread; idempotent."""
        self._stop.set()
        if self._call is not None:
            self._call.cancel()

    def fail_endpoint(self) -> None:
        """Mark this stream's member as failed so that the client moves to another one."""
        if self.endpoint is not None and self.client is not None:
            with contextlib.suppress(Exception):
                if self.client.endpoint_in_use is self.endpoint:
                    self.endpoint.fail()


class _Restart(Exception):
    """Internal: leave the stream loop; ``relist`` says whether to read the keys first."""

    def __init__(self, relist: bool) -> None:
        super().__init__()
        self.relist = relist


class _Watch:
    """The state of one watch: what was delivered, and up to which revision it is known."""

    def __init__(self, log: EtcdUpdateLog, from_version: int) -> None:
        self.log = log
        self.keys = log.keys
        self.next_version = from_version
        self.sent_safe_time = 0
        self.revision = 0  # every change at or before it has been processed
        self.snapshot_required: int | None = None

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

    def from_events(self, events: Any) -> tuple[list[WatchEvent], bool]:
        """Return the deliveries from one response, and whether a relist is needed."""
        out: list[WatchEvent] = []
        safe = 0
        for event in events:
            kv = event.kv
            if event.type == _PUT:
                key = bytes(kv.key).decode("utf-8", "replace")
                if key.startswith(self.keys.update_prefix):
                    version = self.keys.version_of_update(key)
                    if version > self.next_version:
                        # Something between was missed; the keys know what.
                        return out, True
                    if version == self.next_version:
                        env = envelope.decode_as(bytes(kv.value), Kind.UPDATE, Kind.SNAPSHOT)
                        out.append(LogEntry(version, env.body, env.kind is Kind.SNAPSHOT))
                        self.next_version += 1
                elif key == self.keys.snapshot_version:
                    snapshot = envelope.decode_int(bytes(kv.value), Kind.VERSION)
                    if snapshot > self.next_version:
                        self.snapshot_required = snapshot
                        out.append(SnapshotRequired(snapshot))
                        return out, False
                elif key == self.keys.safe_time:
                    safe = max(safe, envelope.decode_int(bytes(kv.value), Kind.SAFE_TIME))
            self.revision = max(self.revision, int(kv.mod_revision))
        # etcd never splits one revision across responses, so every update committed with
        # (or before) this safe time has been delivered above.
        out.extend(self.safe_time(safe))
        return out, False


async def watch_log(log: EtcdUpdateLog, from_version: int) -> AsyncGenerator[WatchEvent, None]:
    """Yield ``log``'s versions from ``from_version`` on, then live ones; see module doc.

    Args:
        log: the etcd log to watch.
        from_version: the first version to deliver, at least 1.

    Yields:
        ``LogEntry`` per version, ``SafeTimeAdvanced`` and at most one ``SnapshotRequired``.

    Raises:
        FormatError: a stored value is corrupted; the watch never skips it.
        StorageUnavailableError: etcd stayed unreachable for longer than the log's timeout.
    """
    watch = _Watch(log, from_version)
    loop = asyncio.get_running_loop()
    sink: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
    stream: _Stream | None = None
    generation = 0
    relist = True
    delay = 0.02
    try:
        while not log.is_closed():
            if relist:
                try:
                    listing = await log.list_updates(watch.next_version)
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
            generation += 1
            try:
                stream = await log.once(_Stream(log, watch.revision + 1, sink, generation).open)
            except TransientEtcdError:
                # No member to open it on; a listing fails over or says etcd is down.
                relist = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, _MAX_BACKOFF_S)
                continue
            except StorageUnavailableError:
                if log.is_closed():
                    return
                raise
            if not log.register_stream(stream):
                return  # the log was closed while the stream opened
            try:
                async with contextlib.aclosing(_follow(watch, stream, sink, loop)) as events:
                    async for event in events:
                        yield event
                        delay = 0.02
                return  # _follow ends only after SnapshotRequired or on close
            except _Restart as restart:
                relist = restart.relist
            finally:
                stream.cancel()
                log.unregister_stream(stream)
                stream = None
            if not relist:
                await asyncio.sleep(delay)
                delay = min(delay * 2, _MAX_BACKOFF_S)
    finally:
        if stream is not None:
            stream.cancel()
            log.unregister_stream(stream)


async def _follow(
    watch: _Watch,
    stream: _Stream,
    sink: asyncio.Queue[tuple[int, Any]],
    loop: asyncio.AbstractEventLoop,
) -> AsyncGenerator[WatchEvent, None]:
    """Deliver what ``stream`` brings, with periodic relists; raise ``_Restart`` to renew it."""
    log = watch.log
    last_relist = loop.time()
    heard = False  # whether the stream said anything since the last relist
    while not log.is_closed():
        wait = log.relist_interval_s - (loop.time() - last_relist)
        try:
            # Not ``asyncio.wait_for``: on Python 3.11 it swallows a cancellation that arrives
            # together with an item (the watch of a closing node then never ends).
            async with asyncio.timeout(max(wait, 0.0)):
                generation, item = await sink.get()
        except TimeoutError:
            news = False
            try:
                listing = await log.list_updates(watch.next_version)
            except StorageUnavailableError:
                if log.is_closed():
                    return
                raise
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
                raise _Restart(relist=listing.more) from None
            last_relist, heard = loop.time(), False
            continue
        if generation != stream.generation:
            continue  # a leftover of a stream that was replaced
        if isinstance(item, _Ended):
            if log.is_closed():
                return
            if item.code in _ENDPOINT_CODES:
                stream.fail_endpoint()
            raise _Restart(relist=False)
        heard = True
        if item.compact_revision:
            # The revisions the stream needed are gone; the keys still hold every version.
            raise _Restart(relist=True)
        if item.canceled:
            stream.fail_endpoint()  # e.g. "no leader" on a member cut off from the quorum
            raise _Restart(relist=False)
        events, gap = watch.from_events(item.events)
        for event in events:
            yield event
        if watch.snapshot_required is not None:
            return
        if gap:
            raise _Restart(relist=True)

"""``EtcdKvStore``: the key-value seam on etcd. Only it and its members module import the client.

Calls go over gRPC's asyncio API (the ``etcdrpc`` stubs of ``etcd-sdk-python``) on the event
loop, with no thread per call; ``updatelog.kv_etcd_members`` keeps the channels, the current
member and the auth token. Transactions are built here, so that their range reads keep
``limit`` and ``more``.

etcd's value comparison is false on a missing key, so "absent or less than" is sent as one of
two compares (``create_revision == 0`` or ``value < x``) guessed from the last answer, and sent
again with the other when the guess was wrong.

Failures: every operation is bounded by ``timeout_s``; each RPC gets a third of it. Reads retry,
moving to the next member after a transport failure. A write is sent once: a lost answer raises
``UnknownOutcomeError`` and the log reads back. Over ``--max-request-bytes`` is
``UpdateTooLargeError``: refused before it is proposed, nothing written. A full backend is
``StoreQuotaExceededError``, but etcd applies the write that crosses its quota and answers
"full" all the same, so a writer that must know reads back (the log's append does).

A watch owns one gRPC stream (a task moves its responses onto a queue), restarts it from the
last revision reported + 1 when it ends, and reports ``WatchCompacted`` when etcd compacted the
revision it needs. Streams ask for a leader (``hasleader``), so a member cut off from the quorum
cancels them instead of going quiet.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc  # type: ignore[import-untyped]
from pyetcd import etcdrpc
from pyetcd.etcdrpc import kv_pb2

from updatelog.backoff import Backoff
from updatelog.errors import (
    StorageUnavailableError,
    StoreQuotaExceededError,
    UnknownOutcomeError,
    UpdateTooLargeError,
)
from updatelog.etcd_credentials import ANONYMOUS, EtcdCredentials
from updatelog.kv import (
    Compare,
    CompareOp,
    Delete,
    Get,
    KeyValue,
    LeaseExpiredError,
    Op,
    Put,
    Read,
    TxnResult,
    WatchChanges,
    WatchCompacted,
    WatchItem,
)
from updatelog.kv_etcd_members import EtcdMembers, Member, Metadata

T = TypeVar("T")

DEFAULT_MAX_REQUEST_BYTES = 1536 * 1024
"""etcd's own default ``--max-request-bytes`` (1.5 MiB)."""

# Codes after which another attempt (possibly on another member) can succeed. UNKNOWN and
# INTERNAL cover etcd's "leader changed" style errors; OUT_OF_RANGE is a read at a revision
# compacted in the meantime. RESOURCE_EXHAUSTED is transient unless it says the request is too
# large or the backend full (see ``_refusal``).
_CODE = grpc.StatusCode
_TRANSIENT_CODES = frozenset(
    {_CODE.UNAVAILABLE, _CODE.DEADLINE_EXCEEDED, _CODE.INTERNAL, _CODE.UNKNOWN, _CODE.ABORTED}
    | {_CODE.RESOURCE_EXHAUSTED, _CODE.OUT_OF_RANGE, _CODE.CANCELLED}
)
# Transport failures that say "this member cannot serve us now": try another one.
_ENDPOINT_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
_MAX_BACKOFF_S = 0.25
_OPS = {op: getattr(etcdrpc.Compare, op.name) for op in CompareOp}

Attempt = Callable[[Member, Metadata], Awaitable[T]]


class TransientEtcdError(Exception):
    """One attempt failed in a way another attempt may not; never leaves this module."""

    @property
    def detail(self) -> str:
        """What went wrong, for error messages."""
        return str(self.args[0])


def describe(exc: BaseException) -> str:
    """Return the gRPC status behind an exception, for error messages."""
    for candidate in (exc, exc.__cause__, exc.__context__):
        if isinstance(candidate, grpc.aio.AioRpcError):
            return f"{candidate.code().name}: {candidate.details()}"
    return f"{type(exc).__name__}: {exc}".rstrip(": ")


def _refusal(details: str) -> Exception | None:
    """Return the definite refusal a gRPC status's details mean, or None."""
    if any(s in details for s in ("request is too large", "larger than max", "too many op")):
        return UpdateTooLargeError(f"etcd refused the request as too large ({details})")
    if "database space exceeded" in details:
        return StoreQuotaExceededError(
            f"etcd is full ({details}); compact the log (a snapshot) and defragment etcd, or "
            "raise its --quota-backend-bytes"
        )
    return None


class EtcdKvStore:
    """The ``KvStore`` on etcd (see the module doc).

    Args:
        endpoints: ``(host, port)`` of every member to use; calls fail over between them.
        credentials: TLS files and the etcd user, if any.
        timeout_s: bound of every operation, retries included.
        max_request_bytes: the members' ``--max-request-bytes``.
    """

    def __init__(
        self,
        endpoints: Sequence[tuple[str, int]],
        *,
        credentials: EtcdCredentials = ANONYMOUS,
        timeout_s: float = 5.0,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ) -> None:
        if not endpoints:
            raise ValueError("give one etcd endpoint or more")
        if timeout_s <= 0 or max_request_bytes <= 0:
            raise ValueError("timeout_s and max_request_bytes must be positive")
        self.endpoints = [(host, int(port)) for host, port in endpoints]
        self.timeout_s = timeout_s
        self.max_request_bytes = max_request_bytes
        self._rpc_timeout_s = max(timeout_s / 3, 0.05)
        self._members = EtcdMembers(
            self.endpoints,
            tls=credentials.tls,
            auth=credentials.auth,
            # A failed member is skipped only briefly: a restarted one must be used again soon.
            retry_s=min(1.0, timeout_s),
            rpc_timeout_s=self._rpc_timeout_s,
        )
        self._closed = False
        self._streams: set[_Stream] = set()
        self._absent: dict[str, bool] = {}  # guessed presence of "or absent" compare keys

    def __repr__(self) -> str:
        return f"EtcdKvStore({','.join(f'{h}:{p}' for h, p in self.endpoints)!r})"

    def __str__(self) -> str:
        return f"etcd at {','.join(f'{h}:{p}' for h, p in self.endpoints)}"

    def endpoint_in_use(self) -> str:
        """Return ``host:port`` of the member calls go to now."""
        return self._members.current().target

    async def _once(self, attempt: Attempt[T]) -> T:
        """Run ``attempt`` once on the current member, classifying failures."""
        if self._closed:
            raise StorageUnavailableError(f"{self} is closed")
        member = None
        try:
            member, metadata = await self._members.connect()
            return await attempt(member, metadata)
        except grpc.aio.AioRpcError as e:
            raise self._classified(e, member) from e

    def _classified(self, e: grpc.aio.AioRpcError, member: Member | None) -> Exception:
        code, details = e.code(), str(e.details())
        refusal = _refusal(details)
        if refusal is not None:
            return refusal
        if code == grpc.StatusCode.NOT_FOUND and "lease not found" in details:
            return LeaseExpiredError(f"{self}: {details}")
        if code in _ENDPOINT_CODES and member is not None:
            self._members.fail(member)
        if code == grpc.StatusCode.UNAUTHENTICATED:
            self._members.forget_token()  # tokens expire: authenticate again
            return TransientEtcdError(describe(e))
        if code in _TRANSIENT_CODES:
            return TransientEtcdError(describe(e))
        return StorageUnavailableError(f"{self}: etcd refused the request: {describe(e)}")

    def _unary(self, service: str, method: str, request: Any) -> Attempt[Any]:
        """Return an attempt that sends ``<service>.<method>(request)``."""

        def attempt(member: Member, metadata: Metadata) -> Awaitable[Any]:
            call = getattr(member.stub(service), method)
            return call(request, timeout=self._rpc_timeout_s, metadata=metadata)  # type: ignore[no-any-return]

        return attempt

    async def _call(self, what: str, attempt: Attempt[T]) -> T:
        """Run an idempotent ``attempt``, retrying transient failures until the timeout."""
        backoff = Backoff(self.timeout_s, cap_s=_MAX_BACKOFF_S)
        while True:
            try:
                return await self._once(attempt)
            except TransientEtcdError as e:
                if backoff.exhausted():
                    raise StorageUnavailableError(
                        f"{self}: {what} got no answer from etcd within {self.timeout_s:g}s "
                        f"({e.detail})"
                    ) from e
            await backoff.pause()

    async def txn(
        self, compares: Sequence[Compare], success: Sequence[Op], failure: Sequence[Op] = ()
    ) -> TxnResult:
        """Run one etcd transaction (see the module doc for outcomes and "or absent")."""
        guessed = [c.key for c in compares if c.or_absent]
        if guessed and any(not isinstance(op, Get) for op in failure):
            raise ValueError("an 'or absent' compare needs a failure branch of reads only")
        writes = any(not isinstance(op, Get) for op in success)
        # Each resend follows a wrong guess; keys change presence rarely (the log's only go
        # from absent to present), so a few rounds always settle.
        for _ in range(8):
            absent = {key: self._absent.get(key, False) for key in guessed}
            request = etcdrpc.TxnRequest(
                compare=[_compare(c, absent.get(c.key, False)) for c in compares],
                success=[_request_op(op) for op in success],
                failure=[_request_op(op) for op in (*failure, *(Get(k) for k in guessed))],
            )
            send = self._unary("KV", "Txn", request)
            try:
                response = await (self._once(send) if writes else self._call("read", send))
            except StoreQuotaExceededError:
                if writes or compares or failure:
                    raise
                # A full etcd refuses every Txn, reads too: read at one revision instead.
                at_one = functools.partial(self._reads_at_one_revision, success)
                return await self._call("read", at_one)
            except TransientEtcdError as e:
                raise UnknownOutcomeError(
                    f"{self}: a write got no answer from etcd ({e.detail}); it may have committed"
                ) from e
            ranges = [r.response_range for r in response.responses if r.HasField("response_range")]
            reads = [_read_of_range(r) for r in ranges]
            if response.succeeded:  # the guessed keys it wrote are present now
                self._absent.update(
                    (k, False) for k in absent if any(_puts(op, k) for op in success)
                )
            if response.succeeded or not guessed:
                return TxnResult(bool(response.succeeded), int(response.header.revision), reads)
            found = reads[len(reads) - len(guessed) :]
            actual = {key: not read.kvs for key, read in zip(guessed, found, strict=True)}
            self._absent.update(actual)
            if actual == absent:
                return TxnResult(False, int(response.header.revision), reads[: -len(guessed)])
        raise StorageUnavailableError(f"{self}: keys kept appearing and vanishing")

    async def range(self, start: str, end: str, *, limit: int = 0) -> Read:
        """Read the keys of ``[start, end)`` in order, at most ``limit`` (0: all)."""
        request = etcdrpc.RangeRequest(key=start.encode(), range_end=end.encode(), limit=limit)
        response = await self._call("range read", self._unary("KV", "Range", request))
        return _read_of_range(response)

    async def keys(self, start: str, end: str, *, limit: int = 0) -> list[str]:
        """Return the keys of ``[start, end)`` in order, at most ``limit`` (0: all), no values."""
        request = etcdrpc.RangeRequest(
            key=start.encode(), range_end=end.encode(), keys_only=True, limit=limit
        )
        response = await self._call("key listing", self._unary("KV", "Range", request))
        return [bytes(kv.key).decode("utf-8", "replace") for kv in response.kvs]

    async def watch(self, start: str, end: str, from_revision: int) -> AsyncIterator[WatchItem]:
        """Yield the changes of ``[start, end)`` from ``from_revision`` on (see the module doc).

        Raises:
            StorageUnavailableError: no member would open a stream within ``timeout_s``.
        """
        sink: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
        generation, next_revision = 0, from_revision
        backoff = Backoff(self.timeout_s, cap_s=2 * _MAX_BACKOFF_S)
        while not self._closed:
            generation += 1
            stream = _Stream(start, end, next_revision, sink, generation, self._members)
            try:
                await self._once(stream.open)
            except TransientEtcdError as e:
                if backoff.exhausted():
                    raise StorageUnavailableError(
                        f"{self}: no etcd member would open a watch ({e.detail})"
                    ) from e
                await backoff.pause()
                continue
            except StorageUnavailableError:
                return  # closed meanwhile
            self._streams.add(stream)
            if self.is_closed():
                stream.cancel()
            try:
                while True:
                    got, item = await sink.get()
                    if got != generation:
                        continue  # a leftover of a stream that was replaced
                    if isinstance(item, _Ended):
                        if item.code in _ENDPOINT_CODES:
                            stream.fail_endpoint()
                        break
                    if item.compact_revision:
                        yield WatchCompacted(int(item.compact_revision))
                        return
                    if item.canceled:
                        stream.fail_endpoint()  # e.g. "no leader" on a member cut off
                        break
                    changes = [_change(event) for event in item.events]
                    if changes:
                        next_revision = max(r for _, _, r in changes) + 1
                        yield WatchChanges(changes, next_revision - 1)
                    backoff = Backoff(self.timeout_s, cap_s=2 * _MAX_BACKOFF_S)
            finally:
                stream.cancel()
                self._streams.discard(stream)
            if not self._closed:
                await backoff.pause()

    async def grant_lease(self, ttl_s: int) -> int:
        """Grant a lease of ``ttl_s`` seconds (etcd raises it to its minimum) and return its id."""
        request = etcdrpc.LeaseGrantRequest(TTL=ttl_s)
        return int(
            (await self._call("lease grant", self._unary("Lease", "LeaseGrant", request))).ID
        )

    async def keep_alive(self, lease: int) -> bool:
        """Send ``lease`` one keep-alive; False when etcd no longer has it."""

        async def attempt(member: Member, metadata: Metadata) -> bool:
            # One request, one answer: the stream is cancelled after the first.
            call = member.stub("Lease").LeaseKeepAlive(
                [etcdrpc.LeaseKeepAliveRequest(ID=lease)],
                timeout=self._rpc_timeout_s,
                metadata=metadata,
            )
            try:
                async for response in call:
                    return int(response.TTL) > 0
                return False
            finally:
                call.cancel()

        return await self._call("lease keep-alive", attempt)

    async def compact(self, revision: int) -> None:
        """Compact etcd's history before ``revision`` (one compacted already is fine)."""

        async def attempt(member: Member, metadata: Metadata) -> None:
            request = etcdrpc.CompactionRequest(revision=revision)
            try:
                await member.stub("KV").Compact(
                    request, timeout=self._rpc_timeout_s, metadata=metadata
                )
            except grpc.aio.AioRpcError as e:
                if "compacted" not in str(e.details()):
                    raise

        await self._call("compaction", attempt)

    def is_closed(self) -> bool:
        """Return whether ``close`` was called."""
        return self._closed

    def interrupt_watch_streams(self) -> int:
        """Cancel every watch stream as a dropped connection would (they resume); say how many."""
        streams = list(self._streams)
        for stream in streams:
            stream.cancel()
        return len(streams)

    async def close(self) -> None:
        """Cancel every watch and close the channels. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.interrupt_watch_streams()  # closed: they end instead of resuming
        await self._members.close()

    async def _reads_at_one_revision(
        self, gets: Sequence[Op], member: Member, metadata: Metadata
    ) -> TxnResult:
        """Read every ``Get`` with plain ranges: the first fixes the revision the others read at."""
        reads: list[Read] = []
        revision = 0
        for op in gets:
            request = _request_op(op).request_range
            request.revision = revision
            response = await self._unary("KV", "Range", request)(member, metadata)
            revision = revision or int(response.header.revision)
            reads.append(_read_of_range(response))
        return TxnResult(True, revision, reads)


def _puts(op: Op, key: str) -> bool:
    return isinstance(op, Put) and op.key == key


def _compare(compare: Compare, absent: bool) -> Any:
    key = compare.key.encode()
    if compare.value is None or (compare.or_absent and absent):
        return etcdrpc.Compare(
            key=key, result=etcdrpc.Compare.EQUAL, target=etcdrpc.Compare.CREATE, create_revision=0
        )
    return etcdrpc.Compare(
        key=key, result=_OPS[compare.op], target=etcdrpc.Compare.VALUE, value=compare.value
    )


def _request_op(op: Op) -> Any:
    if isinstance(op, Put):
        put = etcdrpc.PutRequest(key=op.key.encode(), value=op.value, lease=op.lease)
        return etcdrpc.RequestOp(request_put=put)
    if isinstance(op, Delete):
        delete = etcdrpc.DeleteRangeRequest(key=op.key.encode())
        if op.end is not None:
            delete.range_end = op.end.encode()
        return etcdrpc.RequestOp(request_delete_range=delete)
    get = etcdrpc.RangeRequest(key=op.key.encode(), limit=op.limit)
    if op.end is not None:
        get.range_end = op.end.encode()
    return etcdrpc.RequestOp(request_range=get)


def _read_of_range(response: Any) -> Read:
    kvs = [
        KeyValue(bytes(kv.key).decode("utf-8", "replace"), bytes(kv.value), int(kv.mod_revision))
        for kv in response.kvs
    ]
    return Read(kvs, bool(response.more))


def _change(event: Any) -> tuple[str, bytes | None, int]:
    kv = event.kv
    value = bytes(kv.value) if event.type == kv_pb2.Event.PUT else None
    return bytes(kv.key).decode("utf-8", "replace"), value, int(kv.mod_revision)


@dataclass(frozen=True, slots=True)
class _Ended:
    """The stream is over: closed by the server, failed, or cancelled."""

    code: Any


class _Stream:
    """One gRPC watch stream; a task moves its responses onto an asyncio queue."""

    def __init__(
        self,
        start: str,
        end: str,
        start_revision: int,
        sink: asyncio.Queue[tuple[int, Any]],
        generation: int,
        members: EtcdMembers,
    ) -> None:
        create = etcdrpc.WatchCreateRequest(
            key=start.encode(), range_end=end.encode(), start_revision=start_revision
        )
        self._request = etcdrpc.WatchRequest(create_request=create)
        self._sink = sink
        self.generation = generation
        self._members = members
        self._member: Member | None = None
        self._stop = asyncio.Event()
        self._call: Any = None
        self._pump_task: asyncio.Task[None] | None = None

    async def open(self, member: Member, metadata: Metadata) -> None:
        """Start the stream on ``member``."""
        self._member = member
        self._call = member.stub("Watch").Watch(
            self._requests(), metadata=(*metadata, ("hasleader", "true"))
        )
        self._pump_task = asyncio.create_task(self._pump(), name=f"etcd-watch-{self.generation}")

    async def _requests(self) -> AsyncIterator[Any]:
        yield self._request
        # Keep the request side open: etcd ends nothing when it closes, and we cancel instead.
        await self._stop.wait()

    async def _pump(self) -> None:
        try:
            async for response in self._call:
                self._post(response)
            self._post(_Ended(None))
        except grpc.aio.AioRpcError as e:
            self._post(_Ended(e.code()))
        except asyncio.CancelledError:
            self._post(_Ended(grpc.StatusCode.CANCELLED))
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this task was cancelled, not only the call
        finally:
            self._stop.set()

    def _post(self, item: Any) -> None:
        self._sink.put_nowait((self.generation, item))

    def cancel(self) -> None:
        """End the stream from the client side. Idempotent."""
        self._stop.set()
        if self._call is not None:
            self._call.cancel()

    def fail_endpoint(self) -> None:
        """Mark this stream's member as failed so that calls move to another one."""
        if self._member is not None and self._members.current() is self._member:
            self._members.fail(self._member)

"""``EtcdKvStore``: the key-value seam on etcd. The only module that imports the etcd client.

The client (``pyetcd``, of ``etcd-sdk-python``) is synchronous gRPC: every call runs in a worker
thread. Transactions are built here, so that their range reads keep ``limit`` and ``more``.

etcd's value comparison is false on a missing key, so "absent or less than" is sent as one of
two compares (``create_revision == 0`` or ``value < x``) guessed from the last answer, and sent
again with the other when the guess was wrong.

Failures: every operation is bounded by ``timeout_s``; each RPC gets a third of it. Reads retry
on the next member. A write is sent once: a lost answer raises ``UnknownOutcomeError`` and the
log reads back. A request etcd refuses outright is definite and wrote nothing: over
``--max-request-bytes`` is ``UpdateTooLargeError``, a full backend ``StoreQuotaExceededError``.

A watch owns one gRPC stream (a thread moves its responses onto the event loop), restarts it
from the last revision reported + 1 when it ends, and reports ``WatchCompacted`` when etcd
compacted the revision it needs. Streams ask for a leader (``hasleader``), so a member cut off
from the quorum cancels them instead of going quiet.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc  # type: ignore[import-untyped]
import pyetcd
import pyetcd.exceptions
from pyetcd import etcdrpc
from pyetcd.etcdrpc import kv_pb2

from updatelog.backoff import Backoff
from updatelog.errors import (
    StorageUnavailableError,
    StoreQuotaExceededError,
    UnknownOutcomeError,
    UpdateTooLargeError,
)
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
_TRANSIENT_CLIENT_ERRORS = (
    pyetcd.exceptions.ConnectionFailedError,
    pyetcd.exceptions.ConnectionTimeoutError,
    pyetcd.exceptions.InternalServerError,
    pyetcd.exceptions.NoServerAvailableError,
)
# Transport failures that say "this member cannot serve us now": try another one.
_ENDPOINT_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
_MAX_BACKOFF_S = 0.25
_GRPC_OPTIONS = [
    # Long range reads exceed gRPC's 4 MiB default; etcd bounds requests itself.
    ("grpc.max_receive_message_length", 512 * 1024 * 1024),
    ("grpc.max_send_message_length", 512 * 1024 * 1024),
    # A member that vanishes without a TCP reset is noticed by keepalive; etcd refuses pings
    # more often than every 5 s, and on idle connections (so only a watch stream pings).
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
]
_OPS = {op: getattr(etcdrpc.Compare, op.name) for op in CompareOp}


class TransientEtcdError(Exception):
    """One attempt failed in a way another attempt may not; never leaves this module."""

    @property
    def detail(self) -> str:
        """What went wrong, for error messages."""
        return str(self.args[0])


def describe(exc: BaseException) -> str:
    """Return the gRPC status behind a client exception, for error messages."""
    for candidate in (exc, exc.__cause__, exc.__context__):
        if isinstance(candidate, grpc.Call):
            return f"{candidate.code().name}: {candidate.details()}"
    if isinstance(exc, pyetcd.exceptions.NoServerAvailableError):
        return "every endpoint failed moments ago"
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
        ca: CA bundle that verifies the servers (turns TLS on).
        cert: client certificate, for TLS client authentication (with ``key``).
        key: the client certificate's private key.
        user: etcd user name (with ``password``).
        password: that user's password.
        timeout_s: bound of every operation, retries included.
        max_request_bytes: the members' ``--max-request-bytes``.
    """

    def __init__(
        self,
        endpoints: Sequence[tuple[str, int]],
        *,
        ca: str | None = None,
        cert: str | None = None,
        key: str | None = None,
        user: str | None = None,
        password: str | None = None,
        timeout_s: float = 5.0,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ) -> None:
        if not endpoints or (cert is None) != (key is None) or (user is None) != (password is None):
            raise ValueError("give one endpoint or more, cert with key, user with password")
        if timeout_s <= 0 or max_request_bytes <= 0:
            raise ValueError("timeout_s and max_request_bytes must be positive")
        self.endpoints = [(host, int(port)) for host, port in endpoints]
        self.timeout_s = timeout_s
        self.max_request_bytes = max_request_bytes
        self._rpc_timeout_s = max(timeout_s / 3, 0.05)
        self._tls = (ca, cert, key) if ca is not None or cert is not None else None
        self._auth = (user, password) if user is not None and password is not None else None
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._closed = False
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=16, thread_name_prefix="etcd-kv"
        )
        self._streams: set[_Stream] = set()
        self._absent: dict[str, bool] = {}  # guessed presence of "or absent" compare keys

    def __repr__(self) -> str:
        return f"EtcdKvStore({','.join(f'{h}:{p}' for h, p in self.endpoints)!r})"

    def _connect(self) -> Any:
        creds = None
        if self._tls is not None:
            ca, cert, key = self._tls
            creds = grpc.ssl_channel_credentials(
                root_certificates=_read(ca), private_key=_read(key), certificate_chain=_read(cert)
            )
        eps = [
            pyetcd.Endpoint(
                f"[{host}]" if ":" in host else host,
                port,
                secure=creds is not None,
                creds=creds,
                # A failed member is skipped only briefly: with every member marked failed the
                # client refuses to try any, and a restarted member must be used again soon.
                time_retry=min(1.0, self.timeout_s),
                opts=_GRPC_OPTIONS,
            )
            for host, port in self.endpoints
        ]
        user, password = self._auth if self._auth is not None else (None, None)
        try:
            client = pyetcd.MultiEndpointEtcd3Client(
                endpoints=eps,
                timeout=self._rpc_timeout_s,
                user=user,
                password=password,
                failover=True,
            )
        except BaseException:
            for ep in eps:
                ep.close()
            raise
        if creds is None:
            # gRPC refuses call credentials on a plain-text channel; the auth token still
            # travels, as the "token" metadata pyetcd adds to every call.
            client.call_credentials = None
        return client

    def client(self) -> Any:
        """Return the etcd client, connecting (and authenticating) first if needed."""
        with self._client_lock:
            if self._closed:
                raise StorageUnavailableError(f"{self!r} is closed")
            self._client = self._client or self._connect()
            return self._client

    def _drop_client(self, client: Any) -> None:
        with self._client_lock:
            self._client = None if self._client is client else self._client
        if client is not None:
            client.close()

    def _invoke(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(client)`` once in the calling thread, classifying failures."""
        client = None
        try:
            client = self.client()
            return fn(client)
        except _TRANSIENT_CLIENT_ERRORS as e:
            raise TransientEtcdError(describe(e)) from e
        except grpc.RpcError as e:
            code = e.code() if isinstance(e, grpc.Call) else None
            details = str(e.details()) if isinstance(e, grpc.Call) else ""
            refusal = _refusal(details)
            if refusal is not None:
                raise refusal from e
            if code == grpc.StatusCode.NOT_FOUND and "lease not found" in details:
                raise LeaseExpiredError(f"{self!r}: {details}") from e
            if code in _ENDPOINT_CODES and client is not None:
                with contextlib.suppress(Exception):
                    client.endpoint_in_use.fail()
                    client._clear_old_stubs()
            if code == grpc.StatusCode.UNAUTHENTICATED:
                # Auth tokens expire; a new client authenticates again.
                self._drop_client(client)
                raise TransientEtcdError(describe(e)) from e
            if code in _TRANSIENT_CODES:
                raise TransientEtcdError(describe(e)) from e
            raise StorageUnavailableError(
                f"{self!r}: etcd refused the request: {describe(e)}"
            ) from e
        except ValueError as e:
            # pyetcd's endpoint bookkeeping reports "all failed" this way without failover.
            if "failed node" in str(e):
                raise TransientEtcdError(str(e)) from e
            raise

    async def _once(self, fn: Callable[[Any], T]) -> T:
        if self._closed:
            raise StorageUnavailableError(f"{self!r} is closed")
        try:
            future = asyncio.get_running_loop().run_in_executor(self._executor, self._invoke, fn)
        except RuntimeError as e:
            # Submitting fails only once the worker threads are shut down: the store is closing.
            raise StorageUnavailableError(f"{self!r} is closed") from e
        return await future

    async def _call(self, what: str, fn: Callable[[Any], T]) -> T:
        """Run an idempotent ``fn(client)``, retrying transient failures until the timeout."""
        backoff = Backoff(self.timeout_s, cap_s=_MAX_BACKOFF_S)
        while True:
            try:
                return await self._once(fn)
            except TransientEtcdError as e:
                if backoff.exhausted():
                    raise StorageUnavailableError(
                        f"{self!r}: {what} got no answer from etcd within {self.timeout_s:g}s "
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
            send = _sender("Txn", request)
            try:
                response = await (self._once(send) if writes else self._call("read", send))
            except StoreQuotaExceededError:
                if writes or compares or failure:
                    raise
                # A full etcd refuses every Txn, reads too: read at one revision instead.
                return await self._call("read", functools.partial(_reads_at_one_revision, success))
            except TransientEtcdError as e:
                raise UnknownOutcomeError(
                    f"{self!r}: a write got no answer from etcd ({e.detail}); it may have committed"
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
        raise StorageUnavailableError(f"{self!r}: keys kept appearing and vanishing")

    async def range(self, start: str, end: str, *, limit: int = 0) -> Read:
        """Read the keys of ``[start, end)`` in order, at most ``limit`` (0: all)."""
        request = etcdrpc.RangeRequest(key=start.encode(), range_end=end.encode(), limit=limit)
        response = await self._call("range read", _sender("Range", request))
        return _read_of_range(response)

    async def keys(self, start: str, end: str) -> list[str]:
        """Return the keys of ``[start, end)`` in order, without their values."""
        request = etcdrpc.RangeRequest(key=start.encode(), range_end=end.encode(), keys_only=True)
        response = await self._call("key listing", _sender("Range", request))
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
            stream = _Stream(start, end, next_revision, sink, generation)
            try:
                await self._once(stream.open)
            except TransientEtcdError as e:
                if backoff.exhausted():
                    raise StorageUnavailableError(
                        f"{self!r}: no etcd member would open a watch ({e.detail})"
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
        return int(await self._call("lease grant", lambda client: client.lease(ttl_s).id))

    async def keep_alive(self, lease: int) -> bool:
        """Send ``lease`` one keep-alive; False when etcd no longer has it."""

        def fn(client: Any) -> bool:
            # One request, one answer: closing the generator then ends the call at once.
            with contextlib.closing(client.refresh_lease(lease)) as responses:
                first = next(responses, None)
            return first is not None and int(first.TTL) > 0

        return await self._call("lease keep-alive", fn)

    async def compact(self, revision: int) -> None:
        """Compact etcd's history before ``revision`` (one compacted already is fine)."""

        def fn(client: Any) -> None:
            try:
                client.compact(revision)
            except grpc.RpcError as e:
                if not (isinstance(e, grpc.Call) and "compacted" in str(e.details())):
                    raise

        with contextlib.suppress(pyetcd.exceptions.RevisionCompactedError):
            await self._call("compaction", fn)

    def is_closed(self) -> bool:
        """Return whether ``close`` was called (from any thread)."""
        return self._closed

    def interrupt_watch_streams(self) -> int:
        """Cancel every watch stream as a dropped connection would (they resume); say how many."""
        streams = list(self._streams)
        for stream in streams:
            stream.cancel()
        return len(streams)

    async def close(self) -> None:
        """Cancel every watch, close the connections and stop the worker threads. Idempotent."""
        if self._closed:
            return
        with self._client_lock:
            self._closed = True
            client, self._client = self._client, None
        for stream in list(self._streams):
            stream.cancel()
        if client is not None:
            await asyncio.get_running_loop().run_in_executor(self._executor, client.close)
        self._executor.shutdown(wait=False, cancel_futures=True)


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


def _sender(method: str, request: Any) -> Callable[[Any], Any]:
    """Return a call of ``KV.<method>(request)`` on the client's current member."""

    def send(client: Any) -> Any:
        return getattr(client.kvstub, method)(
            request,
            client.timeout,
            credentials=client.call_credentials,
            metadata=client.metadata,
        )

    return send


def _reads_at_one_revision(gets: Sequence[Op], client: Any) -> TxnResult:
    """Read every ``Get`` with plain ranges: the first fixes the revision the others read at."""
    reads: list[Read] = []
    revision = 0
    for op in gets:
        request = _request_op(op).request_range
        request.revision = revision
        response = _sender("Range", request)(client)
        revision = revision or int(response.header.revision)
        reads.append(_read_of_range(response))
    return TxnResult(True, revision, reads)


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
    """One gRPC watch stream; a thread moves its responses onto an asyncio queue."""

    def __init__(
        self,
        start: str,
        end: str,
        start_revision: int,
        sink: asyncio.Queue[tuple[int, Any]],
        generation: int,
    ) -> None:
        create = etcdrpc.WatchCreateRequest(
            key=start.encode(), range_end=end.encode(), start_revision=start_revision
        )
        self._request = etcdrpc.WatchRequest(create_request=create)
        self._sink = sink
        self._loop = asyncio.get_running_loop()
        self.generation = generation
        self._stop = threading.Event()
        self._call: Any = None
        self._endpoint: Any = None  # the member it runs on, with the client that chose it
        self._client: Any = None

    def open(self, client: Any) -> None:
        """Start the stream on the client's current endpoint (runs in a worker thread)."""
        channel = client.channel  # picks a member that has not failed recently
        self._client, self._endpoint = client, client.endpoint_in_use
        metadata = (*(client.metadata or ()), ("hasleader", "true"))
        self._call = etcdrpc.WatchStub(channel).Watch(
            self._requests(), credentials=client.call_credentials, metadata=metadata
        )
        name = f"etcd-watch-{self.generation}"
        threading.Thread(target=self._pump, name=name, daemon=True).start()

    def _requests(self) -> Iterator[Any]:
        yield self._request
        # Keep the request side open: etcd ends nothing when it closes, and we cancel instead.
        self._stop.wait()

    def _pump(self) -> None:
        try:
            for response in self._call:
                self._post(response)
            self._post(_Ended(None))
        except grpc.RpcError as e:
            self._post(_Ended(e.code() if isinstance(e, grpc.Call) else None))
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
        if self._endpoint is not None and self._client is not None:
            with contextlib.suppress(Exception):
                if self._client.endpoint_in_use is self._endpoint:
                    self._endpoint.fail()


def _read(path: str | None) -> bytes | None:
    try:
        return None if path is None else Path(path).read_bytes()
    except OSError as e:
        raise StorageUnavailableError(f"cannot read TLS file {path}: {e}") from e

"""``EtcdUpdateLog``: the distributed backend, one etcd transaction per log operation.

This module and ``updatelog.etcd_watch`` are the only ones that import the etcd client
(``pyetcd``, from the ``etcd-sdk-python`` distribution; the same API as ``etcd3``). The client
is synchronous gRPC, so every call runs in a worker thread and never blocks the event loop.

Values are ``updatelog.envelope`` envelopes. Integers (version, safe time) are fixed-width
big-endian inside a fixed header, so etcd's byte-wise ``Compare`` orders them numerically.
etcd's value comparison is always false on a missing key, so "absent or less than" is sent as
one of two compares (``create_revision == 0`` or ``value < x``) and a transaction that failed
only because it guessed presence wrong is sent again with the other one.

Failure handling: every operation is bounded by ``timeout_s`` in total; each RPC gets a third of
it, and failed RPCs are retried on the next endpoint with a short backoff, then
``StorageUnavailableError``. A write whose RPC failed may still have committed; ``append``
resolves that by reading back whether ``catalog.update.<N>`` holds its own bytes, and only sends
the same compare-and-set again when the update is absent, where the compare guarantees that at
most one of the two attempts commits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import grpc  # type: ignore[import-untyped]
import pyetcd
import pyetcd.exceptions

from updatelog import envelope, requests
from updatelog.envelope import Kind
from updatelog.errors import (
    SettingsMismatchError,
    StorageUnavailableError,
)
from updatelog.etcd_registry import Leases, lease_ttl
from updatelog.etcd_txn import (
    AppendTxn,
    Listing,
    check_int,
    commit_data_txn,
    decode_int,
    first_value,
    list_updates,
    raise_safe_time_txn,
    read_data_txn,
    read_range,
    record_refusal_txn,
    save_snapshot_txn,
    swap_value_txn,
)
from updatelog.keys import KeyLayout, prefix_range_end
from updatelog.log import (
    AppendResult,
    ClusterSettings,
    LogEntry,
    RequestRecord,
    SafeTimeResult,
    WatchEvent,
)

if TYPE_CHECKING:
    from updatelog.url import EtcdUrl

T = TypeVar("T")

# Codes after which another attempt (possibly on another member) can succeed. UNKNOWN and
# INTERNAL cover etcd's "leader changed" style errors; OUT_OF_RANGE is a read at a revision
# compacted in the meantime, which a fresh attempt re-reads at a new revision.
_TRANSIENT_CODES = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.CANCELLED,
    }
)
_TRANSIENT_CLIENT_ERRORS = (
    pyetcd.exceptions.ConnectionFailedError,
    pyetcd.exceptions.ConnectionTimeoutError,
    pyetcd.exceptions.InternalServerError,
    pyetcd.exceptions.NoServerAvailableError,
)
_MAX_BACKOFF_S = 0.25
_GRPC_OPTIONS = [
    # Snapshots and long range reads exceed gRPC's 4 MiB default; etcd bounds requests itself.
    ("grpc.max_receive_message_length", 512 * 1024 * 1024),
    ("grpc.max_send_message_length", 512 * 1024 * 1024),
    # A member that vanishes without a TCP reset is noticed by keepalive, not never. etcd
    # refuses pings more often than every 5 s (--grpc-keepalive-min-time) and pings on idle
    # connections, so they only run while a call (a watch stream) is open.
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
]


class TransientEtcdError(Exception):
    """One attempt failed in a way another attempt may not; never leaves this package."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def describe(exc: BaseException) -> str:
    """Return the gRPC status behind a client exception, for error messages."""
    for candidate in (exc, exc.__cause__, exc.__context__):
        if isinstance(candidate, grpc.Call):
            return f"{candidate.code().name}: {candidate.details()}"
    if isinstance(exc, pyetcd.exceptions.NoServerAvailableError):
        return "every endpoint failed moments ago"
    return f"{type(exc).__name__}: {exc}".rstrip(": ")


class EtcdUpdateLog:
    """The ``UpdateLog`` on etcd: CAS appends, range reads, snapshots, safe time and watch.

    Args:
        endpoints: ``(host, port)`` of every member to use; calls fail over between them.
        prefix: key prefix, so several catalogs can share one etcd.
        ca: CA bundle that verifies the servers (turns TLS on).
        cert: client certificate, for TLS client authentication (with ``key``).
        key: the client certificate's private key.
        user: etcd user name (with ``password``).
        password: that user's password.
        timeout_s: bound of every operation, retries included.
        relist_interval_s: how often a watch re-reads the log to catch up after a silent hang.
        watch_page: most updates a watch reads in one range request while catching up.
    """

    def __init__(
        self,
        endpoints: Sequence[tuple[str, int]],
        *,
        prefix: str = "",
        ca: str | None = None,
        cert: str | None = None,
        key: str | None = None,
        user: str | None = None,
        password: str | None = None,
        timeout_s: float = 5.0,
        relist_interval_s: float = 1.5,
        watch_page: int = 1000,
    ) -> None:
        if not endpoints:
            raise ValueError("at least one etcd endpoint is needed")
        if (cert is None) != (key is None):
            raise ValueError("cert and key must be given together")
        if (user is None) != (password is None):
            raise ValueError("user and password must be given together")
        if timeout_s <= 0 or relist_interval_s <= 0 or watch_page <= 0:
            raise ValueError("timeout_s, relist_interval_s and watch_page must be positive")
        self.keys = KeyLayout(prefix)
        self.endpoints = [(host, int(port)) for host, port in endpoints]
        self.timeout_s = timeout_s
        self.relist_interval_s = relist_interval_s
        self.watch_page = watch_page
        self._rpc_timeout_s = max(timeout_s / 3, 0.05)
        self._tls = (ca, cert, key) if ca is not None or cert is not None else None
        self._auth = (user, password) if user is not None and password is not None else None
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._closed = False
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=16, thread_name_prefix="etcd-log"
        )
        self._watch_streams: set[Any] = set()
        # Whether catalog.safe_time exists decides which compare guards it; see module doc.
        self._safe_time_absent = False
        # The registry's leases, one per TTL (in practice one per log); guarded by the lock,
        # which also keeps two registrations from granting two leases for one TTL.
        self._leases = Leases(describe=repr(self))

    @classmethod
    def from_url(cls, url: EtcdUrl) -> EtcdUpdateLog:
        """Build a log from a parsed ``etcd://`` URL; connects lazily, on the first call."""
        return cls(
            url.endpoints,
            prefix=url.prefix,
            ca=url.ca,
            cert=url.cert,
            key=url.key,
            user=url.user,
            password=url.password,
            timeout_s=url.timeout_s,
        )

    def __repr__(self) -> str:
        hosts = ",".join(f"{h}:{p}" for h, p in self.endpoints)
        return f"EtcdUpdateLog({hosts!r}, prefix={self.keys.prefix!r})"

    # -- client and calls ---------------------------------------------------------------

    def _connect(self) -> Any:
        creds = None
        if self._tls is not None:
            ca, cert, key = self._tls
            creds = grpc.ssl_channel_credentials(
                root_certificates=_read(ca),
                private_key=_read(key),
                certificate_chain=_read(cert),
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
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _drop_client(self, client: Any) -> None:
        with self._client_lock:
            if self._client is client:
                self._client = None
        if client is not None:
            client.close()

    def invoke(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(client)`` once in the calling thread, classifying failures.

        Raises:
            TransientEtcdError: another attempt may succeed.
            StorageUnavailableError: etcd refused the call for good (permissions, limits).
        """
        client = None
        try:
            client = self.client()
            return fn(client)
        except _TRANSIENT_CLIENT_ERRORS as e:
            raise TransientEtcdError(describe(e)) from e
        except grpc.RpcError as e:
            code = e.code() if isinstance(e, grpc.Call) else None
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

    async def once(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(client)`` once in a worker thread (see ``invoke``)."""
        if self._closed:
            raise StorageUnavailableError(f"{self!r} is closed")
        loop = asyncio.get_running_loop()
        try:
            future = loop.run_in_executor(self._executor, self.invoke, fn)
        except RuntimeError as e:
            # Submitting fails only once the worker threads are shut down: the log is closing
            # (possibly on another thread, before ``_closed`` is visible here).
            raise StorageUnavailableError(f"{self!r} is closed") from e
        return await future

    async def call(self, what: str, fn: Callable[[Any], T], *, deadline: float | None = None) -> T:
        """Run ``fn(client)`` in a worker thread, retrying transient failures until a deadline.

        Only for idempotent ``fn``: reads, and writes whose compare makes a repeat harmless.

        Raises:
            StorageUnavailableError: no attempt succeeded before the deadline.
        """
        loop = asyncio.get_running_loop()
        if deadline is None:
            deadline = loop.time() + self.timeout_s
        delay = 0.02
        while True:
            try:
                return await self.once(fn)
            except TransientEtcdError as e:
                if loop.time() + delay >= deadline:
                    raise self._unavailable(what, e.detail) from e
            await asyncio.sleep(delay)
            delay = min(delay * 2, _MAX_BACKOFF_S)

    def _unavailable(self, what: str, detail: str) -> StorageUnavailableError:
        return StorageUnavailableError(
            f"{self!r}: {what} got no answer from etcd within {self.timeout_s:g}s ({detail})"
        )

    # -- UpdateLog ------------------------------------------------------------------------

    async def append(
        self,
        version: int,
        payload: bytes,
        proposal_ts: int,
        request_ids: Sequence[str] = (),
    ) -> AppendResult:
        """Append ``payload`` as ``version`` in one etcd transaction.

        The transaction compares ``catalog.version == version - 1`` (or absent for version 1),
        ``catalog.safe_time < proposal_ts`` and that no request id is recorded; it then puts the
        update, the version, the safe time and the request ids. Conflicts are reported in this
        order: a recorded request id, then the version, then the safe time.

        Args:
            version: the version to write; the log must be at ``version - 1``.
            payload: the opaque update.
            proposal_ts: the writer's HLC proposal; must exceed the stored safe time.
            request_ids: idempotency keys to record with this version.

        Returns:
            Success, or the conflicting state.

        Raises:
            StorageUnavailableError: etcd did not answer within ``timeout_s``; the append may
                or may not have committed (``read`` or ``request_record`` tells).
            ValueError: an argument is out of range.
        """
        check_int("version", version, 1)
        check_int("proposal_ts", proposal_ts, 1)
        value = envelope.encode(Kind.UPDATE, payload)
        request_keys = {self.keys.request(rid): rid for rid in request_ids}
        attempt = AppendTxn(self.keys, version, value, proposal_ts, request_keys)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        ambiguous = False
        delay = 0.02
        # Each pass either ends, or follows a failed RPC (bounded by the deadline) or a
        # concurrent change of safe_time's presence (it only goes from absent to present).
        while True:
            if ambiguous:
                try:
                    state = await self.call("append", attempt.read_state, deadline=deadline)
                except StorageUnavailableError as e:
                    raise StorageUnavailableError(f"{e.message}; it may have committed") from e
                decided = attempt.outcome(state, ambiguous=True)
                if state.update is not None and decided is not None:
                    return decided
            try:
                committed, state = await self.once(attempt.txn(self._safe_time_absent))
            except TransientEtcdError as e:
                ambiguous = True
                if loop.time() + delay >= deadline:
                    raise StorageUnavailableError(
                        f"{self!r}: append of version {version} got no answer from etcd within "
                        f"{self.timeout_s:g}s ({e.detail}); it may have committed"
                    ) from e
                await asyncio.sleep(delay)
                delay = min(delay * 2, _MAX_BACKOFF_S)
                continue
            if committed:
                self._safe_time_absent = False
                return AppendResult(True, version, proposal_ts)
            result = attempt.outcome(state, ambiguous=ambiguous)
            if result is not None:
                return result
            self._safe_time_absent = state.safe_time is None

    async def read(self, from_version: int, to_version: int | None = None) -> list[LogEntry]:
        """Read versions ``from_version..to_version`` (inclusive; default: latest) in one range.

        Args:
            from_version: the first version, at least 1.
            to_version: the last version; None or beyond the latest means the latest.

        Returns:
            The entries in version order; the one at the snapshot version is the snapshot.

        Raises:
            LogCompactedError: ``from_version`` is older than the snapshot version.
            FormatError: a stored value is corrupted or of an unknown format.
            StorageUnavailableError: etcd did not answer within ``timeout_s``.
        """
        check_int("from_version", from_version, 1)
        if to_version is not None:
            check_int("to_version", to_version, 0)
            if to_version < from_version:
                return []
        return await self.call("read", read_range(self.keys, from_version, to_version))

    async def _get(self, what: str, *keys: str) -> list[bytes | None]:
        """Read ``keys`` atomically (one transaction)."""

        def fn(client: Any) -> list[bytes | None]:
            ops = [client.transactions.get(k) for k in keys]
            _, responses = client.transaction(compare=[], success=ops, failure=[])
            return [first_value(r) for r in responses]

        return await self.call(what, fn)

    async def latest_version(self) -> int:
        """Return ``catalog.version``, or 0 for an empty log."""
        (value,) = await self._get("latest_version", self.keys.version)
        return decode_int(value, Kind.VERSION)

    async def earliest_version(self) -> int:
        """Return the snapshot version, 1 when no snapshot was saved, or 0 for an empty log."""
        latest, snapshot = await self._get(
            "earliest_version", self.keys.version, self.keys.snapshot_version
        )
        return decode_int(snapshot, Kind.VERSION) or min(decode_int(latest, Kind.VERSION), 1)

    async def safe_time(self) -> int:
        """Return ``catalog.safe_time``, or 0 if never set."""
        (value,) = await self._get("safe_time", self.keys.safe_time)
        return decode_int(value, Kind.SAFE_TIME)

    async def raise_safe_time(self, ts: int) -> SafeTimeResult:
        """Raise ``catalog.safe_time`` to ``ts`` by compare-and-set; never lower it.

        Args:
            ts: the wanted safe time.

        Returns:
            The resulting safe time (``>= ts``) and the latest version.

        Raises:
            StorageUnavailableError: etcd did not answer within ``timeout_s``.
        """
        check_int("ts", ts, 0)
        # A repeat after a lost answer is harmless: the compare only ever raises the value.
        while True:
            result, absent = await self.call(
                "raise_safe_time", raise_safe_time_txn(self.keys, ts, self._safe_time_absent)
            )
            self._safe_time_absent = absent
            if result is not None:
                return result

    async def request_record(self, request_id: str) -> RequestRecord | None:
        """Return the recorded outcome of ``request_id``, or None if it is unknown."""
        (value,) = await self._get("request_record", self.keys.request(request_id))
        return None if value is None else requests.decode_record(value)

    async def record_refusal(self, request_id: str, version: int, refusal: bytes) -> AppendResult:
        """Record that ``request_id`` was refused with the log at ``version`` (see UpdateLog)."""
        check_int("version", version, 1)
        return await self.call(
            "record_refusal", record_refusal_txn(self.keys, request_id, version, refusal)
        )

    async def commit_data(
        self, table_id: int, seq: int, payload: bytes, commit_ts: int, request_id: str
    ) -> AppendResult:
        """Record data commit ``seq`` of a table under the safe-time rule (see UpdateLog)."""
        check_int("seq", seq, 1)
        check_int("commit_ts", commit_ts, 1)
        value = envelope.encode(Kind.UPDATE, payload)
        build = commit_data_txn(self.keys, table_id, seq, value, commit_ts, request_id)
        absent = self._safe_time_absent
        while True:  # at most twice: the safe time only goes from absent to present
            result, absent = await self.call("commit_data", build(absent))
            if result is not None:
                self._safe_time_absent = self._safe_time_absent and not result.committed
                return result

    async def read_data(self, table_id: int) -> list[LogEntry]:
        """Return every data commit of a table in order (see UpdateLog)."""
        return await self.call("read_data", read_data_txn(self.keys, table_id))

    async def auth_keys(self) -> bytes | None:
        """Return the stored token-signing keys, or None (see UpdateLog)."""
        (value,) = await self._get("auth_keys", self.keys.auth_keys)
        return None if value is None else envelope.decode_as(value, Kind.AUTH_KEYS).body

    async def swap_auth_keys(self, expected: bytes | None, keys: bytes) -> bool:
        """Store ``keys`` if the stored ones are still ``expected`` (see UpdateLog)."""
        return await self.call(
            "swap_auth_keys",
            swap_value_txn(
                self.keys.auth_keys,
                None if expected is None else envelope.encode(Kind.AUTH_KEYS, expected),
                envelope.encode(Kind.AUTH_KEYS, keys),
            ),
        )

    async def save_snapshot(self, version: int, payload: bytes) -> bool:
        """Overwrite ``version`` with a snapshot and delete older versions, in one transaction.

        The transaction compares ``catalog.snapshot.version < version`` (or absent) and
        ``catalog.version >= version``, then puts the snapshot version and the snapshot and
        deletes the older update keys with one range delete.

        Args:
            version: the snapshot version; must be newer than the current snapshot and not
                newer than the latest version.
            payload: the full catalog at ``version``.

        Returns:
            True if saved; False (nothing changed) if it would not move the snapshot forward or
            ``version`` is not in the log.

        Raises:
            StorageUnavailableError: etcd did not answer within ``timeout_s``.
        """
        check_int("version", version, 1)
        absent = False
        while True:
            make = functools.partial(save_snapshot_txn, self.keys, version, payload, absent)
            result, absent = await self._write("save_snapshot", make)
            if result is not None:
                return result

    async def _write(self, what: str, make: Callable[[bool], Callable[[Any], T]]) -> T:
        """Run a compare-and-set transaction, retrying failed RPCs until the deadline.

        ``make(ambiguous)`` builds the transaction; ``ambiguous`` is True once an earlier
        attempt failed without an answer, so that the transaction can recognise its own commit.

        Raises:
            StorageUnavailableError: no attempt got an answer before the deadline.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        ambiguous = False
        delay = 0.02
        while True:
            try:
                return await self.once(make(ambiguous))
            except TransientEtcdError as e:
                ambiguous = True
                if loop.time() + delay >= deadline:
                    raise StorageUnavailableError(
                        f"{self!r}: {what} got no answer from etcd within {self.timeout_s:g}s "
                        f"({e.detail}); it may have committed"
                    ) from e
            await asyncio.sleep(delay)
            delay = min(delay * 2, _MAX_BACKOFF_S)

    async def init_settings(self, settings: ClusterSettings) -> ClusterSettings:
        """Store ``settings`` if none are stored yet, and return the stored ones.

        Args:
            settings: this node's configuration.

        Returns:
            The cluster's settings (equal to ``settings``).

        Raises:
            SettingsMismatchError: the stored settings differ from ``settings``.
            StorageUnavailableError: etcd did not answer within ``timeout_s``.
        """
        key = self.keys.settings
        value = envelope.encode_settings(settings)

        def fn(client: Any) -> ClusterSettings:
            t = client.transactions
            ok, responses = client.transaction(
                compare=[t.create(key) == 0], success=[t.put(key, value)], failure=[t.get(key)]
            )
            return settings if ok else envelope.decode_settings(bytes(responses[0][0][0]))

        stored = await self.call("init_settings", fn)
        if stored != settings:
            raise SettingsMismatchError(
                f"this node is configured with {settings}, but the cluster under prefix "
                f"{self.keys.prefix!r} was initialised with {stored}; cluster settings never "
                "change"
            )
        return stored

    async def register_node(self, name: str, info: bytes, ttl_s: float) -> None:
        """Put node ``name``'s registry entry on this log's lease, and keep the lease alive.

        The lease (``ttl_s`` rounded up to whole seconds; etcd raises it to its minimum TTL)
        is granted on the first call and reused: each call sends it one keep-alive, then puts
        the entry attached to it. A lease that expired meanwhile (the process was paused, etcd
        lost it) is replaced by a new one.

        Args:
            name: the node's name.
            info: the opaque entry.
            ttl_s: how long the entry lives without a refresh, in seconds.

        Raises:
            StorageUnavailableError: etcd did not answer within ``timeout_s``.
            ValueError: an empty or malformed name, or a ttl that is not positive.
        """
        key = self.keys.node(name)
        value = envelope.encode(Kind.NODE, info)
        ttl = lease_ttl(ttl_s)
        await self.call("register_node", lambda client: self._leases.put(client, key, value, ttl))

    async def list_nodes(self) -> dict[str, bytes]:
        """Return every live registry entry, by node name, from one range read.

        Raises:
            FormatError: a stored entry is corrupted or of an unknown format.
            StorageUnavailableError: etcd did not answer within ``timeout_s``.
        """
        prefix = self.keys.nodes_prefix
        end = prefix_range_end(prefix)

        def fn(client: Any) -> list[tuple[str, bytes]]:
            response = client.get_range_response(prefix, end)
            return [
                (bytes(kv.key).decode("utf-8", "replace"), bytes(kv.value)) for kv in response.kvs
            ]

        found = await self.call("list_nodes", fn)
        return {
            key[len(prefix) :]: envelope.decode_as(value, Kind.NODE).body for key, value in found
        }

    async def deregister_node(self, name: str) -> None:
        """Delete node ``name``'s registry entry (the lease stays for other entries on it).

        Raises:
            StorageUnavailableError: etcd did not answer within ``timeout_s``.
        """
        key = self.keys.node(name)
        await self.call("deregister_node", lambda client: client.delete(key))

    def watch(self, from_version: int) -> AsyncGenerator[WatchEvent, None]:
        """Yield every version from ``from_version`` on, in order, then live ones.

        Safe-time changes are yielded once every version committed before them was yielded.
        The iterator ends after ``SnapshotRequired``, or when the log is closed. See
        ``updatelog.etcd_watch`` for how it survives compaction, failover and lost streams.

        Args:
            from_version: the first version to deliver, at least 1.

        Returns:
            An async generator of ``LogEntry``, ``SafeTimeAdvanced`` and ``SnapshotRequired``;
            close it (``aclose``) when done, which cancels its stream.

        Raises:
            FormatError: a stored value is corrupted; the watch never skips it.
            StorageUnavailableError: the log is closed, or etcd stayed unreachable for longer
                than ``timeout_s``.
        """
        check_int("from_version", from_version, 1)
        if self._closed:
            # As the SQLite log: a closed log refuses a new watch rather than ending it at
            # once, so that a follower re-watching in a loop backs off instead of spinning.
            raise StorageUnavailableError(f"{self!r} is closed")
        from updatelog.etcd_watch import watch_log

        return watch_log(self, from_version)

    async def list_updates(self, next_version: int) -> Listing:
        """Read up to ``watch_page`` updates from ``next_version`` and the bounds, at one revision.

        Raises:
            FormatError: a stored value is corrupted.
            StorageUnavailableError: etcd did not answer within ``timeout_s``.
        """
        fn = list_updates(self.keys, next_version, self.watch_page)
        return await self.call("watch re-list", fn)

    def register_stream(self, stream: Any) -> bool:
        """Track a watch stream so that ``close`` cancels it; False (cancelled) if closed."""
        if self._closed:
            stream.cancel()
            return False
        self._watch_streams.add(stream)
        return True

    def unregister_stream(self, stream: Any) -> None:
        """Stop tracking a watch stream."""
        self._watch_streams.discard(stream)

    def is_closed(self) -> bool:
        """Return whether ``close`` was called."""
        return self._closed

    def interrupt_watch_streams(self) -> int:
        """Cancel every open watch stream from the client side, as a dropped connection would.

        Watches resume on their own; this exists to prove that they do. Returns how many
        streams were cancelled.
        """
        streams = list(self._watch_streams)
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
        for stream in list(self._watch_streams):
            stream.cancel()
        self._watch_streams.clear()
        if client is not None:
            await asyncio.get_running_loop().run_in_executor(self._executor, client.close)
        self._executor.shutdown(wait=False, cancel_futures=True)


def _read(path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise StorageUnavailableError(f"cannot read TLS file {path}: {e}") from e

"""``EtcdMembers``: the etcd members a store talks to, each over one asyncio gRPC channel.

A channel is opened on first use, in the running event loop (a store used from another loop
later opens new ones). Calls go to the current member. A member whose call failed at the
transport is skipped for ``retry_s`` and the next one becomes current; when every member failed
that recently, the one that failed longest ago is tried rather than none.

With a user, the token ``Authenticate`` returns travels as the ``token`` metadata of each call
(etcd reads it there, with or without TLS); tokens expire, so ``forget_token`` makes the next
call authenticate again.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc  # type: ignore[import-untyped]
from pyetcd import etcdrpc

from updatelog.errors import StorageUnavailableError

_GRPC_OPTIONS = [
    # Long range reads exceed gRPC's 4 MiB default; etcd bounds requests itself.
    ("grpc.max_receive_message_length", 512 * 1024 * 1024),
    ("grpc.max_send_message_length", 512 * 1024 * 1024),
    # A member that vanishes without a TCP reset is noticed by keepalive; etcd refuses pings
    # more often than every 5 s, and on idle connections (so only a watch stream pings).
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
]

Metadata = tuple[tuple[str, str], ...]


@dataclass(eq=False)
class Member:
    """One etcd member: where it is, when a call to it last failed, and its channel."""

    host: str
    port: int
    failed_at: float = -math.inf
    channel: Any = None
    stubs: dict[str, Any] = field(default_factory=dict)

    @property
    def target(self) -> str:
        """``host:port`` (an IPv6 host in brackets)."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def stub(self, service: str) -> Any:
        """Return the ``etcdrpc`` stub of ``service`` (``KV``, ``Watch``, ``Lease``...)."""
        found = self.stubs.get(service)
        if found is None:
            found = self.stubs[service] = getattr(etcdrpc, f"{service}Stub")(self.channel)
        return found


class EtcdMembers:
    """The members of one store, the current one, their channels and the auth token.

    Args:
        endpoints: ``(host, port)`` of every member.
        tls: ``(ca, cert, key)`` file paths (any may be None), or None for plain text.
        auth: ``(user, password)``, or None.
        retry_s: how long a member that failed is skipped.
        rpc_timeout_s: bound of the ``Authenticate`` call.
    """

    def __init__(
        self,
        endpoints: Sequence[tuple[str, int]],
        *,
        tls: tuple[str | None, str | None, str | None] | None,
        auth: tuple[str, str] | None,
        retry_s: float,
        rpc_timeout_s: float,
    ) -> None:
        self.members = [Member(host, int(port)) for host, port in endpoints]
        self._tls = tls
        self._auth = auth
        self._retry_s = retry_s
        self._rpc_timeout_s = rpc_timeout_s
        self._current = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._token: str | None = None

    def current(self) -> Member:
        """Return the member calls go to now (see the module doc)."""
        now = time.monotonic()
        count = len(self.members)
        for step in range(count):
            index = (self._current + step) % count
            if now - self.members[index].failed_at >= self._retry_s:
                self._current = index
                return self.members[index]
        oldest = min(range(count), key=lambda i: self.members[i].failed_at)
        self._current = oldest
        return self.members[oldest]

    def fail(self, member: Member) -> None:
        """Skip ``member`` for a while: a call to it failed at the transport."""
        member.failed_at = time.monotonic()

    async def connect(self) -> tuple[Member, Metadata]:
        """Return the current member, its channel open, and the metadata calls carry."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # Channels belong to the loop they were opened in.
            for member in self.members:
                member.channel, member.stubs = None, {}
            self._loop, self._token = loop, None
        member = self.current()
        if member.channel is None:
            member.channel = self._open(member.target)
        if self._auth is None:
            return member, ()
        if self._token is None:
            user, password = self._auth
            request = etcdrpc.AuthenticateRequest(name=user, password=password)
            response = await member.stub("Auth").Authenticate(request, timeout=self._rpc_timeout_s)
            self._token = str(response.token)
        return member, (("token", self._token),)

    def forget_token(self) -> None:
        """Authenticate again on the next call (etcd said the token is no longer valid)."""
        self._token = None

    def _open(self, target: str) -> Any:
        if self._tls is None:
            return grpc.aio.insecure_channel(target, options=_GRPC_OPTIONS)
        ca, cert, key = self._tls
        creds = grpc.ssl_channel_credentials(
            root_certificates=_read(ca), private_key=_read(key), certificate_chain=_read(cert)
        )
        return grpc.aio.secure_channel(target, creds, options=_GRPC_OPTIONS)

    async def close(self) -> None:
        """Close every channel opened in the running loop (others went with their loop)."""
        same_loop = self._loop is asyncio.get_running_loop()
        for member in self.members:
            channel, member.channel, member.stubs = member.channel, None, {}
            if channel is not None and same_loop:
                await channel.close()


def _read(path: str | None) -> bytes | None:
    try:
        return None if path is None else Path(path).read_bytes()
    except OSError as e:
        raise StorageUnavailableError(f"cannot read TLS file {path}: {e}") from e

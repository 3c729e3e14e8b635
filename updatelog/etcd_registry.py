"""Leases for registry entries on etcd: one lease per ttl per log, kept alive by each refresh.

Only ``updatelog/etcd*.py`` modules talk to the etcd client; this one holds the lease logic
``EtcdUpdateLog.register_node`` runs in its worker threads.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import grpc  # type: ignore[import-untyped]

from updatelog.errors import StorageUnavailableError


def lease_ttl(ttl_s: float) -> int:
    """Return ``ttl_s`` as whole seconds for an etcd lease (at least 1).

    Raises:
        ValueError: a ttl that is not a positive, finite number.
    """
    if not (isinstance(ttl_s, int | float) and math.isfinite(ttl_s) and ttl_s > 0):
        raise ValueError(f"ttl_s must be a positive number of seconds, got {ttl_s!r}")
    return max(1, math.ceil(ttl_s))


class Leases:
    """The leases one log attaches its registry entries to, by ttl; thread-safe.

    Each ``put`` sends the lease one keep-alive, then writes the entry attached to it. A lease
    that expired meanwhile (the process was paused, etcd lost it) is replaced by a new one.
    """

    def __init__(self, *, describe: str) -> None:
        self._describe = describe
        self._by_ttl: dict[int, int] = {}
        self._lock = threading.Lock()

    def put(self, client: Any, key: str, value: bytes, ttl: int) -> None:
        """Write ``key`` on the lease of ``ttl`` seconds, granting or renewing it (blocking).

        Raises:
            StorageUnavailableError: etcd lost two fresh leases in a row.
        """
        with self._lock:
            lease_id = self._by_ttl.get(ttl)
            if lease_id is not None and not _keep_alive(client, lease_id):
                lease_id = None
            for _ in range(2):
                if lease_id is None:
                    lease_id = int(client.lease(ttl).id)
                    self._by_ttl[ttl] = lease_id
                try:
                    client.put(key, value, lease=lease_id)
                    return
                except grpc.RpcError as e:
                    # The lease expired between the keep-alive and the put.
                    if not (isinstance(e, grpc.Call) and e.code() == grpc.StatusCode.NOT_FOUND):
                        raise
                    lease_id = None
            raise StorageUnavailableError(f"{self._describe}: etcd lost two fresh leases in a row")


def _keep_alive(client: Any, lease_id: int) -> bool:
    """Send one keep-alive for ``lease_id``; return False if etcd no longer has the lease."""
    responses = client.refresh_lease(lease_id)
    try:
        # One request, one answer: closing the generator then ends the call at once.
        first = next(responses, None)
    finally:
        responses.close()
    return first is not None and int(first.TTL) > 0

"""Registry entries over the update log's key-value seam: on leases, one lease per ttl.

Each ``register`` sends its lease one keep-alive, then writes the entry attached to it; a lease
that expired meanwhile (the process was paused, the store lost it) is replaced by a new one. An
entry disappears on its own once its lease runs out, so a node that dies or hangs drops out.

Keys, under the log's ``nodes`` subspace (``KeyLayout.subspace``)::

    <prefix>/catalog.nodes.<name>       the entry of node <name>
"""

from __future__ import annotations

import asyncio
import math

from updatelog import envelope
from updatelog.envelope import Kind
from updatelog.errors import StorageUnavailableError
from updatelog.keys import KeyLayout, check_key_part, prefix_range_end
from updatelog.kv import Delete, KvStore, LeaseExpiredError, Put


def lease_ttl(ttl_s: float) -> int:
    """Return ``ttl_s`` as whole seconds for a lease (at least 1).

    Raises:
        ValueError: a ttl that is not a positive, finite number.
    """
    if not (isinstance(ttl_s, int | float) and math.isfinite(ttl_s) and ttl_s > 0):
        raise ValueError(f"ttl_s must be a positive number of seconds, got {ttl_s!r}")
    return max(1, math.ceil(ttl_s))


class RegistryEntries:
    """Registry entries ``catalog.nodes.<name>`` of one catalog in one store."""

    def __init__(self, store: KvStore, keys: KeyLayout) -> None:
        self.store = store
        self.prefix = keys.subspace("nodes")
        """The root of every entry's key."""
        self._leases: dict[int, int] = {}
        self._lock = asyncio.Lock()

    def key(self, name: str) -> str:
        """Return the key of node ``name``'s entry.

        Raises:
            ValueError: the name is empty or contains control characters.
        """
        return self.prefix + check_key_part("node name", name)

    async def register(self, name: str, info: bytes, ttl_s: float) -> None:
        """Create or refresh ``name``'s entry; it lives ``ttl_s`` (whole seconds) from now.

        Raises:
            StorageUnavailableError: the store did not answer, or lost two fresh leases.
            ValueError: an empty or malformed name, or a ttl that is not positive.
        """
        key = self.key(name)
        value = envelope.encode(Kind.NODE, info)
        ttl = lease_ttl(ttl_s)
        async with self._lock:
            lease = self._leases.get(ttl)
            if lease is not None and not await self.store.keep_alive(lease):
                lease = None
            for _ in range(2):
                if lease is None:
                    lease = self._leases[ttl] = await self.store.grant_lease(ttl)
                try:
                    await self.store.txn([], [Put(key, value, lease)])
                    return
                except LeaseExpiredError:
                    lease = None  # it expired between the keep-alive and the put
        raise StorageUnavailableError(f"{self.store}: the store lost two fresh leases in a row")

    async def list(self) -> dict[str, bytes]:
        """Return every live entry by node name, from one range read.

        Raises:
            FormatError: a stored entry is corrupted or of an unknown format.
        """
        prefix = self.prefix
        read = await self.store.range(prefix, prefix_range_end(prefix))
        return {
            kv.key[len(prefix) :]: envelope.decode_as(kv.value, Kind.NODE).body for kv in read.kvs
        }

    async def deregister(self, name: str) -> None:
        """Remove ``name``'s entry at once (a node leaving cleanly)."""
        await self.store.txn([], [Delete(self.key(name))])

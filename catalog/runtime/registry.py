"""The node registry: which catalog nodes are alive and how far each has applied the log.

Every node keeps an entry at ``catalog.nodes.<name>`` (TiDB's per-server schema versions on a
session lease, Kudu's TSManager): its address, applied version, observed safe time and a
heartbeat. ``NodeRegistry`` refreshes it every ``interval_s`` (a third of the ttl by default)
and as soon as the node applies a new version, at most once per ``min_gap_s``, so a writer
waiting for the cluster learns quickly. An entry that is not refreshed for its ttl expires:
a crashed, hung or partitioned node drops out of the registry on its own.

``wait_for_nodes`` is the stronger completion mode of ``CatalogManager.execute``: it polls the
registry until every live node reports a version, bounded by a timeout, and says which nodes
confirmed and which did not (as TiDB's ``WaitVersionSynced`` polls every 20 ms).

The entry's body is a msgpack map, inside the log's ``Kind.NODE`` envelope (which carries the
format version). Readers ignore keys they do not know, so a later release may add fields.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import msgpack

from catalog.errors import ValidationError
from catalog.runtime.registry_entries import RegistryEntries
from schemasync.clock import Clock
from schemasync.watermark import Watermark
from updatelog.errors import FormatError, StorageUnavailableError, UpdateLogError
from updatelog.log import UpdateLog

log = logging.getLogger(__name__)

DEFAULT_TTL_S = 10.0
DEFAULT_MIN_GAP_S = 0.05
DEFAULT_POLL_INTERVAL_S = 0.02
_RETRY_AFTER_FAILURE_S = 0.5


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """One node's registry entry.

    Attributes:
        name: the node's name (its key in the registry).
        address: where its REST API answers (``http://host:port``), if it serves one.
        applied_version: the latest catalog version applied there (listeners finished).
        safe_time: the safe time it has observed with every earlier version applied (HLC).
        heartbeat_ms: its physical clock (ms) when it wrote the entry.
        started_ms: its physical clock (ms) when it started.
    """

    name: str
    address: str | None
    applied_version: int
    safe_time: int
    heartbeat_ms: int
    started_ms: int

    def encode(self) -> bytes:
        """Return the entry's body (a msgpack map)."""
        return msgpack.packb(
            {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}, use_bin_type=True
        )

    @classmethod
    def decode(cls, data: bytes) -> NodeRecord:
        """Read an entry's body written by ``encode`` (of this or a later release).

        Raises:
            FormatError: not a msgpack map, or a known field is missing or of the wrong type.
        """
        try:
            fields: Any = msgpack.unpackb(data, raw=False, strict_map_key=True)
        except (ValueError, TypeError, msgpack.UnpackException) as e:
            raise FormatError(f"node registry entry is not valid msgpack: {e}") from e
        if not isinstance(fields, dict):
            raise FormatError("node registry entry is not a map")
        name, address = fields.get("name"), fields.get("address")
        if not isinstance(name, str) or not (address is None or isinstance(address, str)):
            raise FormatError("node registry entry needs a text name and address")
        numbers = ("applied_version", "safe_time", "heartbeat_ms", "started_ms")
        for key in numbers:
            value = fields.get(key)
            if type(value) is not int or value < 0:
                raise FormatError(f"node registry entry field {key} must be a non-negative int")
        return cls(name, address, *(int(fields[key]) for key in numbers))


def decode_nodes(entries: dict[str, bytes]) -> list[NodeRecord]:
    """Parse ``RegistryEntries.list`` output; the key's name wins over the body's. By name.

    Raises:
        FormatError: an entry is malformed.
    """
    records = []
    for name in sorted(entries):
        record = NodeRecord.decode(entries[name])
        records.append(record if record.name == name else dataclasses.replace(record, name=name))
    return records


@dataclass(frozen=True, slots=True)
class NodesSync:
    """The outcome of ``wait_for_nodes``: live nodes that reached the version, and the rest."""

    synced: tuple[str, ...]
    lagging: tuple[str, ...]


async def wait_for_nodes(
    update_log: UpdateLog,
    version: int,
    timeout_s: float,
    *,
    poll_interval_s: float = DEFAULT_POLL_INTERVAL_S,
    known_synced: Collection[str] = (),
) -> NodesSync:
    """Wait until every live registered node reports ``applied_version >= version``.

    Re-reads the registry every ``poll_interval_s`` until no live node lags or ``timeout_s``
    has passed (always at least one read). A node that confirmed once stays confirmed, even if
    its entry expires later; a lagging node whose entry expires is no longer waited for.

    Args:
        update_log: the log holding the registry.
        version: the version every node should have applied.
        timeout_s: the longest wait, in seconds (0 for a single look).
        poll_interval_s: the pause between reads.
        known_synced: nodes known to have applied ``version`` (the caller's own), counted as
            confirmed when they are live even if their entry is a heartbeat behind.

    Returns:
        The confirmed nodes and the live ones that had not confirmed at the end, by name.

    Raises:
        ValidationError: ``timeout_s`` is negative or not finite.
        StorageUnavailableError: the registry could not be read even once within the wait.
        FormatError: an entry is malformed.
    """
    if not (math.isfinite(timeout_s) and timeout_s >= 0):
        raise ValidationError(f"wait_for_nodes must be a finite, non-negative time: {timeout_s}")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    confirmed: set[str] = set()
    lagging: set[str] | None = None
    failure: BaseException | None = None
    while True:
        try:
            # One read may take up to the log's own bound; never much past ours.
            async with asyncio.timeout(max(deadline - loop.time(), 1.0)):
                listing = await RegistryEntries(update_log.store, update_log.keys).list()
        except (StorageUnavailableError, TimeoutError) as e:
            failure = e
        else:
            records = decode_nodes(listing)
            confirmed.update(
                r.name for r in records if r.applied_version >= version or r.name in known_synced
            )
            lagging = {r.name for r in records} - confirmed
            if not lagging:
                break
        remaining = deadline - loop.time()
        if remaining <= 0:
            break
        await asyncio.sleep(min(poll_interval_s, remaining))
    if lagging is None:
        raise StorageUnavailableError(
            f"could not read the node registry within {timeout_s:g}s ({failure}); the change "
            f"itself is committed as version {version}"
        )
    return NodesSync(tuple(sorted(confirmed)), tuple(sorted(lagging)))


class NodeRegistry:
    """Keeps this node's registry entry fresh while the node runs.

    Args:
        update_log: the log holding the registry.
        node_name: this node's name.
        address: this node's REST address, if any.
        clock: this node's clock (heartbeat and start times).
        applied: the version applied locally; a rise triggers a prompt write.
        safe_time: the safe time observed locally.
        ttl_s: how long the entry outlives the last write.
        interval_s: the heartbeat period (``ttl_s / 3`` by default); below ``ttl_s``.
        min_gap_s: the shortest time between two writes (coalesces bursts of versions).

    Raises:
        ValueError: a ttl or interval that is not positive, or an interval not below the ttl.
    """

    def __init__(
        self,
        update_log: UpdateLog,
        *,
        node_name: str,
        address: str | None,
        clock: Clock,
        applied: Watermark,
        safe_time: Watermark,
        ttl_s: float = DEFAULT_TTL_S,
        interval_s: float | None = None,
        min_gap_s: float = DEFAULT_MIN_GAP_S,
    ) -> None:
        interval = ttl_s / 3 if interval_s is None else interval_s
        if not (0 < interval < ttl_s and math.isfinite(ttl_s)) or min_gap_s < 0:
            raise ValueError(
                f"the registry needs 0 < interval_s < ttl_s and min_gap_s >= 0 "
                f"(got ttl {ttl_s}, interval {interval}, gap {min_gap_s})"
            )
        self.node_name = node_name
        self.address = address
        self.ttl_s = ttl_s
        self.interval_s = interval
        self.min_gap_s = min_gap_s
        self.started_ms = clock.physical_ms()
        self.writes = 0
        self._log = update_log
        self._entries = RegistryEntries(update_log.store, update_log.keys)
        self._clock = clock
        self._applied = applied
        self._safe_time = safe_time
        self._written_version = -1
        self._last_write = -math.inf
        self._task: asyncio.Task[None] | None = None

    def record(self) -> NodeRecord:
        """Return this node's entry as of now."""
        return NodeRecord(
            name=self.node_name,
            address=self.address,
            applied_version=self._applied.value,
            safe_time=self._safe_time.value,
            heartbeat_ms=self._clock.physical_ms(),
            started_ms=self.started_ms,
        )

    async def start(self) -> None:
        """Register now, then keep the entry fresh in the background.

        Raises:
            StorageUnavailableError: the first registration failed.
        """
        if self._task is not None:
            return
        await self._write()
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"node-registry-{self.node_name}"
        )

    async def _write(self) -> None:
        record = self.record()
        self._last_write = asyncio.get_running_loop().time()
        await self._entries.register(self.node_name, record.encode(), self.ttl_s)
        self._written_version = record.applied_version
        self.writes += 1

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        news: asyncio.Task[int] | None = None
        retry_at: float | None = None  # after a failed write: the next attempt, sooner
        try:
            while True:
                if news is None:
                    news = loop.create_task(self._applied.wait_for(self._written_version + 1))
                beat = self._last_write + self.interval_s if retry_at is None else retry_at
                done, _ = await asyncio.wait({news}, timeout=max(beat - loop.time(), 0))
                if news in done:
                    if not news.cancelled() and news.exception() is not None:
                        # The service failed: its version stays; heartbeats go on.
                        log.debug("%s: registry stops following versions", self.node_name)
                    news = None
                    # Coalesce a burst of versions into one write per min_gap_s.
                    wake = max(self._last_write + self.min_gap_s, retry_at or 0.0)
                    await asyncio.sleep(max(wake - loop.time(), 0))
                try:
                    await self._write()
                except UpdateLogError as e:
                    retry_at = loop.time() + min(_RETRY_AFTER_FAILURE_S, self.interval_s)
                    log.warning("%s: registry heartbeat failed: %s", self.node_name, e)
                else:
                    retry_at = None
        finally:
            if news is not None:
                news.cancel()

    async def close(self, *, deregister: bool = True) -> None:
        """Stop the heartbeats and (by default) remove the entry at once. Idempotent.

        A failure to remove is logged, not raised: the entry then expires after its ttl.
        """
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        if deregister:
            try:
                await self._entries.deregister(self.node_name)
            except UpdateLogError as e:
                log.warning("%s: could not deregister (it expires instead): %s", self.node_name, e)

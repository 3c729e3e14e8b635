"""``CatalogNode``: one catalog node, wiring the log, clock, service, manager and schema sync.

::

    async with CatalogNode.open("sqlite:///./data/catalog.db", node_name="n1") as node:
        result = await node.manager.execute([...])
        cat = node.service.active_catalog(node.clock.now())
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from catalog.data.commits import DataCommits
from catalog.data.warehouse import warehouse_root
from catalog.errors import CatalogError
from catalog.manager import CatalogManager
from catalog.marshalling import encode_update
from catalog.runtime.options import CompactionPolicy, NodeOptions
from catalog.runtime.registry import NodeRecord, NodeRegistry, decode_nodes
from catalog.runtime.registry_entries import RegistryEntries
from catalog.runtime.store_guard import StoreGuard
from catalog.service import CatalogService
from catalog.storage.descriptor_cache import CACHE
from catalog.update import initial_update
from schemasync.clock import Clock, HybridClock, physical_of
from schemasync.service import SchemaSyncService, ms_to_hlc
from updatelog.cluster import ensure_cluster_id
from updatelog.errors import SettingsMismatchError, StorageUnavailableError, StoreRegressedError
from updatelog.log import ClusterSettings, UpdateLog
from updatelog.url import open_log

log = logging.getLogger(__name__)


class CatalogNode:
    """A running catalog node. Create it with ``open`` (``SyncCatalogNode`` for blocking code)."""

    def __init__(
        self,
        log: UpdateLog,
        service: CatalogService,
        *,
        clock: Clock,
        settings: ClusterSettings,
        options: NodeOptions,
        owns_log: bool,
    ) -> None:
        """Wire the schema sync, the manager and the registry around a recovered ``service``."""
        self.node_name = service.node_name
        self.log = log
        self.clock = clock
        self.settings = settings
        self.service = service
        self.schema_sync = SchemaSyncService(
            log,
            clock,
            delay_ms=settings.delay_ms,
            max_clock_skew_ms=settings.max_clock_skew_ms,
            applied=service.applied,
            observed_safe_time=service.observed_safe_time,
        )
        self.manager = CatalogManager(log, service, self.schema_sync, warehouse=settings.warehouse)
        self.data = DataCommits(log, service, clock, self.schema_sync)
        """Timestamped data commits of the tables (files written by Spark jobs)."""
        self.registry: NodeRegistry | None = None
        """This node's entry in the node registry; None when it does not register."""
        if options.registry_ttl_s is not None:
            self.registry = NodeRegistry(
                log,
                node_name=self.node_name,
                address=options.address,
                clock=clock,
                applied=service.applied,
                safe_time=service.observed_safe_time,
                ttl_s=options.registry_ttl_s,
                interval_s=options.registry_interval_s,
            )
        self._options = options
        self._owns_log = owns_log
        self._maintenance: asyncio.Task[None] | None = None
        self._stopping_writes: asyncio.Task[None] | None = None
        self.store_guard: StoreGuard | None = None
        """Stops the node when its store goes back in time (``store_guard``)."""
        self._closed = False

    @classmethod
    async def start(
        cls, store: str | UpdateLog, node_name: str, options: NodeOptions | None = None
    ) -> CatalogNode:
        """Start a node: initialise the cluster if needed, recover, then follow the log.

        Args:
            store: a store URL (``sqlite:///...``, ``etcd://...``) or an open ``UpdateLog``
                (which the node then does not close).
            node_name: this node's name.
            options: how the node runs (``NodeOptions()`` when None).

        Raises:
            SettingsMismatchError: the cluster was created with other delay/skew settings,
                or another warehouse than the one this node names.
            StorageUnavailableError: the store cannot be reached.
        """
        owns_log = isinstance(store, str)
        update_log = open_log(store) if isinstance(store, str) else store
        try:
            node = await cls._start(update_log, node_name, options or NodeOptions(), owns_log)
        except BaseException:
            if owns_log:
                await update_log.close()
            raise
        return node

    @classmethod
    async def _start(
        cls, update_log: UpdateLog, node_name: str, options: NodeOptions, owns_log: bool
    ) -> CatalogNode:
        clock = options.clock or HybridClock()
        CACHE.reserve(options.descriptor_cache)
        settings = await update_log.init_settings(
            ClusterSettings(
                delay_ms=options.delay_ms,
                max_clock_skew_ms=options.max_clock_skew_ms,
                warehouse=_folder(options.warehouse or options.default_warehouse),
            )
        )
        named = _folder(options.warehouse)
        if named is not None and settings.warehouse != named:
            raise SettingsMismatchError(
                f"this node names the warehouse {named}, but the catalog's is "
                f"{settings.warehouse} (fixed when the catalog was created): start the node "
                f"with --warehouse {settings.warehouse}, or name none"
            )
        cluster_id = await ensure_cluster_id(update_log)
        if await update_log.latest_version() == 0:
            # Concurrent first starts race on the same CAS; exactly one writes version 1.
            first = initial_update(clock.now())
            await update_log.append(1, encode_update(first), first.proposal_ts)
        service = CatalogService(update_log, node_name=node_name)
        await service.recover()
        service.start()
        try:
            node = cls(
                update_log,
                service,
                clock=clock,
                settings=settings,
                options=options,
                owns_log=owns_log,
            )
        except BaseException:
            await service.close()
            raise
        node.store_guard = StoreGuard(update_log, service, cluster_id)
        service.went_back_listeners.append(node._stop_writing)
        node.store_guard.start()
        if options.safe_time_ticker:
            node.schema_sync.start_ticker()
        node._maintenance = asyncio.get_running_loop().create_task(
            node._maintain(), name=f"catalog-maintenance-{node_name}"
        )
        if node.registry is not None:
            try:
                await node.registry.start()
            except BaseException:
                await node.close()
                raise
        return node

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls, store: str | UpdateLog, node_name: str, options: NodeOptions | None = None
    ) -> AsyncIterator[CatalogNode]:
        """Start a node for the duration of an ``async with`` block (see ``start``)."""
        node = await cls.start(store, node_name, options)
        try:
            yield node
        finally:
            await node.close()

    @property
    def ready(self) -> bool:
        """Return True once recovery finished, the watch is live and nothing has failed."""
        return self.service.watch_live and self.service.failure is None and not self._closed

    async def wait_ready(self, timeout_s: float = 10.0) -> None:
        """Wait until the node has applied every version the log had when called."""
        latest = await self.log.latest_version()
        await asyncio.wait_for(self.service.catalog_ready(latest), timeout_s)

    async def cluster_nodes(self) -> list[NodeRecord]:
        """Return every live node in the node registry, by name.

        This node's own entry, while it is live, is reported as of now rather than as of its
        last heartbeat (up to ``min_gap_s`` older): no source about it is fresher.

        Raises:
            FormatError: an entry is malformed.
            StorageUnavailableError: the store cannot be reached.
        """
        records = decode_nodes(await RegistryEntries(self.log.store, self.log.keys).list())
        registry = self.registry
        if registry is None:
            return records
        return [registry.record() if r.name == self.node_name else r for r in records]

    async def _maintain(self) -> None:
        while True:
            await asyncio.sleep(self._options.follow_interval_s)
            try:
                earliest = await self.log.earliest_version()
                if earliest > self.service.earliest_version:
                    self.service.truncate_before(earliest)
                if self._options.compaction is not None:
                    await self._compact_by_policy(self._options.compaction)
            except StorageUnavailableError as e:
                log.warning("%s: maintenance: %s", self.node_name, e)

    async def _compact_by_policy(self, policy: CompactionPolicy) -> None:
        service = self.service
        by_count = service.latest_version - policy.retain_versions + 1
        horizon = self.clock.now() - ms_to_hlc(policy.retain_ms)
        if physical_of(horizon) <= 0 or by_count <= service.earliest_version:
            return
        try:
            by_age = service.active_catalog_version(horizon)
        except CatalogError:  # nothing retained is that old
            return
        await self.manager.compact_to(min(by_count, by_age))

    def _stop_writing(self, error: StoreRegressedError) -> None:
        """The store went back in time: write nothing more to it.

        Reads as of a time are refused (completing one raises the store's safe time), the
        safe-time ticker and compaction stop, and the node leaves the registry (so no node
        counts it as having applied versions the store no longer has).
        """
        self.schema_sync.halt(error)
        self._stopping_writes = asyncio.get_running_loop().create_task(
            self._stop_writers(), name=f"catalog-stop-writing-{self.node_name}"
        )

    async def _stop_maintenance(self) -> None:
        """Stop the maintenance task (log truncation, compaction). Idempotent."""
        maintenance, self._maintenance = self._maintenance, None
        if maintenance is not None:
            maintenance.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await maintenance

    async def _stop_writers(self) -> None:
        await self._stop_maintenance()
        await self.schema_sync.close()
        if self.registry is not None:
            await self.registry.close()

    async def close(self) -> None:
        """Stop the node: finish queued commands, stop following the log. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._stopping_writes is not None:
            await asyncio.gather(self._stopping_writes, return_exceptions=True)
        await self._stop_maintenance()
        if self.store_guard is not None:
            await self.store_guard.stop()
        if self.registry is not None:
            await self.registry.close()
        await self.manager.close()
        await self.schema_sync.close()
        await self.service.close()
        if self._owns_log:
            await self.log.close()

    def __repr__(self) -> str:
        return (
            f"CatalogNode({self.node_name!r}, versions "
            f"{self.service.earliest_version}..{self.service.latest_version})"
        )


def _folder(path: str | None) -> str | None:
    """Return a warehouse (``warehouse_root``: a local one made absolute), or None."""
    return None if path is None else warehouse_root(path)

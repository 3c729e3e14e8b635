"""``StoreGuard``: a node notices, within a fraction of a second, that its store went back.

Every ``interval_s`` it reads the versions the node applied, then where the store stands
(``updatelog.cluster``). A store below what the node applied, or of another cluster id, went
back in time: the guard tells the service (``CatalogService.store_went_back``), which from
then on refuses changes, data commits and latest reads with ``STORE_REGRESSED`` and makes the
node unready. Nothing the node does afterwards can hand a version number to other content:
it writes nothing more (its safe-time ticker and compaction stop, and it leaves the node
registry, so no node counts it as synced). A restart joins the store as it is now.
"""

from __future__ import annotations

import asyncio
import logging

from catalog.service import CatalogService
from updatelog.cluster import check_position, store_position
from updatelog.errors import StorageUnavailableError
from updatelog.log import UpdateLog

log = logging.getLogger(__name__)

CHECK_INTERVAL_S = 0.2
"""How often a node compares its store with what it applied."""


class StoreGuard:
    """Watches that the store never goes below what the node applied, nor changes cluster."""

    def __init__(
        self,
        update_log: UpdateLog,
        service: CatalogService,
        cluster_id: str,
        interval_s: float = CHECK_INTERVAL_S,
    ) -> None:
        self._log = update_log
        self._service = service
        self.cluster_id = cluster_id
        """The cluster id this node joined."""
        self._interval_s = interval_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start checking in the background."""
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"catalog-store-guard-{self._service.node_name}"
        )

    async def check(self) -> bool:
        """Compare the store with what the node applied once; return False if it went back."""
        applied = self._service.latest_version  # read first: the store is at least there
        position = await store_position(self._log)
        error = check_position(position, applied, self.cluster_id, str(self._log))
        if error is not None:
            self._service.store_went_back(error)
            return False
        return True

    async def _run(self) -> None:
        while True:
            try:
                if not await self.check():
                    return  # it stays stopped until the node is restarted
            except StorageUnavailableError as e:
                log.warning("%s: store check: %s", self._service.node_name, e)
            except Exception:
                # From the store's client, not from the store's content: check again later.
                log.exception("%s: store check failed unexpectedly", self._service.node_name)
            await asyncio.sleep(self._interval_s)

    async def stop(self) -> None:
        """Stop checking. Idempotent."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

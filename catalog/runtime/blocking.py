"""``SyncCatalogNode``: a blocking facade over ``CatalogNode`` for scripts and Spark drivers.

The node runs on an event loop in a background thread; every method submits to it and waits.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from catalog.apply_result import ApplyResult
from catalog.catalog import Catalog
from catalog.commands import CommandBase
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from catalog.runtime.registry import NodeRecord
from updatelog.log import UpdateLog

T = TypeVar("T")


class SyncCatalogNode:
    """A ``CatalogNode`` driven from synchronous code.

    Use as a context manager, or call ``close()``::

        with SyncCatalogNode.open("sqlite:///./data/catalog.db", "n1") as node:
            node.execute([...])
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, thread: threading.Thread, node: CatalogNode
    ):
        self._loop = loop
        self._thread = thread
        self.node = node

    @classmethod
    def open(
        cls, store: str | UpdateLog, node_name: str, options: NodeOptions | None = None
    ) -> SyncCatalogNode:
        """Start a node on a private event loop thread (see ``CatalogNode.start``)."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name=f"catalog-{node_name}", daemon=True)
        thread.start()
        try:
            future = asyncio.run_coroutine_threadsafe(
                CatalogNode.start(store, node_name, options), loop
            )
            node = future.result()
        except BaseException:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()
            raise
        return cls(loop, thread, node)

    def _run(self, coroutine: Coroutine[Any, Any, T], timeout_s: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout_s)

    def execute(
        self,
        commands: CommandBase | Sequence[CommandBase],
        request_id: str | None = None,
        *,
        wait_for_nodes: float | None = None,
    ) -> ApplyResult:
        """Run ``CatalogManager.execute`` and wait for it."""
        return self._run(
            self.node.manager.execute(commands, request_id, wait_for_nodes=wait_for_nodes)
        )

    def cluster_nodes(self) -> list[NodeRecord]:
        """Return the live nodes of the node registry (see ``CatalogNode.cluster_nodes``)."""
        return self._run(self.node.cluster_nodes())

    def now(self) -> int:
        """Return this node's hybrid clock reading."""
        return self.node.clock.now()

    def wait_for_metadata_completeness(self, ts: int) -> None:
        """Run ``SchemaSyncService.wait_for_metadata_completeness`` and wait for it."""
        self._run(self.node.schema_sync.wait_for_metadata_completeness(ts))

    def catalog(self, version: int) -> Catalog:
        """Return catalog ``version`` (see ``CatalogService.catalog``)."""
        return self.node.service.catalog(version)

    def active_catalog(self, ts: int) -> Catalog:
        """Wait for metadata completeness at ``ts``, then return the catalog active at ``ts``."""
        self.wait_for_metadata_completeness(ts)
        return self.node.service.active_catalog(ts)

    def latest_catalog(self) -> Catalog:
        """Return the latest applied catalog."""
        return self.node.service.latest_catalog()

    def close(self) -> None:
        """Stop the node and its thread. Idempotent."""
        if self._loop.is_closed():
            return
        try:
            self._run(self.node.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    def __enter__(self) -> SyncCatalogNode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

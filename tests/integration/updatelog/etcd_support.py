"""Helpers for the etcd-only tests: logs on chosen endpoints, appenders, a watch collector."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

from updatelog import LogEntry, SafeTimeAdvanced, WatchEvent
from updatelog.etcd import EtcdUpdateLog


def host_port(endpoint: str) -> tuple[str, int]:
    host, port = endpoint.rsplit(":", 1)
    return host, int(port)


def etcd_log(
    endpoints: list[str] | str,
    prefix: str | None = None,
    *,
    timeout_s: float = 5.0,
    relist_interval_s: float = 1.0,
) -> EtcdUpdateLog:
    """An ``EtcdUpdateLog`` on ``endpoints`` under ``prefix`` (a fresh one when None)."""
    eps = [endpoints] if isinstance(endpoints, str) else endpoints
    return EtcdUpdateLog(
        [host_port(e) for e in eps],
        prefix=f"test-{uuid.uuid4().hex}" if prefix is None else prefix,
        timeout_s=timeout_s,
        relist_interval_s=relist_interval_s,
    )


def payload(version: int) -> bytes:
    return f"update {version}".encode()


async def append_range(log: EtcdUpdateLog, first: int, last: int) -> None:
    """Append ``first..last`` as the only writer; proposals are ``10 * version``."""
    for version in range(first, last + 1):
        result = await log.append(version, payload(version), 10 * version)
        assert result.committed, result


class Collector:
    """Consumes a watch in a background task and records every event."""

    def __init__(self, log: EtcdUpdateLog, from_version: int) -> None:
        self.events: list[WatchEvent] = []
        self.error: BaseException | None = None
        self._watch = log.watch(from_version)
        self._changed = asyncio.Event()
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            async for event in self._watch:
                self.events.append(event)
                self._changed.set()
        except Exception as e:
            self.error = e
            self._changed.set()

    def versions(self) -> list[int]:
        return [e.version for e in self.events if isinstance(e, LogEntry)]

    def safe_times(self) -> list[int]:
        return [e.safe_time for e in self.events if isinstance(e, SafeTimeAdvanced)]

    async def until(self, count: int, timeout_s: float) -> list[int]:
        """Wait until ``count`` versions arrived; fail with what arrived after ``timeout_s``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while len(self.versions()) < count:
            if self.error is not None:
                raise AssertionError(f"watch failed after {self.versions()}") from self.error
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"only {self.versions()} of {count} versions arrived")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                continue
        return self.versions()

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self._watch.aclose()

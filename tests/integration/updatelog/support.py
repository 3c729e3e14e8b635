"""Helpers shared by the behaviour suite and its worker processes (no pytest imports)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from updatelog import LogEntry, SnapshotRequired, UpdateLog, WatchEvent, open_log

T = TypeVar("T")

TIMEOUT_S = 30.0
"""Upper bound of one test's async part: a hang fails the test instead of stalling the run."""


def run(coro: Coroutine[Any, Any, T], timeout: float = TIMEOUT_S) -> T:
    """Run ``coro`` on a fresh event loop, failing with TimeoutError after ``timeout``."""
    return asyncio.run(within(coro, timeout))


async def within(awaitable: Awaitable[T], timeout: float = TIMEOUT_S) -> T:
    """Await ``awaitable``, failing with TimeoutError after ``timeout`` seconds."""
    return await asyncio.wait_for(awaitable, timeout)


@contextlib.asynccontextmanager
async def opened(url: str) -> AsyncIterator[UpdateLog]:
    """Open the log at ``url`` and close it on exit, whatever happens."""
    log = open_log(url)
    try:
        yield log
    finally:
        await log.close()


@contextlib.asynccontextmanager
async def watching(log: UpdateLog, from_version: int) -> AsyncIterator[AsyncIterator[WatchEvent]]:
    """Watch ``log`` and close the watch on exit, so its connection and thread are released."""
    events = log.watch(from_version)
    try:
        yield events
    finally:
        # The protocol promises an AsyncIterator; both backends return async generators,
        # which own a connection until closed.
        if isinstance(events, AsyncGenerator):
            await events.aclose()


async def take(events: AsyncIterator[WatchEvent], entries: int) -> list[WatchEvent]:
    """Collect watch events until ``entries`` log entries arrived or a SnapshotRequired."""
    seen: list[WatchEvent] = []
    count = 0
    while count < entries:
        event = await anext(events)
        seen.append(event)
        if isinstance(event, SnapshotRequired):
            break
        if isinstance(event, LogEntry):
            count += 1
    return seen


def versions(events: list[WatchEvent]) -> list[int]:
    """The versions of the log entries among ``events``, in delivery order."""
    return [e.version for e in events if isinstance(e, LogEntry)]


@dataclass(frozen=True)
class RaceOutcome:
    """What one appender won: versions, the proposal of each, and how many attempts it took."""

    worker: str
    won: dict[int, int]
    attempts: int

    def to_json(self) -> str:
        return json.dumps({"worker": self.worker, "won": self.won, "attempts": self.attempts})

    @staticmethod
    def from_json(text: str) -> RaceOutcome:
        data = json.loads(text)
        won = {int(v): int(ts) for v, ts in data["won"].items()}
        return RaceOutcome(str(data["worker"]), won, int(data["attempts"]))


def race_payload(worker: str, attempt: int, ts: int) -> bytes:
    return json.dumps({"worker": worker, "attempt": attempt, "ts": ts}).encode()


async def append_until_won(log: UpdateLog, worker: str, wins: int) -> RaceOutcome:
    """Append by compare-and-set, as a writer does, until ``wins`` versions are this worker's.

    After a lost CAS the writer learns the log's state from the result and retries on top of
    it, with a proposal above the stored safe time.
    """
    won: dict[int, int] = {}
    attempts = 0
    version = await log.latest_version() + 1
    ts = await log.safe_time() + 1
    while len(won) < wins:
        attempts += 1
        result = await log.append(version, race_payload(worker, attempts, ts), ts)
        if result.committed:
            won[version] = ts
        version, ts = result.version + 1, result.safe_time + 1
    return RaceOutcome(worker, won, attempts)

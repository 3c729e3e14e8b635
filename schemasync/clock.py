"""Hybrid logical clocks: ``HybridClock`` for nodes, ``ManualClock`` for tests.

A timestamp is ``physical_ms << 16 | logical``: wall-clock milliseconds in the high bits and a
16-bit counter in the low bits (docs/design.md, "Time"). A clock never returns the same or a smaller
timestamp twice; it ticks past every timestamp it receives, so causally later events get larger
timestamps even across skewed machines. When the counter would overflow within one
millisecond, the clock borrows the next millisecond (the addition carries into the physical
part), and the wall clock catches up with it shortly after.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

LOGICAL_BITS = 16
LOGICAL_MASK = (1 << LOGICAL_BITS) - 1
MAX_TIMESTAMP = 2**64 - 1


def hlc(physical_ms: int, logical: int = 0) -> int:
    """Build a timestamp from its parts.

    Args:
        physical_ms: milliseconds since the Unix epoch.
        logical: the counter within that millisecond, ``0..65535``.

    Returns:
        ``physical_ms << 16 | logical``.

    Raises:
        ValueError: a part is negative, ``logical`` exceeds 16 bits or the result exceeds 64.
    """
    if physical_ms < 0 or not 0 <= logical <= LOGICAL_MASK:
        raise ValueError(f"invalid HLC parts: physical_ms={physical_ms}, logical={logical}")
    ts = physical_ms << LOGICAL_BITS | logical
    if ts > MAX_TIMESTAMP:
        raise ValueError(f"physical_ms={physical_ms} does not fit in a 64-bit timestamp")
    return ts


def physical_of(ts: int) -> int:
    """Return the physical milliseconds of timestamp ``ts``."""
    return ts >> LOGICAL_BITS


def logical_of(ts: int) -> int:
    """Return the logical counter of timestamp ``ts``."""
    return ts & LOGICAL_MASK


def rfc3339(physical_ms: int) -> str:
    """Return wall-clock milliseconds as RFC 3339 in UTC: ``2025-11-24T16:00:00.123Z``."""
    moment = dt.datetime.fromtimestamp(physical_ms / 1000, dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def describe_ts(ts: int) -> str:
    """Return ``ts`` as people read it in a message: RFC 3339 (UTC), the hybrid value beside.

    >>> describe_ts(hlc(1_764_000_000_123, 2))
    '2025-11-24T16:00:00.123Z (hybrid 115605504008060930)'
    """
    return f"{rfc3339(physical_of(ts))} (hybrid {ts})"


@runtime_checkable
class Clock(Protocol):
    """A node's hybrid logical clock."""

    def now(self) -> int:
        """Return a timestamp greater than every one this clock returned or received."""
        ...

    def update(self, received_ts: int) -> int:
        """Tick past a timestamp received from another node; return the new timestamp."""
        ...

    def physical_ms(self) -> int:
        """Return this clock's wall-clock reading in milliseconds, offset included."""
        ...


def _system_ms() -> int:
    return time.time_ns() // 1_000_000


class HybridClock:
    """The hybrid logical clock of a node, safe to share between threads.

    Args:
        offset_ms: added to every wall-clock reading, so tests can give nodes skewed clocks.
        source_ms: the wall clock, in milliseconds since the epoch; the system clock by default.
    """

    def __init__(self, *, offset_ms: int = 0, source_ms: Callable[[], int] = _system_ms) -> None:
        self.offset_ms = offset_ms
        self._source_ms = source_ms
        self._lock = threading.Lock()
        self._last = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(offset_ms={self.offset_ms}, last={self._last})"

    def physical_ms(self) -> int:
        """Return the wall-clock reading in milliseconds, offset included."""
        return max(0, self._source_ms() + self.offset_ms)

    def now(self) -> int:
        """Return a timestamp greater than every one this clock returned or received."""
        with self._lock:
            return self._tick(0)

    def peek(self) -> int:
        """Return the timestamp ``now()`` would return, without ticking the clock."""
        with self._lock:
            return max(hlc(self.physical_ms()), self._last + 1)

    def update(self, received_ts: int) -> int:
        """Tick past ``received_ts`` and return the new timestamp (greater than both).

        Args:
            received_ts: a timestamp carried by a message from another node.

        Returns:
            A timestamp greater than ``received_ts`` and than every earlier one of this clock.

        Raises:
            ValueError: ``received_ts`` is negative or does not fit in 64 bits.
        """
        if not 0 <= received_ts < MAX_TIMESTAMP:
            raise ValueError(f"received timestamp {received_ts} is out of range")
        with self._lock:
            return self._tick(received_ts)

    def _tick(self, floor: int) -> int:
        ts = max(hlc(self.physical_ms()), self._last + 1, floor + 1)
        if ts > MAX_TIMESTAMP:
            raise OverflowError("the hybrid logical clock ran past 64 bits")
        self._last = ts
        return ts


class ManualClock(HybridClock):
    """A hybrid clock whose wall clock moves only when a test moves it.

    ``wait_until`` on a manual clock wakes as soon as the time is moved, so tests never sleep.
    Moving the wall clock backwards is allowed (it simulates a stepped clock); timestamps stay
    monotonic regardless.

    Args:
        start_ms: the initial wall-clock reading.
        offset_ms: added to every reading, as for ``HybridClock``.
    """

    def __init__(self, start_ms: int = 1_000_000, *, offset_ms: int = 0) -> None:
        super().__init__(offset_ms=offset_ms, source_ms=self._read)
        self._wall_ms = start_ms
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._waiters_lock = threading.Lock()

    def _read(self) -> int:
        return self._wall_ms

    def set(self, ms: int) -> None:
        """Set the wall clock to ``ms`` and wake every ``wait_until`` on this clock."""
        self._wall_ms = ms
        self._wake()

    def advance(self, ms: int) -> None:
        """Move the wall clock forward by ``ms`` and wake every ``wait_until`` on this clock."""
        if ms < 0:
            raise ValueError(f"advance({ms}): use set() to move the clock backwards")
        self.set(self._wall_ms + ms)

    def update(self, received_ts: int) -> int:
        """Tick past ``received_ts`` (see ``HybridClock.update``) and wake waiters."""
        ts = super().update(received_ts)
        self._wake()
        return ts

    def _wake(self) -> None:
        with self._waiters_lock:
            waiters = list(self._waiters)
        for loop, event in waiters:
            # A RuntimeError means that waiter's loop is closed: nobody is left to wake.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(event.set)

    async def reach(self, ts: int) -> int:
        """Wait until a test moves this clock to ``ts`` or later; return ``now()`` then.

        Args:
            ts: the timestamp to reach.

        Returns:
            The first ``now()`` reading that is ``>= ts``.
        """
        event = asyncio.Event()
        entry = (asyncio.get_running_loop(), event)
        with self._waiters_lock:
            self._waiters.add(entry)
        try:
            # peek() instead of now(): waiting must not consume timestamps.
            while self.peek() < ts:
                await event.wait()
                event.clear()
        finally:
            with self._waiters_lock:
                self._waiters.discard(entry)
        return self.now()


async def wait_until(clock: Clock, ts: int, *, max_step_ms: int = 50) -> int:
    """Wait until ``clock.now() >= ts`` and return that reading.

    On a ``ManualClock`` this waits for the test to move the clock; otherwise it sleeps until
    the wall clock should have reached ``ts``, in steps of at most ``max_step_ms`` so that a
    clock that jumps (or is ticked by ``update``) is noticed promptly.

    Args:
        clock: the clock to read.
        ts: the timestamp to reach.
        max_step_ms: the longest single sleep, in milliseconds.

    Returns:
        The first ``clock.now()`` reading that is ``>= ts``.
    """
    if max_step_ms <= 0:
        raise ValueError("max_step_ms must be positive")
    if isinstance(clock, ManualClock):
        return await clock.reach(ts)
    while True:
        reading = clock.now()
        if reading >= ts:
            return reading
        remaining_ms = physical_of(ts) - physical_of(reading)
        await asyncio.sleep(min(max(remaining_ms, 1), max_step_ms) / 1000)

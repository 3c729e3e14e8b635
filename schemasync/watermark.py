"""``Watermark``: a value that only rises, with async waiters for "at least X".

The catalog uses two: the version applied locally (with its listeners done) and the safe time
this node has observed. Ignite calls the same thing a ``PendingComparableValuesTracker``.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools


class Watermark:
    """A monotonic integer; ``wait_for(x)`` resolves once it is ``>= x``.

    Not thread-safe: advance and wait on the event loop that owns it.
    """

    def __init__(self, value: int = 0) -> None:
        self._value = value
        self._waiters: list[tuple[int, int, asyncio.Future[int]]] = []
        self._order = itertools.count()

    @property
    def value(self) -> int:
        """Return the current value."""
        return self._value

    def advance(self, value: int) -> None:
        """Raise the value to ``value`` (a lower value is ignored) and wake satisfied waiters."""
        if value <= self._value:
            return
        self._value = value
        while self._waiters and self._waiters[0][0] <= value:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():
                future.set_result(value)

    async def wait_for(self, target: int) -> int:
        """Wait until the value is at least ``target``; return the value then."""
        if self._value >= target:
            return self._value
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (target, next(self._order), future))
        return await future

    def fail_waiters(self, error: BaseException) -> None:
        """Fail every current waiter with ``error`` (the source of new values is gone)."""
        waiters, self._waiters = self._waiters, []
        for _, _, future in waiters:
            if not future.done():
                future.set_exception(error)

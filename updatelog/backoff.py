"""``Backoff``: the pauses between attempts of one operation, bounded by its deadline."""

from __future__ import annotations

import asyncio


class Backoff:
    """Pauses that double from ``first_s`` up to ``cap_s``, for ``timeout_s`` from now.

    Create it inside the running event loop, at the start of the operation it bounds.
    """

    def __init__(self, timeout_s: float, *, first_s: float = 0.02, cap_s: float = 0.25) -> None:
        self._loop = asyncio.get_running_loop()
        self.deadline = self._loop.time() + timeout_s
        self.delay = first_s
        self._cap_s = cap_s

    def exhausted(self) -> bool:
        """Return whether the next pause would end past the deadline."""
        return self._loop.time() + self.delay >= self.deadline

    async def pause(self) -> None:
        """Sleep for the current delay, then double it (up to the cap)."""
        await asyncio.sleep(self.delay)
        self.delay = min(self.delay * 2, self._cap_s)

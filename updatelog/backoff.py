"""Pauses between attempts: ``Backoff`` (bounded by a deadline) and ``jittered`` (by attempt).

``Backoff`` paces the repeats of one store request whose answer was lost; ``jittered`` spreads
out writers that lost a compare-and-set to each other (``updatelog.optimistic``, and the Spark
source's commit rounds), so that they do not collide again in step.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence

from updatelog.errors import (
    StorageUnavailableError,
    StoreQuotaExceededError,
    UnknownOutcomeError,
    UpdateTooLargeError,
)
from updatelog.kv import Compare, KvStore, Op, TxnResult


def jittered(attempt: int, *, first_s: float, cap_s: float) -> float:
    """Return a random pause before retry ``attempt`` (0 for the first) of a contended write.

    Uniform in ``[0, min(cap_s, first_s * 2**attempt)]``: the bound doubles per attempt ("full
    jitter"), so writers that keep colliding spread out and one of them gets through.
    """
    return random.uniform(0, min(cap_s, first_s * 2**attempt))


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


async def send_repeatable(
    store: KvStore,
    what: str,
    compares: Sequence[Compare],
    success: Sequence[Op],
    failure: Sequence[Op] = (),
) -> TxnResult:
    """Send a transaction whose repeat is harmless until it answers or the store's timeout.

    A repeat after a lost answer finds its own effect through its compares (a request key now
    present, a value now raised), so the caller reads the answer of whichever attempt landed.

    Raises:
        StorageUnavailableError: no attempt got an answer in time.
    """
    backoff = Backoff(store.timeout_s)
    ambiguous = False
    while True:
        try:
            return await store.txn(compares, success, failure)
        except UnknownOutcomeError as e:
            ambiguous = True
            if backoff.exhausted():
                raise StorageUnavailableError(
                    f"{store}: {what} got no answer within {store.timeout_s:g}s ({e.message})"
                ) from e
        except (UpdateTooLargeError, StoreQuotaExceededError) as e:
            if not ambiguous:
                raise
            # Refused now, but an earlier attempt whose answer was lost may have landed.
            raise StorageUnavailableError(
                f"{e.message}; an earlier attempt may have committed"
            ) from e
        await backoff.pause()

"""``append_optimistically``: the one compare-and-set retry loop every writer of the log uses.

As Ignite's ``CatalogManagerImpl.saveUpdate``: a round reads the current state, builds what to
write on top of it and appends it with compare-and-set. A round that lost (another writer got
there first) learns what won (``catch_up``: the winner's version applied here, or the clock
moved past the log's safe time) and the next round starts over on top of it, after a jittered
pause (``backoff.jittered``) so that writers that keep colliding spread out. The rounds are
bounded: a conflict storm ends with the caller's "gave up", never a livelock.

DDL (``CatalogManager``) and data commits (``DataCommits``) both run their rounds here; what a
round reads and writes, and which error "gave up" is, stay theirs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from updatelog.backoff import jittered
from updatelog.log import AppendConflict, AppendResult

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Retry:
    """What a round that did not finish returns: run another.

    Attributes:
        pause: back off before it (False: nothing stood in the way that waiting would help,
            e.g. only part of a group was answered).
    """

    pause: bool = True


async def append_optimistically(
    round_: Callable[[int], Awaitable[T | Retry]],
    gave_up: Callable[[], T],
    *,
    max_attempts: int,
    first_s: float = 0.002,
    cap_s: float = 0.2,
) -> T:
    """Run ``round_`` until it returns its result, at most ``max_attempts`` times.

    Args:
        round_: one round, given its attempt number (0 first): read, build, append with
            compare-and-set; its result, or ``Retry`` when it lost (after ``catch_up``).
        gave_up: what every round losing comes to; it may raise instead.
        max_attempts: how many rounds to run at most.
        first_s: the bound of the first pause; it doubles per attempt.
        cap_s: the longest pause.

    Returns:
        The first result a round returned, else ``gave_up()``.
    """
    for attempt in range(max_attempts):
        outcome = await round_(attempt)
        if not isinstance(outcome, Retry):
            return outcome
        if outcome.pause:
            await asyncio.sleep(jittered(attempt, first_s=first_s, cap_s=cap_s))
    return gave_up()


async def catch_up(
    result: AppendResult,
    advance_clock: Callable[[int], object],
    wait_for_winner: Callable[[int], Awaitable[object]],
) -> None:
    """Learn what won a lost compare-and-set, so that the next round builds on top of it.

    A ``SAFE_TIME`` conflict moves the clock past the log's safe time (the next proposal is
    above it); a ``VERSION`` conflict waits for the winner's version (``result.version``).
    Other conflicts (a request id already recorded) are the round's to answer.
    """
    if result.conflict is AppendConflict.SAFE_TIME:
        advance_clock(result.safe_time)
    elif result.conflict is AppendConflict.VERSION:
        await wait_for_winner(result.version)

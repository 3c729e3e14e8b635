"""The one optimistic-append loop: bounded rounds, pauses only when asked, catching up."""

from __future__ import annotations

import asyncio

import pytest

from updatelog.backoff import jittered
from updatelog.log import AppendConflict, AppendResult
from updatelog.optimistic import Retry, append_optimistically, catch_up


def test_the_first_result_ends_the_rounds() -> None:
    seen: list[int] = []

    async def round_(attempt: int) -> str | Retry:
        seen.append(attempt)
        return "done" if attempt == 2 else Retry(pause=False)

    result = asyncio.run(append_optimistically(round_, lambda: "gave up", max_attempts=5))
    assert (result, seen) == ("done", [0, 1, 2])


def test_rounds_are_bounded_and_end_in_gave_up() -> None:
    async def round_(attempt: int) -> str | Retry:
        return Retry()

    def gave_up() -> str:
        raise RuntimeError("gave up")

    with pytest.raises(RuntimeError, match="gave up"):
        asyncio.run(append_optimistically(round_, gave_up, max_attempts=3, first_s=0, cap_s=0))


def test_jittered_pauses_double_up_to_the_cap() -> None:
    assert all(
        0 <= jittered(a, first_s=0.01, cap_s=1.0) <= min(1.0, 0.01 * 2**a) for a in range(12)
    )


def test_catch_up_follows_the_winner_or_the_safe_time() -> None:
    clock: list[int] = []
    waited: list[int] = []

    async def wait(version: int) -> None:
        waited.append(version)

    async def scenario() -> None:
        await catch_up(AppendResult(False, 7, 90, AppendConflict.VERSION), clock.append, wait)
        await catch_up(AppendResult(False, 7, 95, AppendConflict.SAFE_TIME), clock.append, wait)

    asyncio.run(scenario())
    assert (waited, clock) == ([7], [95])

"""Hybrid logical clocks: monotonic, ticking past received timestamps, manual time for tests."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemasync.clock import (
    LOGICAL_MASK,
    Clock,
    HybridClock,
    ManualClock,
    describe_ts,
    hlc,
    logical_of,
    physical_of,
    wait_until,
)


def test_timestamp_parts() -> None:
    ts = hlc(1_700_000_000_123, 42)
    assert ts == (1_700_000_000_123 << 16) | 42
    assert (physical_of(ts), logical_of(ts)) == (1_700_000_000_123, 42)
    assert hlc(5) == 5 << 16
    for bad in ((-1, 0), (1, -1), (1, LOGICAL_MASK + 1), (2**48, 0)):
        with pytest.raises(ValueError):
            hlc(*bad)


@given(
    st.integers(0, 2**48 - 1),
    st.integers(0, LOGICAL_MASK),
    st.integers(0, 2**48 - 1),
    st.integers(0, LOGICAL_MASK),
)
def test_timestamps_order_like_their_parts(p1: int, l1: int, p2: int, l2: int) -> None:
    assert (hlc(p1, l1) < hlc(p2, l2)) == ((p1, l1) < (p2, l2))


def test_both_clocks_satisfy_the_protocol() -> None:
    assert isinstance(HybridClock(), Clock)
    assert isinstance(ManualClock(), Clock)


def test_hybrid_clock_follows_the_wall_clock() -> None:
    before = time.time_ns() // 1_000_000
    ts = HybridClock().now()
    after = time.time_ns() // 1_000_000
    assert before <= physical_of(ts) <= after


def test_offset_skews_the_physical_part() -> None:
    wall = [1_000_000]
    clock = HybridClock(offset_ms=-250, source_ms=lambda: wall[0])
    assert clock.physical_ms() == 999_750
    assert clock.now() == hlc(999_750)


def test_now_is_strictly_monotonic_when_the_wall_clock_stands_still() -> None:
    clock = ManualClock(start_ms=10_000)
    stamps = [clock.now() for _ in range(5)]
    assert stamps == [hlc(10_000, i) for i in range(5)]


def test_now_is_monotonic_when_the_wall_clock_steps_back() -> None:
    clock = ManualClock(start_ms=10_000)
    first = clock.now()
    clock.set(5_000)
    second = clock.now()
    assert second == first + 1
    clock.set(10_001)
    assert clock.now() == hlc(10_001)


def test_logical_overflow_borrows_the_next_millisecond() -> None:
    clock = ManualClock(start_ms=10_000)
    assert clock.update(hlc(10_000, LOGICAL_MASK - 1)) == hlc(10_000, LOGICAL_MASK)
    assert clock.now() == hlc(10_001, 0)
    assert clock.now() == hlc(10_001, 1)
    # Once the wall clock reaches the borrowed millisecond, it carries on from there.
    clock.advance(1)
    assert clock.now() == hlc(10_001, 2)
    clock.advance(1)
    assert clock.now() == hlc(10_002)


def test_update_ticks_past_a_timestamp_from_a_clock_ahead() -> None:
    clock = ManualClock(start_ms=10_000)
    remote = hlc(12_000, 7)
    assert clock.update(remote) == remote + 1
    assert clock.now() == remote + 2


def test_update_with_an_older_timestamp_still_ticks() -> None:
    clock = ManualClock(start_ms=10_000)
    local = clock.now()
    assert clock.update(hlc(9_000)) == local + 1


def test_update_refuses_out_of_range_timestamps() -> None:
    clock = HybridClock()
    for bad in (-1, 2**64 - 1, 2**64):
        with pytest.raises(ValueError):
            clock.update(bad)


def test_causality_between_two_skewed_nodes() -> None:
    wall = [50_000]
    fast = HybridClock(offset_ms=300, source_ms=lambda: wall[0])
    slow = HybridClock(offset_ms=-300, source_ms=lambda: wall[0])
    sent = fast.now()
    received = slow.update(sent)
    assert received > sent
    assert slow.now() > received
    assert fast.update(slow.now()) > received


def test_peek_does_not_tick() -> None:
    clock = ManualClock(start_ms=10_000)
    clock.now()
    assert clock.peek() == clock.peek() == hlc(10_000, 1)
    assert clock.now() == hlc(10_000, 1)


def test_now_is_unique_across_threads() -> None:
    clock = HybridClock()
    results: list[list[int]] = [[] for _ in range(4)]
    barrier = threading.Barrier(4)

    def work(out: list[int]) -> None:
        barrier.wait(10)
        for _ in range(5_000):
            out.append(clock.now())

    threads = [threading.Thread(target=work, args=(out,)) for out in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    stamps = [ts for out in results for ts in out]
    assert len(stamps) == 20_000
    assert len(set(stamps)) == len(stamps)
    assert all(out == sorted(out) for out in results)


def test_advance_refuses_going_back() -> None:
    with pytest.raises(ValueError, match="set"):
        ManualClock().advance(-1)


def test_wait_until_on_a_manual_clock_wakes_when_time_moves() -> None:
    async def scenario() -> None:
        clock = ManualClock(start_ms=1_000)
        target = hlc(1_500)
        waiter = asyncio.ensure_future(wait_until(clock, target))
        await asyncio.sleep(0)
        clock.advance(200)
        await asyncio.sleep(0)
        assert not waiter.done()
        clock.advance(300)
        assert await asyncio.wait_for(waiter, 5) == target
        assert clock.now() == target + 1

    asyncio.run(scenario())


def test_wait_until_on_a_manual_clock_wakes_on_a_received_timestamp() -> None:
    async def scenario() -> None:
        clock = ManualClock(start_ms=1_000)
        waiter = asyncio.ensure_future(wait_until(clock, hlc(2_000)))
        await asyncio.sleep(0)
        clock.update(hlc(2_000))
        assert await asyncio.wait_for(waiter, 5) >= hlc(2_000)

    asyncio.run(scenario())


def test_wait_until_on_a_manual_clock_moved_by_another_thread() -> None:
    async def scenario() -> None:
        clock = ManualClock(start_ms=1_000)
        waiter = asyncio.ensure_future(wait_until(clock, hlc(1_001)))
        await asyncio.sleep(0)
        mover = threading.Thread(target=clock.advance, args=(1,))
        mover.start()
        assert await asyncio.wait_for(waiter, 5) == hlc(1_001)
        mover.join(5)

    asyncio.run(scenario())


def test_wait_until_a_past_timestamp_returns_at_once() -> None:
    async def scenario() -> None:
        clock = HybridClock()
        past = clock.now()
        assert await asyncio.wait_for(wait_until(clock, past), 1) > past

    asyncio.run(scenario())


def test_wait_until_on_a_real_clock_sleeps_until_then() -> None:
    async def scenario() -> None:
        clock = HybridClock()
        target = clock.now() + hlc(15)
        reached = await asyncio.wait_for(wait_until(clock, target, max_step_ms=5), 5)
        assert reached >= target
        assert physical_of(reached) - physical_of(target) < 1_000

    asyncio.run(scenario())


def test_timestamps_in_messages_read_as_rfc_3339_with_the_hybrid_value() -> None:
    ts = hlc(1_764_000_000_123, 2)
    assert describe_ts(ts) == f"2025-11-24T16:00:00.123Z (hybrid {ts})"
    assert describe_ts(0) == "1970-01-01T00:00:00.000Z (hybrid 0)"

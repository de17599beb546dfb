"""The fake clock the work-queue tests stand on, and the real clock's timers."""

from __future__ import annotations

import asyncio

import pytest

from kubeloop.runtime.clock import REAL_CLOCK
from kubeloop.testing.clock import FakeClock


def test_step_runs_due_timers_in_deadline_order_each_at_its_own_time() -> None:
    clock = FakeClock(100.0)
    seen: list[tuple[str, float]] = []
    clock.call_at(102.0, lambda: seen.append(("late", clock.now())))
    clock.call_at(101.0, lambda: seen.append(("early", clock.now())))
    clock.call_at(105.0, lambda: seen.append(("beyond", clock.now())))
    clock.step(3)
    assert seen == [("early", 101.0), ("late", 102.0)]
    assert clock.now() == 103.0
    assert clock.waiter_count() == 1


def test_timers_scheduled_by_a_callback_fire_within_the_same_step() -> None:
    clock = FakeClock()
    seen: list[float] = []

    def tick() -> None:
        seen.append(clock.now())
        if len(seen) < 3:
            clock.call_at(clock.now() + 1, tick)

    clock.call_at(1, tick)
    clock.step(10)
    assert seen == [1, 2, 3]


def test_cancelled_timers_never_run_and_stop_counting_as_waiters() -> None:
    clock = FakeClock()
    seen: list[str] = []
    timer = clock.call_at(1, lambda: seen.append("fired"))
    assert clock.has_waiters()
    timer.cancel()
    timer.cancel()
    assert not clock.has_waiters()
    clock.step(2)
    assert seen == []


def test_a_past_deadline_runs_at_the_next_step_even_of_zero() -> None:
    clock = FakeClock(5)
    seen: list[str] = []
    clock.call_at(1, lambda: seen.append("fired"))
    assert seen == []
    clock.step(0)
    assert seen == ["fired"]


def test_time_never_steps_backwards_but_can_be_set_back() -> None:
    clock = FakeClock(10)
    with pytest.raises(ValueError, match="backwards"):
        clock.step(-1)
    seen: list[str] = []
    clock.call_at(11, lambda: seen.append("fired"))
    clock.set_time(5)
    assert clock.now() == 5
    assert seen == []
    clock.set_time(11)
    assert seen == ["fired"]


async def test_sleepers_wake_after_the_step_that_reaches_their_deadline() -> None:
    clock = FakeClock()
    sleeper = asyncio.create_task(clock.sleep(2))
    await clock.wait_for_waiters()
    clock.step(1.5)
    await asyncio.sleep(0)
    assert not sleeper.done()
    clock.step(0.5)
    await asyncio.wait_for(sleeper, timeout=5)
    assert not clock.has_waiters()


async def test_a_cancelled_sleeper_withdraws_its_waiter() -> None:
    clock = FakeClock()
    sleeper = asyncio.create_task(clock.sleep(2))
    await clock.wait_for_waiters()
    sleeper.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sleeper
    assert not clock.has_waiters()


async def test_zero_sleep_returns_without_a_waiter() -> None:
    clock = FakeClock()
    await clock.sleep(0)
    assert not clock.has_waiters()


async def test_waiting_for_waiters_that_never_come_fails_instead_of_hanging() -> None:
    with pytest.raises(TimeoutError, match="expected at least 1"):
        await FakeClock().wait_for_waiters(max_yields=5)


async def test_real_clock_timer_and_sleep() -> None:
    fired = asyncio.Event()
    started = REAL_CLOCK.now()
    REAL_CLOCK.call_at(started + 0.001, fired.set)
    await asyncio.wait_for(fired.wait(), timeout=5)
    assert REAL_CLOCK.now() >= started + 0.001
    cancelled = REAL_CLOCK.call_at(REAL_CLOCK.now(), fired.clear)
    cancelled.cancel()
    await REAL_CLOCK.sleep(0)
    assert fired.is_set()

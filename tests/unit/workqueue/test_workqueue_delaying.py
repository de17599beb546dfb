"""The delaying queue under a fake clock: upstream's cases restated, plus shutdown and edges."""

from __future__ import annotations

import asyncio

import pytest

from kubeloop.runtime.workqueue import DelayingQueue
from kubeloop.testing.clock import FakeClock


async def _take(queue: DelayingQueue[str]) -> str:
    result = await queue.get()
    assert result[1] is False
    queue.done(result[0])
    return result[0]


async def test_item_appears_once_its_delay_has_passed(fake_clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock)
    queue.add_after("foo", 0.050)
    assert len(queue) == 0
    assert queue.waiting_count() == 1

    fake_clock.step(0.060)
    assert len(queue) == 1
    assert await _take(queue) == "foo"

    fake_clock.step(10)
    assert len(queue) == 0, "nothing fires twice, not even after the old 10 s heartbeat"
    assert not fake_clock.has_waiters()


@pytest.mark.parametrize(
    ("first", "second", "fires_by", "then_step"),
    [
        (0.050, 0.070, 0.060, 0.020),  # a later request for a waiting item is dropped
        (0.050, 0.030, 0.040, 0.020),  # an earlier request replaces the waiting one
    ],
    ids=["later-dropped", "earlier-wins"],
)
async def test_an_item_waits_once_for_its_earliest_time(
    fake_clock: FakeClock, first: float, second: float, fires_by: float, then_step: float
) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock)
    queue.add_after("foo", first)
    queue.add_after("foo", second)
    assert len(queue) == 0
    assert queue.waiting_count() == 1

    fake_clock.step(fires_by)
    assert len(queue) == 1
    assert await _take(queue) == "foo"

    fake_clock.step(then_step)
    assert len(queue) == 0, "the merged request must not fire a second time"


async def test_earlier_item_fires_first_and_later_ones_keep_waiting(fake_clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock)
    queue.add_after("foo", 1)
    queue.add_after("bar", 0.050)
    assert len(queue) == 0

    fake_clock.step(0.060)
    assert len(queue) == 1
    assert await _take(queue) == "bar"

    queue.add_after("baz", 2)
    fake_clock.step(1)
    assert len(queue) == 1
    assert await _take(queue) == "foo"

    fake_clock.step(2)
    assert len(queue) == 1
    assert await _take(queue) == "baz"


async def test_items_come_out_in_ready_time_order(fake_clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock)
    queue.add_after("foo", 1)
    queue.add_after("bar", 0.5)
    queue.add_after("baz", 0.25)
    assert len(queue) == 0

    fake_clock.step(2)
    assert len(queue) == 3
    assert [await _take(queue) for _ in range(3)] == ["baz", "bar", "foo"]


async def test_a_later_item_is_not_added_with_an_earlier_one(fake_clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock)
    queue.add_after("foo", 1)
    queue.add_after("bar", 1.2)
    fake_clock.step(1)
    assert list(queue._queue) == ["foo"]
    fake_clock.step(0.199)
    assert len(queue) == 1
    fake_clock.step(0.001)
    assert list(queue._queue) == ["foo", "bar"]


@pytest.mark.parametrize("delay", [0, -1, -0.001])
def test_no_delay_adds_at_once(fake_clock: FakeClock, delay: float) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock)
    queue.add_after("foo", delay)
    assert len(queue) == 1
    assert not fake_clock.has_waiters()


def test_equal_ready_times_keep_arrival_order(fake_clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock)
    for item in ("c", "a", "b"):
        queue.add_after(item, 1)
    fake_clock.step(1)
    assert list(queue._queue) == ["c", "a", "b"]


async def test_parked_item_that_is_also_queued_is_processed_once(fake_clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock)
    queue.add_after("foo", 1)
    queue.add("foo")
    fake_clock.step(1)
    assert len(queue) == 1, "the timer's add de-duplicates against the queued item"


def test_shutdown_drops_parked_items_and_ignores_new_ones(fake_clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock)
    queue.add_after("foo", 1)
    queue.shutdown()
    assert not fake_clock.has_waiters()
    queue.add_after("bar", 1)
    queue.add_after("baz", 0)
    fake_clock.step(5)
    assert len(queue) == 0
    assert queue.waiting_count() == 0


async def test_drain_shutdown_also_stops_the_timer(fake_clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock)
    queue.add_after("foo", 1)
    await queue.shutdown_with_drain()
    fake_clock.step(5)
    assert len(queue) == 0
    assert not fake_clock.has_waiters()


async def test_a_waiting_worker_wakes_when_the_timer_fires(fake_clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock)
    worker = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.add_after("foo", 0.5)
    fake_clock.step(0.5)
    assert await asyncio.wait_for(worker, timeout=5) == ("foo", False)


async def test_real_clock_fires_after_the_delay() -> None:
    queue: DelayingQueue[str] = DelayingQueue()
    queue.add_after("foo", 0.001)
    assert await asyncio.wait_for(queue.get(), timeout=5) == ("foo", False)
    queue.shutdown()

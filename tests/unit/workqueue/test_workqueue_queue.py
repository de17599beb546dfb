"""The basic work queue: upstream's queue cases restated, plus the documented misuse."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Awaitable, Callable, Hashable
from typing import TypeVar

import pytest

from kubeloop.runtime.workqueue import WorkQueue

_Item = TypeVar("_Item", bound=Hashable)
ShutdownMode = Callable[[WorkQueue[object]], Awaitable[None]]


async def _shutdown(queue: WorkQueue[object]) -> None:
    queue.shutdown()


async def _shutdown_with_drain(queue: WorkQueue[object]) -> None:
    await queue.shutdown_with_drain()


SHUTDOWN_MODES = pytest.mark.parametrize("shut_down", [_shutdown, _shutdown_with_drain], ids=["plain", "drain"])


async def _yield(times: int = 1) -> None:
    for _ in range(times):
        await asyncio.sleep(0)


async def _until(condition: Callable[[], bool], rounds: int = 10_000) -> None:
    """Yield to the other tasks until `condition()` holds; fail instead of hanging."""
    for _ in range(rounds):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never became true")


async def _get_item(queue: WorkQueue[_Item]) -> _Item:
    result = await queue.get()
    assert result[1] is False, "queue reported shutdown unexpectedly"
    return result[0]


@SHUTDOWN_MODES
async def test_many_producers_and_consumers_then_adds_after_shutdown_are_ignored(
    shut_down: ShutdownMode,
) -> None:
    queue: WorkQueue[object] = WorkQueue()
    received: list[object] = []

    async def produce(number: int) -> None:
        for _ in range(50):
            queue.add(number)
            await _yield()

    async def consume() -> None:
        while True:
            result = await queue.get()
            if result[1]:
                return
            received.append(result[0])
            await _yield(3)
            queue.done(result[0])

    consumers = [asyncio.create_task(consume()) for _ in range(10)]
    await asyncio.gather(*(produce(number) for number in range(50)))
    await shut_down(queue)
    queue.add("added after shutdown")
    await asyncio.gather(*consumers)

    assert "added after shutdown" not in received
    assert set(received) == set(range(50))
    assert len(queue) == 0


@SHUTDOWN_MODES
async def test_items_added_while_processing_are_processed_again(shut_down: ShutdownMode) -> None:
    queue: WorkQueue[object] = WorkQueue()
    counts: dict[object, int] = {}

    async def consume() -> None:
        while True:
            result = await queue.get()
            if result[1]:
                return
            item = result[0]
            counts[item] = counts.get(item, 0) + 1
            if counts[item] == 1:
                queue.add(item)
            await _yield()
            queue.done(item)

    consumers = [asyncio.create_task(consume()) for _ in range(10)]
    for number in range(50):
        queue.add(number)
    await _until(lambda: sum(counts.values()) == 100)
    await shut_down(queue)
    await asyncio.gather(*consumers)

    assert counts == dict.fromkeys(range(50), 2)
    assert len(queue) == 0


def test_len_counts_distinct_waiting_items() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("foo")
    assert len(queue) == 1
    queue.add("bar")
    assert len(queue) == 2
    queue.add("foo")
    assert len(queue) == 2


async def test_item_added_while_held_comes_back_after_done() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("foo")
    assert await _get_item(queue) == "foo"
    queue.add("foo")
    assert len(queue) == 0, "an item held by a worker is not queued until done"
    queue.done("foo")
    assert await _get_item(queue) == "foo"
    queue.done("foo")
    assert len(queue) == 0


async def test_duplicate_adds_collapse_into_one_get() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("bar")
    queue.add("bar")
    assert await _get_item(queue) == "bar"
    queue.done("bar")
    assert len(queue) == 0


async def test_second_worker_waits_while_the_item_is_held() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("foo")
    assert await _get_item(queue) == "foo"
    queue.add("foo")
    queue.add("foo")

    second = asyncio.create_task(queue.get())
    await _yield(10)
    assert not second.done(), "the same item must not be handed to a second worker"

    queue.done("foo")
    assert await second == ("foo", False)
    queue.done("foo")
    assert len(queue) == 0


async def test_shutdown_with_drain_waits_for_items_being_processed() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("foo")
    queue.add("bar")
    first = await _get_item(queue)
    second = await _get_item(queue)

    drain = asyncio.create_task(queue.shutdown_with_drain())
    await _yield(5)
    assert await queue.get() == (None, True)
    assert not drain.done()

    queue.done(first)
    await _yield(5)
    assert not drain.done(), "one item is still being processed"
    queue.done(second)
    await asyncio.wait_for(drain, timeout=5)


async def test_plain_shutdown_does_not_wait_for_items_being_processed() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("foo")
    queue.add("bar")
    await _get_item(queue)
    await _get_item(queue)
    queue.shutdown()
    assert queue.shutting_down()
    assert await queue.get() == (None, True)


async def test_shutdown_forces_a_waiting_drain_to_return() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("foo")
    queue.add("bar")
    await _get_item(queue)
    await _get_item(queue)

    drain = asyncio.create_task(queue.shutdown_with_drain())
    assert await queue.get() == (None, True)
    await _yield(5)
    assert not drain.done()
    queue.shutdown()
    await asyncio.wait_for(drain, timeout=5)


async def test_drain_hands_out_an_item_made_dirty_while_held() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("foo")
    assert await _get_item(queue) == "foo"
    queue.add("foo")

    drain = asyncio.create_task(queue.shutdown_with_drain())
    assert await queue.get() == (None, True), "the re-added item waits for done, the FIFO is empty"

    queue.done("foo")
    assert await queue.get() == ("foo", False), "done re-queues a dirty item even while shutting down"
    queue.done("foo")
    assert await queue.get() == (None, True)
    await asyncio.wait_for(drain, timeout=5)


class _Key:
    """A hashable object that a weak reference can watch."""


@pytest.mark.parametrize("name", [None, "gc-test"])
async def test_queue_keeps_no_reference_to_finished_items(name: str | None) -> None:
    from prometheus_client import CollectorRegistry

    from kubeloop.runtime.workqueue import PrometheusMetricsProvider

    provider = PrometheusMetricsProvider(CollectorRegistry())
    queue: WorkQueue[_Key] = WorkQueue(name, metrics_provider=provider)
    key = _Key()
    watcher = weakref.ref(key)
    queue.add(key)
    result = await queue.get()
    assert result[0] is key
    queue.done(key)
    del key, result
    gc.collect()
    assert watcher() is None
    queue.shutdown()


async def test_get_after_shutdown_returns_queued_items_then_reports_shutdown() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.add("b")
    queue.shutdown()
    queue.add("c")
    assert await queue.get() == ("a", False)
    assert await queue.get() == ("b", False)
    assert await queue.get() == (None, True)
    assert await queue.get() == (None, True)


async def test_waiting_workers_are_released_by_shutdown() -> None:
    queue: WorkQueue[str] = WorkQueue()
    workers = [asyncio.create_task(queue.get()) for _ in range(3)]
    await _yield()
    queue.shutdown()
    assert await asyncio.gather(*workers) == [(None, True)] * 3


async def test_done_of_an_item_never_handed_out_is_harmless() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.done("never-added")
    assert len(queue) == 0
    queue.add("a")
    assert await _get_item(queue) == "a"
    queue.done("a")
    queue.done("a")
    assert len(queue) == 0


async def test_done_of_a_queued_item_queues_it_a_second_time_as_in_client_go() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.done("a")
    assert len(queue) == 2
    assert await queue.get() == ("a", False)
    assert await queue.get() == ("a", False)


async def test_fifo_order_and_readd_goes_to_the_back() -> None:
    queue: WorkQueue[str] = WorkQueue()
    for item in ("a", "b", "c"):
        queue.add(item)
    assert await _get_item(queue) == "a"
    queue.add("a")
    queue.done("a")
    assert [await _get_item(queue) for _ in range(3)] == ["b", "c", "a"]


async def test_a_burst_of_adds_keeps_every_idle_worker_busy() -> None:
    queue: WorkQueue[str] = WorkQueue()
    release = asyncio.Event()
    held: list[str] = []

    async def slow_worker() -> None:
        item = await _get_item(queue)
        held.append(item)
        await release.wait()
        queue.done(item)

    workers = [asyncio.create_task(slow_worker()) for _ in range(3)]
    await _yield()
    for item in ("a", "b", "c"):
        queue.add(item)
    await _until(lambda: len(held) == 3)
    assert sorted(held) == ["a", "b", "c"]
    release.set()
    await asyncio.gather(*workers)


async def test_a_cancelled_worker_passes_its_wake_up_on() -> None:
    queue: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await _yield()
    queue.add("a")
    first.cancel()
    assert await asyncio.wait_for(second, timeout=5) == ("a", False)
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_shutdown_is_idempotent() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.shutdown()
    queue.shutdown()
    await queue.shutdown_with_drain()
    assert queue.shutting_down()

"""Property tests: many concurrent workers under random add / add_after / clock / yield programs.

Checked on every run:
- no item is held by two workers at once;
- nothing is lost: every item added after its last `get` started is handed out again;
- nothing is duplicated: between two hand-outs of an item there is an add of it;
- `shutdown_with_drain` returns only when no worker holds an item;
and, single-worker, the queue's order and length match a plain model of the design notes.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.runtime.workqueue import DelayingQueue, WorkQueue
from kubeloop.testing.clock import FakeClock

KEYS = st.integers(min_value=0, max_value=7)
OPERATIONS = st.one_of(
    st.tuples(st.just("add"), KEYS),
    st.tuples(st.just("add_after"), KEYS, st.sampled_from([0.0, 0.001, 0.3, 0.5, 0.7, 1.0, 3.0])),
    st.tuples(st.just("step"), st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0, 5.0])),
    st.tuples(st.just("yield"), st.integers(min_value=1, max_value=6)),
)


@dataclass
class _History:
    """Adds and hand-outs of each key, stamped with one shared sequence number."""

    sequence: itertools.count[int] = field(default_factory=itertools.count)
    adds: dict[int, list[int]] = field(default_factory=dict)
    gets: dict[int, list[int]] = field(default_factory=dict)

    def added(self, key: int) -> None:
        self.adds.setdefault(key, []).append(next(self.sequence))

    def got(self, key: int) -> None:
        self.gets.setdefault(key, []).append(next(self.sequence))

    def check(self) -> None:
        for key, adds in self.adds.items():
            gets = self.gets.get(key, [])
            assert gets and gets[-1] > adds[-1], f"key {key}: added at {adds[-1]} but not handed out after"
        for key, gets in self.gets.items():
            adds = self.adds.get(key, [])
            previous = -1
            for handed_out in gets:
                assert any(previous < added < handed_out for added in adds), (
                    f"key {key}: handed out at {handed_out} with no add since {previous}"
                )
                previous = handed_out


async def _run_program(
    program: list[tuple[object, ...]], workers: int, hold_yields: list[int]
) -> tuple[_History, bool]:
    clock = FakeClock()
    queue: DelayingQueue[int] = DelayingQueue(clock=clock)
    history = _History()
    holding: set[int] = set()
    holds = itertools.cycle(hold_yields or [0])
    # The design's add_after rule, restated: one pending time per key, the earliest asked for.
    parked: dict[int, float] = {}

    # Each hand-out needs an add before it, so more hand-outs than adds means a runaway queue.
    most_handouts = len(program) + 8
    handouts = itertools.count(1)

    async def work() -> None:
        while True:
            result = await queue.get()
            if result[1]:
                return
            key = result[0]
            assert next(handouts) <= most_handouts, "more hand-outs than adds"
            assert key not in holding, f"key {key} handed to a second worker"
            holding.add(key)
            history.got(key)
            for _ in range(next(holds)):
                await asyncio.sleep(0)
            holding.discard(key)
            queue.done(key)

    def fire_due() -> None:
        for key, ready_at in sorted(parked.items(), key=lambda entry: entry[1]):
            if ready_at <= clock.now():
                del parked[key]
                history.added(key)
                # No worker ran since the step, so a released key must be pending right now.
                assert key in queue._dirty, f"key {key} was due at {ready_at} but not added"

    tasks = [asyncio.create_task(work()) for _ in range(workers)]
    for operation in program:
        match operation:
            case ("add", int(key)):
                history.added(key)
                queue.add(key)
            case ("add_after", int(key), float(delay)):
                queue.add_after(key, delay)
                if delay <= 0:
                    history.added(key)
                elif key not in parked or clock.now() + delay < parked[key]:
                    parked[key] = clock.now() + delay
            case ("step", float(seconds)):
                clock.step(seconds)
                fire_due()
            case ("yield", int(times)):
                for _ in range(times):
                    await asyncio.sleep(0)
        # White-box: the queue parks exactly the model's keys until exactly the model's times.
        assert {key: entry[0] for key, entry in queue._ready_at.items()} == parked
    clock.step(10.0)
    fire_due()
    assert not parked and queue.waiting_count() == 0
    # Before shutdown (which wakes every worker and would hide a lost wake-up) the workers
    # must empty the queue on their own.
    for _ in range(10_000):
        if not len(queue) and not holding:
            break
        await asyncio.sleep(0)
    for task in tasks:
        if task.done():
            task.result()  # a worker that stopped early failed a check: raise its error here
    assert not len(queue), f"{len(queue)} items left queued while workers sleep"

    # A last burst of fresh keys (so it cannot make up for a lost one), and a drain while
    # workers are in the middle of it.
    for key in range(100, 108):
        history.added(key)
        queue.add(key)
    await asyncio.sleep(0)
    await queue.shutdown_with_drain()
    drained_while_holding = bool(holding)
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
    return history, drained_while_holding


@settings(max_examples=150, deadline=None)
@given(
    program=st.lists(OPERATIONS, max_size=60),
    workers=st.integers(min_value=1, max_value=16),
    hold_yields=st.lists(st.integers(min_value=0, max_value=4), max_size=8),
)
def test_concurrent_workers_never_share_lose_or_duplicate_items(
    program: list[tuple[object, ...]], workers: int, hold_yields: list[int]
) -> None:
    history, drained_while_holding = asyncio.run(_run_program(program, workers, hold_yields))
    assert not drained_while_holding, "shutdown_with_drain returned while a worker held an item"
    history.check()


@settings(max_examples=150, deadline=None)
@given(program=st.lists(st.one_of(st.tuples(st.just("add"), KEYS), st.just(("get",)), st.just(("done",))), max_size=80))
def test_single_worker_order_and_length_match_the_model(program: list[tuple[object, ...]]) -> None:
    async def run() -> None:
        queue: WorkQueue[int] = WorkQueue()
        # The design notes' model: one FIFO, a dirty set and a processing set.
        fifo: deque[int] = deque()
        dirty: set[int] = set()
        processing: set[int] = set()
        held: deque[int] = deque()
        for operation in program:
            match operation:
                case ("add", int(key)):
                    queue.add(key)
                    if key not in dirty:
                        dirty.add(key)
                        if key not in processing:
                            fifo.append(key)
                case ("get",) if fifo:
                    expected = fifo.popleft()
                    processing.add(expected)
                    dirty.discard(expected)
                    assert await queue.get() == (expected, False)
                    held.append(expected)
                case ("done",) if held:
                    key = held.popleft()
                    queue.done(key)
                    processing.discard(key)
                    if key in dirty:
                        fifo.append(key)
            assert len(queue) == len(fifo)

    asyncio.run(run())

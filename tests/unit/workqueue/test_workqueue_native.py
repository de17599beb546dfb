"""The C work-queue core against the interpreted queue, and what is particular to it.

- Random programs of add / get / done / waiting getters / shutdown / clock steps, with and
  without metrics, run on a queue of each implementation: the same results of every get, the
  same FIFO, held and pending items after every step, the same Prometheus samples at the end.
- The core's hash table against a dict, under random sets and deletes of keys whose hashes
  collide (the backward-shift deletion).
- `get()` as asyncio sees it: a coroutine to `create_task`, lazy until awaited, not reusable.
- The choice of implementation (``KUBELOOP_WORKQUEUE``), and that the C core is built and is
  the default here, so a build that silently stops producing it fails this test.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import weakref
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from kubeloop.runtime.workqueue import PrometheusMetricsProvider, RateLimitingQueue, WorkQueue, queue_native
from kubeloop.runtime.workqueue.ratelimiters import ItemExponentialFailureRateLimiter
from kubeloop.testing.clock import FakeClock

KEYS = st.integers(min_value=0, max_value=5)
OPERATIONS = st.one_of(
    st.tuples(st.just("add"), KEYS),
    st.tuples(st.just("get")),
    st.tuples(st.just("done"), KEYS),
    st.tuples(st.just("done_held")),
    st.tuples(st.just("waiter")),
    st.tuples(st.just("step"), st.sampled_from([0.0, 0.25, 1.0])),
    st.tuples(st.just("shutdown")),
)


def _samples(registry: CollectorRegistry) -> list[tuple[str, tuple[tuple[str, str], ...], float]]:
    return sorted(
        (sample.name, tuple(sorted(sample.labels.items())), sample.value)
        for family in registry.collect()
        for sample in family.samples
    )


async def _run(implementation: str, program: list[tuple[Any, ...]], metrics: bool) -> list[object]:
    """Run `program` on a fresh queue of `implementation`; returns everything observable, step by step."""
    clock = FakeClock(100.0)
    registry = CollectorRegistry()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(queue_native.ENV_VAR, implementation)
        queue: WorkQueue[int] = WorkQueue(
            "q" if metrics else None, clock=clock, metrics_provider=PrometheusMetricsProvider(registry)
        )
    assert (queue._core is not None) == (implementation == "native")
    trace: list[object] = []
    held: list[int] = []
    waiters: list[asyncio.Task[Any]] = []

    async def settle() -> None:
        for _ in range(5):
            await asyncio.sleep(0)

    for operation in program:
        name = operation[0]
        if name == "add":
            queue.add(operation[1])
        elif name == "get":
            if len(queue) or queue.shutting_down():
                result = await queue.get()
                trace.append(("got", result))
                if not result[1]:
                    held.append(result[0])
        elif name == "done":
            queue.done(operation[1])  # possibly not held: the documented misuse
            if operation[1] in held:
                held.remove(operation[1])
        elif name == "done_held":
            if held:
                queue.done(held.pop(0))
        elif name == "waiter":
            waiters.append(asyncio.create_task(queue.get()))
        elif name == "step":
            clock.step(operation[1])
        else:
            queue.shutdown()
        await settle()
        for task in [task for task in waiters if task.done()]:
            waiters.remove(task)
            result = task.result()
            trace.append(("waiter got", result))
            if not result[1]:
                held.append(result[0])
        trace.append((list(queue._queue), sorted(queue._processing), sorted(queue._dirty), len(queue)))
    queue.shutdown()
    await settle()
    for task in waiters:
        trace.append(("left", await task))
    if metrics:
        trace.append(_samples(registry))
    return trace


@settings(max_examples=150, deadline=None)
@given(program=st.lists(OPERATIONS, max_size=40), metrics=st.booleans())
def test_native_and_python_queues_observe_the_same(program: list[tuple[Any, ...]], metrics: bool) -> None:
    native = asyncio.run(_run("native", program, metrics))
    python = asyncio.run(_run("python", program, metrics))
    assert native == python


class _Key:
    """A key whose hash is chosen (to force collisions) and whose equality is by name."""

    def __init__(self, name: int, hash_value: int) -> None:
        self.name = name
        self.hash_value = hash_value

    def __hash__(self) -> int:
        return self.hash_value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and other.name == self.name

    def __repr__(self) -> str:
        return f"_Key({self.name}, {self.hash_value})"


@settings(max_examples=200, deadline=None)
@given(
    operations=st.lists(
        st.tuples(st.sampled_from(["set", "del", "get"]), st.integers(0, 40), st.integers(0, 3)), max_size=300
    )
)
def test_core_table_is_a_mapping_like_a_dict(operations: list[tuple[str, int, int]]) -> None:
    """Few hash values for many keys: long probe runs, and deletions inside them."""
    extension = queue_native.EXTENSION
    assert extension is not None
    owner = WorkQueue[int]()  # the core holds its owner weakly: keep one alive
    table = extension.Core(owner, collections.deque(), []).dirty
    model: dict[_Key, float] = {}
    for step, (operation, name, bucket) in enumerate(operations):
        key = _Key(name, bucket * 1_000_003 if name % 2 else name % 4)
        if operation == "set":
            table[key] = float(step)
            model[key] = float(step)
        elif operation == "del":
            if key in model:
                del table[key]
                del model[key]
            else:
                with pytest.raises(KeyError):
                    del table[key]
        elif key in model:
            assert table[key] == model[key]
        else:
            with pytest.raises(KeyError):
                table[key]
        assert len(table) == len(model)
    assert sorted(table, key=repr) == sorted(model, key=repr)
    assert sorted(table.values()) == sorted(model.values())
    assert all(key in table for key in model)


async def test_get_is_taken_when_awaited_and_is_a_coroutine_to_asyncio() -> None:
    queue: WorkQueue[str] = WorkQueue()
    assert queue._core is not None
    pending = queue.get()
    queue.add("a")
    assert len(queue) == 1  # nothing is taken before the await
    assert await pending == ("a", False)
    with pytest.raises(RuntimeError):
        await pending
    task = asyncio.create_task(queue.get())  # asyncio takes it for a coroutine
    await asyncio.sleep(0)
    assert not task.done()
    queue.add("b")
    assert await task == ("b", False)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(queue.get(), 0.01)
    queue.add("c")
    assert await queue.get() == ("c", False)  # the cancelled waiter handed its wake-up on
    queue.shutdown()
    assert await queue.get() == (None, True)


async def test_get_with_an_item_ready_completes_at_its_first_send() -> None:
    """No coroutine and no suspension: the awaitable returns the item through StopIteration."""
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    pending = queue.get()
    assert not asyncio.iscoroutinefunction(queue.get)
    assert type(pending).__name__ == "Get"
    with pytest.raises(StopIteration) as stopped:
        pending.__await__().send(None)
    assert stopped.value.value == ("a", False)
    assert list(queue._processing) == ["a"]


def test_an_abandoned_queue_is_freed_without_the_cycle_collector() -> None:
    """The core holds its queue weakly: dropping the last reference frees it, as before."""
    gc.disable()
    try:
        queue: WorkQueue[str] = WorkQueue()
        assert queue._core is not None
        queue.add("a")
        gone = weakref.ref(queue)
        del queue
        assert gone() is None
    finally:
        gc.enable()


async def test_subclass_overrides_are_kept_and_share_the_core_state() -> None:
    calls: list[str] = []

    class Logged(WorkQueue[str]):
        def add(self, item: str) -> None:
            calls.append(item)
            super().add(item)  # the interpreted add, over the core's tables

    queue = Logged()
    assert queue._core is not None
    queue.add("a")
    queue.add("a")
    assert calls == ["a", "a"]
    assert await queue.get() == ("a", False)  # the C get sees the Python add
    queue.add("a")
    queue.done("a")
    assert list(queue._queue) == ["a"]


async def test_rate_limiting_queue_on_the_core() -> None:
    clock = FakeClock()
    queue: RateLimitingQueue[str] = RateLimitingQueue(ItemExponentialFailureRateLimiter(1.0, 10.0), clock=clock)
    assert queue._core is not None
    queue.add_rate_limited("a")
    assert len(queue) == 0
    clock.step(1.0)
    assert await queue.get() == ("a", False)
    queue.done("a")
    assert queue.num_requeues("a") == 1


def test_the_c_core_is_built_and_the_default_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(queue_native.ENV_VAR, raising=False)
    assert queue_native.available()
    assert WorkQueue()._core is not None
    monkeypatch.setenv(queue_native.ENV_VAR, "python")
    assert WorkQueue()._core is None

"""`WorkQueue`: client-go's de-duplicating work queue on asyncio.

State: a FIFO of items waiting to be handed out, the `dirty` set of items that need
processing, and the `processing` set of items handed out and not yet done. Every item in the
FIFO is dirty and not processing.

- `add(x)`: ignored if shutting down or if `x` is already dirty (the de-duplication). Else `x`
  becomes dirty, and it joins the FIFO unless a worker holds it right now.
- `get()`: waits for the FIFO to be non-empty, then moves its head from dirty to processing.
- `done(x)`: `x` leaves processing; if it was added again meanwhile (dirty) it joins the FIFO.

Hence no item is ever held by two workers at once, N adds before a pickup are processed once,
an add while processing is processed exactly once more after `done`, and order can differ from
arrival order (an item re-added while held goes to the back when it is done).

Not thread-safe: call every method from the event loop's thread. `add`, `done` and `shutdown`
are plain functions, so synchronous callbacks (informer handlers, timers) can call them.

Two implementations of the hot path: `add`, `get` with an item ready and `done` run in C
(`_wqcore.c`, a `Core` sharing this queue's FIFO and state) when the extension is built, and
as the interpreted methods below otherwise or under ``KUBELOOP_WORKQUEUE=python``
(`kubeloop.runtime.workqueue.queue_native`). Everything else is this module's Python on both:
the C core calls back into it for the slow paths (waking a getter or a drainer, starting the
unfinished-work updater, waiting in `_get_slow` when the FIFO is empty), and the flags those
paths change are pushed into the core by `_sync`. A subclass that overrides `add`, `get` or
`done` keeps its override (the C method is bound per instance only where not overridden);
calling the interpreted methods on a queue with a core is harmless, the state being shared.

The C core keeps `dirty` and `processing` in hash tables of its own (`_wqcore.Table`, small
mappings to Python) instead of dicts; `get()` returns an awaitable that, when an item is
ready, completes at its first send without a coroutine frame or a Future.

Cost (interpreted): `add`, `get` and `done` are written out inline (no helper calls, `dict`
subscripts rather than `dict.pop`, one clock read per operation with metrics, none without)
because per item they are nearly all a worker pays for the queue; `bench/workqueue.py`
measures both implementations against client-go's queue in Go and against the least any
interpreted queue with this API costs.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Generic, Literal, TypeAlias, TypeVar

from kubeloop.runtime.clock import REAL_CLOCK, Clock
from kubeloop.runtime.workqueue import queue_native
from kubeloop.runtime.workqueue.batch import BatchingRecorder, is_batching
from kubeloop.runtime.workqueue.metrics import (
    MetricsProvider,
    QueueMetricsRecorder,
    default_metrics_provider,
    new_queue_metrics,
)

if TYPE_CHECKING:
    from kubeloop.runtime.workqueue import _wqcore

T = TypeVar("T", bound=Hashable)

UNFINISHED_WORK_UPDATE_PERIOD = 0.5
"""Seconds between two updates of the unfinished-work gauges of a named queue (client-go's 500 ms)."""

FOLD_WHEN_IDLE_AT = 256
"""Pending latency observations from which a worker about to wait counts them (see `_wait_for_items`)."""

GetResult: TypeAlias = "tuple[T, Literal[False]] | tuple[None, Literal[True]]"
"""What `get()` returns: an item and False, or None and True once the queue is shut down and empty.

Type checkers narrow the pair by its second element (`result = await q.get(); if result[1]: ...`).
"""


class WorkQueue(Generic[T]):
    """A work queue with client-go's semantics. Items must be hashable.

    `name` turns on metrics (unnamed queues have none) from `metrics_provider`, by default
    `default_metrics_provider()`. `clock` is the time source for metrics (and for timers in
    the subclasses); tests pass a `kubeloop.testing.clock.FakeClock`.

    Misuse behaves as in client-go, without errors:
    - `add` after shutdown is ignored.
    - `get` after shutdown still hands out the queued items, and returns `(None, True)` once
      the FIFO is empty.
    - `done` of an item that no worker holds is harmless unless the item is dirty: then it is
      appended to the FIFO even if it is already there, so it can be handed out twice (to two
      workers at once). Only call `done` for an item you got from `get`.
    """

    def __init__(
        self,
        name: str | None = None,
        *,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        self.name = name
        self._clock: Clock = REAL_CLOCK if clock is None else clock
        self._queue: deque[T] = deque()
        # `dirty` and `processing` are the design's two sets, kept as dicts whose values are the
        # time the item was added (dirty) or handed out (processing) when metrics are on, and 0
        # otherwise: client-go keeps the same timestamps in two more maps with the same
        # lifetimes, and sharing them saves about a quarter of the metrics' cost per operation.
        self._dirty: dict[T, float] = {}
        self._processing: dict[T, float] = {}
        self._now = self._clock.now
        self._shutting_down = False
        self._drain = False
        # Futures of `get()` calls waiting for an item, oldest first; each wake-up pops one.
        self._getters: deque[asyncio.Future[None]] = deque()
        # Getters woken but not yet running. Only one is woken at a time: when it runs it takes
        # an item and, if more are queued, wakes the next (a relay). A burst of adds therefore
        # wakes workers one by one as they are needed instead of all at once, most of them
        # for nothing (client-go wakes one waiter per add; which worker gets which item is
        # unspecified in both).
        self._wakeups_pending = 0
        # Futures of `shutdown_with_drain()` calls waiting for `processing` to empty.
        self._drainers: list[asyncio.Future[None]] = []
        # Whether getters wait and none of them has been woken: the one test `add` and `done`
        # make to decide whether to wake a worker.
        self._wake_needed = False
        self._metrics: QueueMetricsRecorder | None = None
        # With metrics, add/get/done read the clock (`_timed`) and record either inline into a
        # `BatchingRecorder` (`_batch`, with its two histograms' bound appends) or through the
        # generic recorder's methods (`_recorder`).
        self._timed = False
        self._batch: BatchingRecorder | None = None
        self._recorder: QueueMetricsRecorder = _NO_RECORDER
        self._observe_latency: Callable[[float], None] = _discard
        self._observe_work: Callable[[float], None] = _discard
        self._updater: asyncio.Task[None] | None = None
        self._core: _wqcore.Core | None = None
        if name:
            provider = default_metrics_provider() if metrics_provider is None else metrics_provider
            self._metrics = self._recorder = new_queue_metrics(provider, name)
            self._timed = True
            if is_batching(self._metrics):
                self._batch = self._metrics
                self._observe_latency = self._batch.latency_batch.pending.append
                self._observe_work = self._batch.work_batch.pending.append
            self._start_unfinished_work_updater()
        if queue_native.enabled():
            self._attach_core()

    def _attach_core(self) -> None:
        """Serve `add`, `get` and `done` from the C core (see the module docstring)."""
        extension = queue_native.EXTENSION
        assert extension is not None
        core: _wqcore.Core = extension.Core(
            self,
            self._queue,
            self._drainers,
            self._now if self._timed else None,
            self._batch,
            self._recorder if self._timed and self._batch is None else None,
        )
        self._core = core
        # The C core's own hash tables (see `_wqcore.c`, "Table") replace the dicts; the Python
        # code below uses them through the same mapping operations.
        self._dirty = core.dirty  # type: ignore[assignment]
        self._processing = core.processing  # type: ignore[assignment]
        self._sync()
        cls = type(self)
        # Instance attributes shadow the methods; an override in a subclass is kept.
        if cls.add is WorkQueue.add:
            self.__dict__["add"] = core.add
        if cls.get is WorkQueue.get:
            self.__dict__["get"] = core.get
        if cls.done is WorkQueue.done:
            self.__dict__["done"] = core.done

    def _sync(self) -> None:
        """Push the flags the hot path reads into the C core, after a slow path changed them."""
        core = self._core
        if core is not None:
            core.sync(self._shutting_down, self._wake_needed, self._updater is not None)

    def add(self, item: T) -> None:
        """Mark `item` as needing processing (see the module docstring)."""
        dirty = self._dirty
        if item in dirty or self._shutting_down:
            return
        if self._timed:
            dirty[item] = self._now()
            batch = self._batch
            if batch is None:
                self._recorder.added()
            else:
                batch.adds += 1
        else:
            dirty[item] = 0.0
        if item in self._processing:
            return
        self._queue.append(item)
        if self._wake_needed:
            self._wake_one_getter()

    def __len__(self) -> int:
        """Items waiting in the FIFO; items re-added while held are not counted until `done`.

        For information only: another task may change it before you act on it.
        """
        return len(self._queue)

    async def get(self) -> GetResult[T]:
        """Wait for an item and hand it out; the caller must call `done(item)` afterwards.

        Returns `(item, False)`, or `(None, True)` once shut down and empty: then stop working.
        """
        # The hot path is written out inline (no helper calls, one clock read with metrics):
        # per item this coroutine is most of what a worker pays for the queue.
        queue = self._queue
        if not queue:
            await self._wait_for_items()
            if not queue:
                return None, True
        item = queue.popleft()
        if self._timed:
            now = self._processing[item] = self._now()
            dirty = self._dirty
            # Subscript and `del` rather than `dict.pop`: no method call on the hot path.
            try:
                waited: float | None = now - dirty[item]
                del dirty[item]
            except KeyError:
                # No add time only after the misuse described in the class docstring (a duplicate).
                waited = None
            batch = self._batch
            if batch is None:
                self._recorder.got(waited)
            elif waited is None:
                batch.unmatched_gets += 1
            else:
                self._observe_latency(waited)
            if self._updater is None:
                self._start_unfinished_work_updater()
        else:
            try:
                del self._dirty[item]
            except KeyError:
                pass  # the misuse again
            self._processing[item] = 0.0
        if queue and self._wake_needed:
            self._wake_one_getter()
        return item, False

    def done(self, item: T) -> None:
        """Mark `item` as processed; if it was added again meanwhile, queue it again.

        This re-queueing happens during shutdown too, so a draining worker sees it once more.
        """
        processing = self._processing
        if self._timed:
            try:
                started = processing[item]
                del processing[item]
            except KeyError:
                pass  # not held (class docstring)
            else:
                if self._batch is None:
                    self._recorder.finished(self._now() - started)
                else:
                    self._observe_work(self._now() - started)
        else:
            try:
                del processing[item]
            except KeyError:
                pass  # not held: harmless unless dirty (class docstring)
        if item in self._dirty:
            self._queue.append(item)
            if self._wake_needed:
                self._wake_one_getter()
        if self._drainers and not processing:
            self._wake_drainers()

    def shutdown(self) -> None:
        """Stop accepting items and make `get` report shutdown once the FIFO is empty.

        Does not wait for items being processed; stops a `shutdown_with_drain` that is waiting.
        Calling it again is harmless.
        """
        self._begin_shutdown(drain=False)
        self._wake_drainers()

    async def shutdown_with_drain(self) -> None:
        """Shut down like `shutdown`, then wait until no item is being processed.

        As in client-go it waits for `processing` to empty, not the FIFO: an item re-added
        while held goes back on the FIFO at its `done` and is still handed out by `get`, but
        this call may return before it is processed. Workers must call `done` for every item
        or this never returns; a later `shutdown()` makes it return at once.
        """
        self._begin_shutdown(drain=True)
        loop = asyncio.get_running_loop()
        while self._processing and self._drain:
            waiter = loop.create_future()
            self._drainers.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._drainers:
                    self._drainers.remove(waiter)

    def shutting_down(self) -> bool:
        """Whether `shutdown` or `shutdown_with_drain` was called."""
        return self._shutting_down

    def _begin_shutdown(self, *, drain: bool) -> None:
        first = not self._shutting_down
        self._drain = drain
        self._shutting_down = True
        self._sync()
        if self._updater is not None:
            self._updater.cancel()
        if self._batch is not None:
            self._batch.fold()
        while self._getters:
            self._wake_one_getter()
        if first:
            self._on_shutdown()

    def _on_shutdown(self) -> None:
        """Hook run once, at the first shutdown call, for subclasses to stop their timers."""

    async def _get_slow(self) -> GetResult[T]:
        """`get` of the C core when the FIFO was empty: wait in Python, take the item in C."""
        core = self._core
        assert core is not None
        await self._wait_for_items()
        if not self._queue:
            return None, True
        return core.take()  # type: ignore[return-value]

    async def _wait_for_items(self) -> None:
        """Sleep until the FIFO has an item or the queue shuts down (the FIFO is empty now)."""
        batch = self._batch
        if batch is not None and len(batch.latency_batch.pending) >= FOLD_WHEN_IDLE_AT:
            # Idle with many observations pending: a good moment to count them (the updater
            # counts the rest every 500 ms; folding a handful each time would cost more per
            # value than the bucket search it replaces).
            batch.fold()
        queue = self._queue
        while not queue and not self._shutting_down:
            await self._wait_for_item()

    async def _wait_for_item(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._getters.append(waiter)
        if not self._wakeups_pending:
            self._wake_needed = True
            self._sync()
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                # Woken, then cancelled before running: hand the wake-up on so a queued item
                # does not wait while other workers sleep.
                self._wakeups_pending -= 1
                self._wake_needed = bool(self._getters) and not self._wakeups_pending
                self._sync()
                if self._queue and self._wake_needed:
                    self._wake_one_getter()
            else:
                try:
                    self._getters.remove(waiter)
                except ValueError:
                    pass
                self._wake_needed = bool(self._getters) and not self._wakeups_pending
                self._sync()
            raise
        self._wakeups_pending -= 1
        self._wake_needed = bool(self._getters) and not self._wakeups_pending
        self._sync()

    def _wake_one_getter(self) -> None:
        getters = self._getters
        while getters:
            getter = getters.popleft()
            if not getter.done():
                getter.set_result(None)
                self._wakeups_pending += 1
                self._wake_needed = False
                self._sync()
                return
        self._wake_needed = False
        self._sync()

    def _wake_drainers(self) -> None:
        # Emptied in place: the C core holds this list.
        drainers = list(self._drainers)
        self._drainers.clear()
        for drainer in drainers:
            if not drainer.done():
                drainer.set_result(None)

    def _start_unfinished_work_updater(self) -> None:
        if self._shutting_down:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            # Built outside an event loop: the first `get` starts the updater instead.
            return
        self._updater = loop.create_task(
            _update_unfinished_work(weakref.ref(self), self._clock),
            name=f"workqueue {self.name!r} unfinished-work updater",
        )
        self._sync()


def _discard(value: float) -> None:
    """The observe of a queue without batched metrics; never called."""


class _NoRecorder:
    """The recorder of a queue without metrics; never called either (`_timed` is False)."""

    def added(self) -> None:
        pass

    def got(self, waited: float | None) -> None:
        pass

    def finished(self, worked: float) -> None:
        pass

    def update_unfinished_work(self, now: float, start_times: Iterable[float]) -> None:
        pass


_NO_RECORDER = _NoRecorder()


async def _update_unfinished_work(queue_ref: weakref.ref[WorkQueue[T]], clock: Clock) -> None:
    """Refresh the unfinished-work gauges every 500 ms until the queue shuts down or is collected.

    It holds the queue only through a weak reference, so an abandoned queue can be collected
    (and this loop then ends) even if nobody shut it down.
    """
    while True:
        await clock.sleep(UNFINISHED_WORK_UPDATE_PERIOD)
        queue = queue_ref()
        if queue is None or queue._shutting_down or queue._metrics is None:
            return
        if queue._batch is not None:
            queue._batch.fold()
        queue._metrics.update_unfinished_work(queue._now(), queue._processing.values())
        del queue

"""`DelayingQueue`: a work queue that can add an item later (client-go's delaying queue).

`add_after(item, seconds)` parks the item until `clock.now()` reaches its ready time, then
`add`s it. An item has at most one pending ready time, the earliest requested: a later request
for an item already waiting is dropped, an earlier one replaces it. A parked item may also be
queued or processing at the same time; when its time comes the ordinary `add` de-duplicates.

How the waiting works: client-go runs a goroutine fed by a channel and woken by a timer for the
earliest ready time (plus a 10 s heartbeat as insurance). Here the parked items sit in a min-heap
and one clock timer is armed for the earliest ready time and re-armed whenever that changes; the
timer callback adds every item that is due. There is no task and no channel, nothing can be
missed between the two, so the heartbeat has nothing to insure against and is left out. Under a
`FakeClock` the callback runs inside `step()`, so `len(queue)` is final when `step()` returns.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Hashable
from typing import TypeVar

from kubeloop.runtime.clock import Clock, TimerHandle
from kubeloop.runtime.workqueue.metrics import CounterMetric, MetricsProvider, default_metrics_provider
from kubeloop.runtime.workqueue.queue import WorkQueue

T = TypeVar("T", bound=Hashable)


class DelayingQueue(WorkQueue[T]):
    """A `WorkQueue` with `add_after`. Named queues also count retries (one per `add_after`).

    Timers need a running event loop with the real clock: call `add_after` with a positive
    delay from the loop's thread while the loop runs.
    """

    def __init__(
        self,
        name: str | None = None,
        *,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        super().__init__(name, clock=clock, metrics_provider=metrics_provider)
        # Min-heap of (ready_at, sequence, item); the sequence breaks ties in arrival order and
        # keeps items (which need not be orderable) out of comparisons.
        self._parked: list[tuple[float, int, T]] = []
        # item -> (ready_at, sequence) of its one live heap entry. Heap entries whose sequence
        # is not the live one were superseded by an earlier time and are skipped when popped.
        self._ready_at: dict[T, tuple[float, int]] = {}
        self._sequence = itertools.count()
        self._timer: TimerHandle | None = None
        self._timer_deadline = math.inf
        self._retries: CounterMetric | None = None
        if name:
            provider = default_metrics_provider() if metrics_provider is None else metrics_provider
            self._retries = provider.new_retries_metric(name)

    def add_after(self, item: T, seconds: float) -> None:
        """Add `item` once `seconds` have passed; `seconds <= 0` adds it now.

        Ignored after shutdown. Counts one retry (named queues) even when it adds at once.
        """
        if self._shutting_down:
            return
        if self._retries is not None:
            self._retries.inc()
        if seconds <= 0:
            self.add(item)
            return
        now = self._clock.now()
        ready_at = now + seconds
        if ready_at <= now:
            # A delay below the clock's float resolution at this magnitude is no delay.
            self.add(item)
            return
        current = self._ready_at.get(item)
        if current is not None and current[0] <= ready_at:
            return
        sequence = next(self._sequence)
        self._ready_at[item] = (ready_at, sequence)
        heapq.heappush(self._parked, (ready_at, sequence, item))
        if ready_at < self._timer_deadline:
            self._arm(ready_at)

    def waiting_count(self) -> int:
        """How many items are parked by `add_after` and not yet added (for information only)."""
        return len(self._ready_at)

    def _on_shutdown(self) -> None:
        # client-go's waiting loop exits at shutdown and its parked items are dropped with it.
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_deadline = math.inf
        self._parked.clear()
        self._ready_at.clear()

    def _arm(self, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_deadline = deadline
        self._timer = self._clock.call_at(deadline, self._add_due_items)

    def _add_due_items(self) -> None:
        self._timer = None
        self._timer_deadline = math.inf
        if self._shutting_down:
            return
        now = self._clock.now()
        parked = self._parked
        ready_at = self._ready_at
        while parked and parked[0][0] <= now:
            _, sequence, item = heapq.heappop(parked)
            live = ready_at.get(item)
            if live is None or live[1] != sequence:
                continue
            del ready_at[item]
            self.add(item)
        # Superseded entries at the head would arm a timer for nothing; drop them first.
        while parked and ready_at.get(parked[0][2], (0.0, -1))[1] != parked[0][1]:
            heapq.heappop(parked)
        if parked:
            self._arm(parked[0][0])

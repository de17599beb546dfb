"""A clock that only moves when a test says so.

`FakeClock` implements `kubeloop.runtime.clock.Clock`. Time starts where the test puts it and
advances only through `step()` or `set_time()`; timers and sleepers whose deadline is reached
by that advance are run or woken in deadline order, each seeing the clock at its own deadline.

Timer callbacks (used by the delaying queue) run synchronously inside `step()`, so the queue's
state is final when `step()` returns. Sleepers (used by background loops such as the work
queue's metrics updater) are tasks: `step()` only wakes them, and they run when the test next
yields to the event loop. `wait_for_waiters()` is the way to let them catch up: a periodic loop
that went back to sleep has registered a new waiter, so waiting for the waiter count tells the
test the loop finished its round. This mirrors client-go's fake clock and its `HasWaiters`.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable


class _FakeTimer:
    """One pending deadline of a `FakeClock`; `cancel()` withdraws it."""

    __slots__ = ("_clock", "callback", "cancelled", "deadline")

    def __init__(self, clock: FakeClock, deadline: float, callback: Callable[[], None]) -> None:
        self._clock = clock
        self.deadline = deadline
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            self._clock._pending -= 1


class FakeClock:
    """A manually driven `Clock` for tests. Not thread-safe: use it from the loop's thread."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._timers: list[tuple[float, int, _FakeTimer]] = []
        self._sequence = itertools.count()
        self._pending = 0

    def now(self) -> float:
        return self._now

    def step(self, seconds: float) -> None:
        """Advance time by `seconds` (>= 0), running every timer that falls due on the way.

        Timers scheduled by a callback run in the same step if their deadline is reached too.
        """
        if seconds < 0:
            raise ValueError(f"a fake clock cannot step backwards (step {seconds})")
        self._advance_to(self._now + seconds)

    def set_time(self, when: float) -> None:
        """Jump to `when`. Forward jumps run due timers like `step`; backward jumps run none.

        Going backwards is allowed only so tests can check code that must tolerate it.
        """
        if when >= self._now:
            self._advance_to(when)
        else:
            self._now = when

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not woken.done():
                woken.set_result(None)

        timer = self.call_at(self._now + seconds, wake)
        try:
            await woken
        finally:
            timer.cancel()

    def call_at(self, deadline: float, callback: Callable[[], None]) -> _FakeTimer:
        """Schedule `callback`; a deadline not after `now()` runs at the next `step` (even 0)."""
        timer = _FakeTimer(self, deadline, callback)
        heapq.heappush(self._timers, (deadline, next(self._sequence), timer))
        self._pending += 1
        return timer

    def has_waiters(self) -> bool:
        """Whether any timer or sleeper is pending."""
        return self._pending > 0

    def waiter_count(self) -> int:
        """How many timers and sleepers are pending."""
        return self._pending

    async def wait_for_waiters(self, count: int = 1, *, max_yields: int = 10_000) -> None:
        """Yield to the event loop until at least `count` waiters are pending.

        Raises `TimeoutError` after `max_yields` rounds so a broken test fails instead of hanging.
        """
        for _ in range(max_yields):
            if self._pending >= count:
                return
            await asyncio.sleep(0)
        raise TimeoutError(f"fake clock: {self._pending} waiters pending, expected at least {count}")

    def _advance_to(self, target: float) -> None:
        timers = self._timers
        while timers and timers[0][0] <= target:
            deadline, _, timer = heapq.heappop(timers)
            if timer.cancelled:
                continue
            timer.cancel()
            self._now = max(self._now, deadline)
            timer.callback()
        self._now = target

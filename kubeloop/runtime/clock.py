"""The runtime's clock seam: monotonic time, sleeping, and one-shot timers.

Everything in the runtime that reads time or waits for it (the delaying queue's timers, the
work queue's metrics, the token-bucket rate limiter) takes a `Clock` instead of calling
`time` or `asyncio` directly, so tests can swap in `kubeloop.testing.clock.FakeClock` and
step time by hand instead of sleeping.

Time is a float of seconds on a monotonic scale whose origin means nothing; only differences
between two readings of the same clock are meaningful.

Why timers rather than a waiting task: client-go's delaying queue runs a goroutine that waits
for "the earlier of the next deadline or a new item". On an event loop the same thing is a
single timer re-armed whenever the earliest deadline changes, so the clock offers
`call_at(deadline, callback)`. With a fake clock the callback then runs synchronously inside
`step()`, which makes delaying-queue tests deterministic without polling.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol


class TimerHandle(Protocol):
    """A scheduled callback that can be cancelled before it runs (`asyncio.TimerHandle` is one)."""

    def cancel(self) -> None:
        """Stop the callback from running; a no-op if it already ran or was cancelled."""


class MonotonicTime(Protocol):
    """A clock that is only read (expectations time out, nothing waits on them)."""

    def now(self) -> float:
        """Current monotonic time in seconds."""


class Clock(Protocol):
    """Monotonic time plus the two ways to wait for it that the runtime needs.

    All methods are called from the event loop's thread.
    """

    def now(self) -> float:
        """Current monotonic time in seconds."""

    async def sleep(self, seconds: float) -> None:
        """Return once `seconds` have passed on this clock (at once for `seconds <= 0`)."""

    def call_at(self, deadline: float, callback: Callable[[], None]) -> TimerHandle:
        """Run `callback()` on the event loop once `now() >= deadline`.

        A deadline already in the past runs the callback as soon as possible, never inside
        this call.
        """


class RealClock:
    """The wall of the running process: `time.monotonic` and the running event loop.

    `call_at` and `sleep` need a running event loop (they raise `RuntimeError` otherwise);
    `now` does not.
    """

    # A staticmethod over the C function keeps `clock.now()` as cheap as `time.monotonic()`,
    # which matters because the work queue's metrics read the clock on every add/get/done.
    now = staticmethod(time.monotonic)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def call_at(self, deadline: float, callback: Callable[[], None]) -> TimerHandle:
        # The event loop has its own time base (the same monotonic clock for the default loop,
        # but not promised), so the deadline is converted to a delay from now.
        loop = asyncio.get_running_loop()
        return loop.call_later(max(0.0, deadline - time.monotonic()), callback)


REAL_CLOCK = RealClock()
"""The shared `RealClock`; it has no state, so one instance serves everybody."""

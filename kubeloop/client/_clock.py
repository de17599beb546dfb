"""The clock seam: everything in the client that waits or measures intervals goes through it.

Rate limiting, retry back-off, token-file re-reads, exec-credential expiry and discovery
ageing all depend on time; taking a :class:`Clock` lets tests drive them with a fake clock
instead of sleeping. The protocol is the subset of :class:`kubeloop.runtime.clock.Clock`
the client needs, so the runtime's clocks (and ``kubeloop.testing.clock.FakeClock``) can be
handed to :class:`kubeloop.client.ApiClient` as they are.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic seconds and an async sleep on the same scale."""

    def now(self) -> float:
        """Seconds on a clock that never goes backwards; only differences mean anything."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return once ``seconds`` have passed on this clock (0 or less yields once)."""
        ...


class SystemClock:
    """The real clock: ``time.monotonic`` and ``asyncio.sleep``."""

    now = staticmethod(time.monotonic)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(seconds, 0.0))

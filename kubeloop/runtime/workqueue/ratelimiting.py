"""`RateLimitingQueue`: a delaying queue that asks a rate limiter how long a retry waits.

The usual worker loop: `get` an item, reconcile it, then on failure `add_rate_limited(item)`
(retry after the limiter's back-off), on success `forget(item)` (reset the back-off), and in
both cases `done(item)`. `forget` only clears the limiter's history; it does not remove the
item from the queue and does not replace `done`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from kubeloop.runtime.clock import Clock
from kubeloop.runtime.workqueue.delaying import DelayingQueue
from kubeloop.runtime.workqueue.metrics import MetricsProvider
from kubeloop.runtime.workqueue.ratelimiters import RateLimiter

T = TypeVar("T", bound=Hashable)


class RateLimitingQueue(DelayingQueue[T]):
    """A `DelayingQueue` plus `add_rate_limited`, `forget` and `num_requeues`.

    The limiter is consulted (and records a failure) on every `add_rate_limited`, even when the
    queue is shut down and the add itself is ignored, as in client-go.
    """

    def __init__(
        self,
        rate_limiter: RateLimiter[T],
        name: str | None = None,
        *,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        super().__init__(name, clock=clock, metrics_provider=metrics_provider)
        self.rate_limiter = rate_limiter

    def add_rate_limited(self, item: T) -> None:
        """Add `item` after the delay the rate limiter gives it now."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Tell the rate limiter that `item` is finished being retried (success or give-up)."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """How many times the rate limiter has delayed `item` since it was last forgotten."""
        return self.rate_limiter.num_requeues(item)

"""Rate limiters: how long an item should wait before it is retried (client-go's set).

Every limiter answers three questions about an item:
- `when(item)`: record one more failure and return the delay in seconds before the retry;
- `forget(item)`: the item succeeded (or was given up), so clear its failure history;
- `num_requeues(item)`: how many failures are on record.

They are plain bookkeeping with no I/O. Only `BucketRateLimiter` reads time, from the clock it
is given. Delays are float seconds; "never" is `INFINITE_DELAY`, the largest Go duration,
which is what client-go returns in the same cases.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from kubeloop.runtime.clock import REAL_CLOCK, Clock

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)

_MAX_DURATION_NANOSECONDS = 2**63 - 1
INFINITE_DELAY = _MAX_DURATION_NANOSECONDS / 1e9
"""The largest delay a limiter returns (about 292 years): Go's largest `time.Duration`."""


class RateLimiter(Protocol[T_contra]):
    """What `RateLimitingQueue` needs from a limiter."""

    def when(self, item: T_contra) -> float:
        """Record a failure of `item` and return the seconds it should wait."""

    def forget(self, item: T_contra) -> None:
        """Drop what is recorded about `item`."""

    def num_requeues(self, item: T_contra) -> int:
        """Failures recorded for `item` since it was last forgotten."""


class ItemExponentialFailureRateLimiter(Generic[T]):
    """Per item: `base_delay * 2**failures`, capped at `max_delay`.

    The n-th `when` for an item (counting from 0) returns `base_delay * 2**n`, or `max_delay`
    when that is larger or too large to represent (client-go's overflow guard: beyond the
    largest Go duration the cap is returned).
    """

    def __init__(self, base_delay: float, max_delay: float) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        # Go durations are whole nanoseconds; doubling a whole number keeps the overflow check
        # exact (a float seconds product could land a rounding step either side of the limit).
        self._base_nanoseconds = round(base_delay * 1e9)
        self._failures: dict[T, int] = {}

    def when(self, item: T) -> float:
        exponent = self._failures.get(item, 0)
        self._failures[item] = exponent + 1
        try:
            backoff_nanoseconds = self._base_nanoseconds * math.ldexp(1.0, exponent)
        except OverflowError:
            return self.max_delay
        if backoff_nanoseconds > _MAX_DURATION_NANOSECONDS:
            return self.max_delay
        return min(backoff_nanoseconds / 1e9, self.max_delay)

    def forget(self, item: T) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        return self._failures.get(item, 0)


class ItemFastSlowRateLimiter(Generic[T]):
    """Per item: `fast_delay` for the first `max_fast_attempts` failures, `slow_delay` after."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts
        self._failures: dict[T, int] = {}

    def when(self, item: T) -> float:
        failures = self._failures.get(item, 0) + 1
        self._failures[item] = failures
        return self.fast_delay if failures <= self.max_fast_attempts else self.slow_delay

    def forget(self, item: T) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter(Generic[T]):
    """One token bucket for all items: `qps` tokens per second, holding at most `burst`.

    Every `when` reserves a token, waiting for it if need be (golang.org/x/time/rate's
    `Reserve().Delay()`): the bucket refills by `elapsed * qps` up to `burst`, one token is
    taken, and if that leaves the bucket negative the delay is the time to refill the debt.
    So with qps 10 and burst 100 the first 100 calls at one instant return 0 and the next ones
    0.1 s, 0.2 s, ... Items are not tracked: `num_requeues` is 0 and `forget` does nothing.

    Edge cases as x/time/rate: `qps = math.inf` never delays; `burst < 1` (with a finite
    rate) can never grant a token, so every call returns `INFINITE_DELAY` and reserves
    nothing; `qps <= 0` grants the initial burst and then delays by `INFINITE_DELAY`. A clock
    that goes backwards refills nothing.
    """

    def __init__(self, qps: float, burst: int, *, clock: Clock | None = None) -> None:
        self.qps = qps
        self.burst = burst
        self._clock: Clock = REAL_CLOCK if clock is None else clock
        self._tokens = float(burst)
        self._last: float | None = None

    def when(self, item: T) -> float:
        if self.qps == math.inf:
            return 0.0
        now = self._clock.now()
        last = now if self._last is None or now < self._last else self._last
        refill = (now - last) * self.qps if self.qps > 0 else 0.0
        tokens = min(self._tokens + refill, float(self.burst)) - 1.0
        if tokens >= 0:
            delay = 0.0
        elif self.qps <= 0:
            delay = INFINITE_DELAY
        else:
            delay = min(-tokens / self.qps, INFINITE_DELAY)
        if self.burst < 1:
            # The reservation is refused and the bucket left as it was.
            return INFINITE_DELAY
        self._last = now
        self._tokens = tokens
        return delay

    def forget(self, item: T) -> None:
        """Nothing to forget: the bucket is shared by all items."""

    def num_requeues(self, item: T) -> int:
        return 0


class MaxOfRateLimiter(Generic[T]):
    """The largest delay of several limiters; every limiter records every failure.

    With a token bucket inside, the bucket's burst can appear exceeded when some items were
    delayed longer by another limiter (they still took their token early), as in client-go.
    """

    def __init__(self, *limiters: RateLimiter[T]) -> None:
        self.limiters = limiters

    def when(self, item: T) -> float:
        longest = 0.0
        for limiter in self.limiters:
            delay = limiter.when(item)
            if delay > longest:
                longest = delay
        return longest

    def forget(self, item: T) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return max((limiter.num_requeues(item) for limiter in self.limiters), default=0)


class WithMaxWaitRateLimiter(Generic[T]):
    """Another limiter's delay, but never more than `max_delay`."""

    def __init__(self, limiter: RateLimiter[T], max_delay: float) -> None:
        self.limiter = limiter
        self.max_delay = max_delay

    def when(self, item: T) -> float:
        return min(self.limiter.when(item), self.max_delay)

    def forget(self, item: T) -> None:
        self.limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.limiter.num_requeues(item)


def default_item_based_rate_limiter() -> ItemExponentialFailureRateLimiter[T]:
    """Per-item exponential back-off from 1 ms to 1000 s (client-go's item-based default)."""
    return ItemExponentialFailureRateLimiter(0.001, 1000.0)


def default_controller_rate_limiter(*, clock: Clock | None = None) -> MaxOfRateLimiter[T]:
    """client-go's controller default: the larger of per-item exponential back-off (5 ms to
    1000 s) and an overall 10 qps bucket with a burst of 100 (which only paces retries)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock=clock),
    )

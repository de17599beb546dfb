"""Client-side request rate limiting: a token bucket, as client-go's flowcontrol uses.

The bucket holds up to ``burst`` tokens and refills at ``qps`` tokens per second; a request
takes one token. When none is left the request *reserves* the next one: the balance goes
negative and the caller waits until it would be back at zero. So concurrent callers queue
fairly, each learning its own delay at once, and the long-run rate never exceeds ``qps``
(the semantics of golang.org/x/time/rate behind client-go's ``NewTokenBucketRateLimiter``).

:class:`TokenBucket` is sans-IO: it is given the time and answers with a delay.
"""

from __future__ import annotations


class TokenBucket:
    """Token bucket starting full; ``reserve(now)`` returns how long to wait first.

    ``qps`` must be positive and ``burst`` at least 1; a disabled limiter is simply no
    bucket at all (see :func:`new_rate_limiter`).
    """

    __slots__ = ("_burst", "_last", "_qps", "_tokens")

    def __init__(self, qps: float, burst: int, now: float) -> None:
        if qps <= 0:
            raise ValueError("qps must be positive")
        self._qps = float(qps)
        self._burst = float(max(burst, 1))
        self._tokens = self._burst
        self._last = now

    @property
    def qps(self) -> float:
        return self._qps

    @property
    def burst(self) -> int:
        return int(self._burst)

    def tokens(self, now: float) -> float:
        """Tokens available at ``now`` (negative while reservations are outstanding)."""
        elapsed = max(now - self._last, 0.0)
        return min(self._burst, self._tokens + elapsed * self._qps)

    def reserve(self, now: float) -> float:
        """Take one token and return the seconds to wait before using it (0 if available)."""
        self._tokens = self.tokens(now) - 1.0
        self._last = max(now, self._last)
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self._qps


def new_rate_limiter(qps: float, burst: int, now: float) -> TokenBucket | None:
    """A bucket for ``qps``/``burst``, or ``None`` when ``qps`` is 0 or negative (no limit)."""
    if qps <= 0:
        return None
    return TokenBucket(qps, burst, now)

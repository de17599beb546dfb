"""Retrying a write that lost an optimistic-concurrency race: client-go's ``util/retry``.

:func:`retry_on_conflict` runs an attempt (typically: read the object, change it, write it)
until it succeeds, fails with anything but a 409 Conflict, or has run ``backoff.steps``
times, in which case the last conflict is raised. Between attempts it sleeps as
``wait.ExponentialBackoff`` does (k8s.io/apimachinery/pkg/util/wait/backoff.go): the
current duration plus up to ``jitter`` of it at random, then the duration is multiplied by
``factor`` and capped by ``cap`` (reaching the cap ends the retries after that sleep, as
upstream's ``delay`` does). :data:`DEFAULT_RETRY` and :data:`DEFAULT_BACKOFF` are client-go's
``retry.DefaultRetry`` and ``retry.DefaultBackoff`` (k8s.io/client-go/util/retry/util.go).

The attempt decides what to read again: a closure that writes a cached copy first and a
fresh read on later attempts is the usual shape. ``sleep`` and ``rand`` are seams for tests.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from kubeloop.client import is_conflict

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """``wait.Backoff``: at most ``steps`` attempts, ``duration`` seconds before the second."""

    steps: int
    duration: float
    factor: float = 1.0
    jitter: float = 0.0
    cap: float = 0.0

    def step(self, steps: int, duration: float, rand: Callable[[], float]) -> tuple[float, float, int]:
        """Upstream's ``delay``: ``(this sleep, the next duration, the steps left)``."""
        steps -= 1
        following = duration * self.factor if self.factor != 0 else duration
        if self.cap > 0 and following > self.cap:
            following, steps = self.cap, 0
        sleep = duration + rand() * self.jitter * duration if self.jitter > 0 else duration
        return sleep, following, steps


DEFAULT_RETRY = Backoff(steps=5, duration=0.010, factor=1.0, jitter=0.1)
DEFAULT_BACKOFF = Backoff(steps=4, duration=0.010, factor=5.0, jitter=0.1)


async def retry_on_error(
    backoff: Backoff,
    retriable: Callable[[BaseException], bool],
    attempt: Callable[[], Awaitable[T]],
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rand: Callable[[], float] = random.random,
) -> T:
    """``retry.OnError``: ``attempt()`` again after each ``retriable`` error, at most
    ``backoff.steps`` times in all; the last error is raised when the steps run out."""
    if backoff.steps < 1:
        raise ValueError("a backoff needs at least one step")
    steps, duration = backoff.steps, backoff.duration
    while True:
        try:
            return await attempt()
        except Exception as exc:
            if not retriable(exc) or steps <= 1:
                raise
            delay, duration, steps = backoff.step(steps, duration, rand)
            if steps < 1:
                # Upstream sleeps once more when the cap ends the steps, then gives up.
                await sleep(delay)
                raise
        if delay > 0:
            await sleep(delay)


async def retry_on_conflict(
    backoff: Backoff,
    attempt: Callable[[], Awaitable[T]],
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rand: Callable[[], float] = random.random,
) -> T:
    """``retry.RetryOnConflict``: :func:`retry_on_error` retrying 409 Conflicts only."""
    return await retry_on_error(backoff, is_conflict, attempt, sleep=sleep, rand=rand)

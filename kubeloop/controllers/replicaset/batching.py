"""How many pods a ReplicaSet sync creates or deletes, and slow-start batches for creation.

A sync acts on at most ``burstReplicas`` (500) pods, then waits for the watch to confirm them
(expectations) before acting again. Creations go out in batches of 1, 2, 4, 8, ... run
concurrently within a batch; the first batch with a failure ends the round, so a ReplicaSet
that cannot create pods (quota, admission) costs one failed call instead of hundreds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

BURST_REPLICAS = 500
SLOW_START_INITIAL_BATCH_SIZE = 1


def replicas_to_manage(active_pods: int, desired: int, burst: int = BURST_REPLICAS) -> int:
    """Pods to create (positive) or delete (negative) this sync, at most ``burst`` either way."""
    difference = desired - active_pods
    return max(-burst, min(burst, difference))


def slow_start_batch_sizes(count: int, initial: int = SLOW_START_INITIAL_BATCH_SIZE) -> list[int]:
    """Batch sizes covering ``count`` calls: ``initial``, then doubling, the last one trimmed."""
    sizes = []
    remaining = count
    size = min(remaining, initial)
    while size > 0:
        sizes.append(size)
        remaining -= size
        size = min(2 * size, remaining)
    return sizes


async def slow_start_batch(
    count: int, call: Callable[[], Awaitable[None]], initial: int = SLOW_START_INITIAL_BATCH_SIZE
) -> tuple[int, BaseException | None]:
    """Run ``call`` ``count`` times in slow-start batches; stop after the first batch with a failure.

    Returns ``(successes, first error)``. The ``count - successes`` creations that failed or never
    started will not be observed by the watch: the caller lowers its expectations by that many.
    """
    successes = 0
    for size in slow_start_batch_sizes(count, initial):
        results = await asyncio.gather(*(call() for _ in range(size)), return_exceptions=True)
        errors = [result for result in results if isinstance(result, BaseException)]
        successes += size - len(errors)
        if errors:
            return successes, errors[0]
    return successes, None

"""`BatchedHistogram`: a histogram whose observations are recorded raw and counted in batches.

Recording is one `list.append` of the value (`observe`, or the bound `pending.append` a work
queue keeps); the per-bucket counting happens later, many values at once, in `fold()`: the
pending values are sorted (C code, and durations recorded in order are already nearly sorted)
and each bucket's count is one `bisect` into them. Per value that is a fraction of what a
`bisect` per observation costs (about 30 ns against 110 ns per value on the session machine,
see `bench/workqueue.py`), and it takes the bucket search off the work queue's hot path.

Threads: `observe` and `fold` belong to one thread (the event loop's: work queues are not
thread-safe anyway); `snapshot()` may run on any thread (a Prometheus scrape) and returns a
consistent view, counting pending values on the fly without mutating anything. Consistency
is a sequence lock: `fold` makes `version` odd while it moves values from `pending` into the
folded counts, and a reader retries when it saw an odd or changed version.

Bucket semantics are Prometheus': the cumulative count at bound `b` counts values `<= b`;
`count` and `total` cover every value, including those above the last bound.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Sequence
from typing import Protocol, TypeGuard


class BatchedHistogram:
    """Cumulative bucket counts, count and sum, plus not yet counted `pending` values.

    `pending` is never replaced (only emptied in place), so a caller may keep its bound
    `append` as a cheap observe.
    """

    __slots__ = ("bounds", "count", "cumulative", "pending", "total", "version")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds: tuple[float, ...] = tuple(bounds)
        self.pending: list[float] = []
        # Folded state, replaced (never mutated) by `fold` while `version` is odd.
        self.cumulative: tuple[int, ...] = (0,) * len(self.bounds)
        self.count = 0
        self.total = 0.0
        self.version = 0

    def observe(self, value: float) -> None:
        """Record one value; counted at the next `fold` (or on the fly by `snapshot`)."""
        pending = self.pending
        pending.append(value)
        # Callers that observe without ever folding (a provider's metric objects used on their
        # own) still keep memory bounded.
        if len(pending) >= 4096:
            self.fold()

    def fold(self) -> None:
        """Count the pending values into the buckets. Same thread as `observe` only."""
        pending = self.pending
        taken = len(pending)
        if not taken:
            return
        cumulative, count, total = _add(self.cumulative, self.count, self.total, self.bounds, pending)
        self.version += 1
        self.cumulative = cumulative
        self.count = count
        self.total = total
        # Only the values counted above: in place, so kept `append`s stay valid.
        del pending[:taken]
        self.version += 1

    def snapshot(self) -> tuple[tuple[int, ...], int, float]:
        """(cumulative bucket counts, count, sum) including pending values; any thread."""
        while True:
            version = self.version
            if not version & 1:
                cumulative, count, total = self.cumulative, self.count, self.total
                pending = list(self.pending)
                if self.version == version:
                    return _add(cumulative, count, total, self.bounds, pending)
            # A fold is under way on the loop thread: let it finish.
            time.sleep(0)


def _add(
    cumulative: tuple[int, ...], count: int, total: float, bounds: tuple[float, ...], values: list[float]
) -> tuple[tuple[int, ...], int, float]:
    """The folded state after counting `values` (not mutated) on top of the given one."""
    if not values:
        return cumulative, count, total
    ordered = sorted(values)
    return (
        tuple(before + bisect.bisect_right(ordered, bound) for before, bound in zip(cumulative, bounds)),
        count + len(ordered),
        total + sum(ordered),
    )


class BatchingRecorder(Protocol):
    """A queue-metrics recorder whose numbers a work queue updates inline, without calls.

    A `WorkQueue` whose recorder also has these members does, instead of calling `added`,
    `got` and `finished`: `adds += 1` per add; per get, the time since the add appended to
    `latency_batch.pending` (or `unmatched_gets += 1` when the item had no add time); per
    done, the time since the get appended to `work_batch.pending`. It calls `fold()` when it
    runs out of items and with every unfinished-work update, so pending values stay few.
    Depth is then the adds minus the gets (latency observations plus unmatched gets).
    """

    adds: int
    unmatched_gets: int
    latency_batch: BatchedHistogram
    work_batch: BatchedHistogram

    def fold(self) -> None: ...


_BATCHING_MEMBERS = ("adds", "unmatched_gets", "latency_batch", "work_batch", "fold")


def is_batching(recorder: object) -> TypeGuard[BatchingRecorder]:
    """Whether `recorder` has `BatchingRecorder`'s members.

    A plain attribute test rather than a runtime-checkable protocol: mypyc, which can compile
    the work-queue modules (see `bench/README.md`), does not support those.
    """
    return all(hasattr(recorder, member) for member in _BATCHING_MEMBERS)

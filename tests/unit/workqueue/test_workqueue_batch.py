"""Batched metrics: `BatchedHistogram` against a per-value count, and the queue's inline recording."""

from __future__ import annotations

import asyncio
import bisect
import random
import threading

import pytest
from prometheus_client import CollectorRegistry

from kubeloop.runtime.workqueue import (
    DURATION_BUCKETS,
    UNFINISHED_WORK_UPDATE_PERIOD,
    PrometheusMetricsProvider,
    QueueMetrics,
    WorkQueue,
)
from kubeloop.runtime.workqueue import batch as batch_module
from kubeloop.runtime.workqueue.batch import BatchedHistogram, is_batching
from kubeloop.runtime.workqueue.queue import FOLD_WHEN_IDLE_AT
from kubeloop.testing.clock import FakeClock


def _expected(values: list[float]) -> tuple[tuple[int, ...], int, float]:
    """The Prometheus reading of `values`, one value at a time: `le` counts values <= the bound."""
    per_bucket = [0] * (len(DURATION_BUCKETS) + 1)
    for value in values:
        per_bucket[bisect.bisect_left(DURATION_BUCKETS, value)] += 1
    cumulative = []
    running = 0
    for count in per_bucket[:-1]:
        running += count
        cumulative.append(running)
    return tuple(cumulative), len(values), sum(values)


def _values(seed: int, size: int) -> list[float]:
    rng = random.Random(seed)
    # Bounds themselves (the `le` edge), zero, values beyond the last bound, and spread values.
    pool = [*DURATION_BUCKETS, 0.0, 5000.0]
    return [rng.choice(pool) if rng.random() < 0.3 else 10 ** rng.uniform(-9, 4) for _ in range(size)]


@pytest.mark.parametrize(("seed", "size", "folds"), [(1, 0, 1), (2, 1, 1), (3, 50, 1), (4, 500, 3), (5, 5000, 7)])
def test_folded_and_pending_counts_match_a_count_per_value(seed: int, size: int, folds: int) -> None:
    values = _values(seed, size)
    histogram = BatchedHistogram(DURATION_BUCKETS)
    chunk = max(1, size // folds)
    for start in range(0, size, chunk):
        for value in values[start : start + chunk]:
            histogram.pending.append(value)
        # Read before folding (pending counted on the fly) and after: the same figures.
        cumulative, count, total = histogram.snapshot()
        expected = _expected(values[: start + chunk])
        assert (cumulative, count) == expected[:2]
        assert total == pytest.approx(expected[2])
        histogram.fold()
        assert not histogram.pending
        assert histogram.snapshot()[:2] == expected[:2]
    assert histogram.snapshot()[:2] == _expected(values)[:2]


def test_snapshot_does_not_consume_pending_values() -> None:
    histogram = BatchedHistogram(DURATION_BUCKETS)
    histogram.observe(0.5)
    histogram.snapshot()
    assert histogram.pending == [0.5]
    assert histogram.count == 0


def test_a_kept_append_stays_valid_across_folds() -> None:
    histogram = BatchedHistogram(DURATION_BUCKETS)
    observe = histogram.pending.append
    observe(1e-3)
    histogram.fold()
    observe(2e-3)
    histogram.fold()
    assert histogram.snapshot()[1] == 2


def test_observe_alone_keeps_pending_values_bounded() -> None:
    histogram = BatchedHistogram(DURATION_BUCKETS)
    for _ in range(10_000):
        histogram.observe(0.01)
    assert len(histogram.pending) < 4096
    assert histogram.snapshot()[1] == 10_000


def test_a_reader_waits_for_a_fold_under_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scrape that meets a fold half done (odd version) reads again once it is finished."""
    histogram = BatchedHistogram(DURATION_BUCKETS)
    histogram.observe(0.5)
    histogram.observe(2.0)
    # Freeze a fold between its two version bumps: counts already moved, pending not yet emptied.
    histogram.cumulative, histogram.count, histogram.total = _expected([0.5, 2.0])
    histogram.version += 1
    yields = []

    def finish_fold(_: float) -> None:
        yields.append(True)
        histogram.pending.clear()
        histogram.version += 1

    monkeypatch.setattr(batch_module.time, "sleep", finish_fold)
    result: list[tuple[tuple[int, ...], int, float]] = []
    reader = threading.Thread(target=lambda: result.append(histogram.snapshot()))
    reader.start()
    reader.join()
    assert yields == [True]
    assert result[0][1] == 2, "neither counted twice (folded and pending) nor lost"


def test_the_prometheus_recorder_is_a_batching_one_and_the_generic_is_not() -> None:
    provider = PrometheusMetricsProvider(CollectorRegistry())
    assert is_batching(provider.new_queue_metrics("q"))
    assert not is_batching(QueueMetrics(provider, "q"))


def _sample(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, {"name": "q", **labels})


async def test_an_unmatched_get_lowers_depth_as_in_client_go(fake_clock: FakeClock) -> None:
    """`done` of a dirty item nobody holds queues it twice; its second get has no add time."""
    registry = CollectorRegistry()
    queue: WorkQueue[str] = WorkQueue("q", clock=fake_clock, metrics_provider=PrometheusMetricsProvider(registry))
    queue.add("a")
    queue.done("a")  # misuse: "a" is dirty and not held, so it joins the FIFO a second time
    assert _sample(registry, "workqueue_depth") == 1
    assert await queue.get() == ("a", False)
    assert await queue.get() == ("a", False)
    assert _sample(registry, "workqueue_depth") == -1, "client-go decrements depth at every get"
    assert _sample(registry, "workqueue_adds_total") == 1
    assert _sample(registry, "workqueue_queue_duration_seconds_count") == 1
    queue.shutdown()


async def test_many_pending_observations_are_counted_when_the_worker_waits(fake_clock: FakeClock) -> None:
    provider = PrometheusMetricsProvider(CollectorRegistry())
    queue: WorkQueue[int] = WorkQueue("q", clock=fake_clock, metrics_provider=provider)
    series = provider.new_queue_metrics("q")

    async def process(count: int) -> None:
        for key in range(count):
            queue.add(key)
        for _ in range(count):
            result = await queue.get()
            assert result[0] is not None
            queue.done(result[0])

    await process(3)
    worker = asyncio.create_task(queue.get())
    await asyncio.sleep(0)  # the worker waits: a few pending values are left for the updater
    assert len(series.latency_batch.pending) == 3
    queue.add(-1)
    assert await worker == (-1, False)
    queue.done(-1)

    await process(FOLD_WHEN_IDLE_AT)
    worker = asyncio.create_task(queue.get())
    await asyncio.sleep(0)  # many are counted before waiting
    assert series.latency_batch.pending == []
    assert series.work_batch.pending == []
    assert series.latency_batch.count == 4 + FOLD_WHEN_IDLE_AT
    queue.shutdown()
    assert await worker == (None, True)


async def test_the_updater_counts_pending_observations(fake_clock: FakeClock) -> None:
    provider = PrometheusMetricsProvider(CollectorRegistry())
    queue: WorkQueue[str] = WorkQueue("q", clock=fake_clock, metrics_provider=provider)
    series = provider.new_queue_metrics("q")
    await fake_clock.wait_for_waiters()
    queue.add("a")
    await queue.get()
    queue.done("a")
    assert len(series.work_batch.pending) == 1
    fake_clock.step(UNFINISHED_WORK_UPDATE_PERIOD)
    await fake_clock.wait_for_waiters()
    assert series.latency_batch.pending == []
    assert series.work_batch.pending == []
    assert (series.latency_batch.count, series.work_batch.count) == (1, 1)
    queue.shutdown()


def test_handed_out_metric_objects_and_the_recorder_add_up() -> None:
    registry = CollectorRegistry()
    provider = PrometheusMetricsProvider(registry)
    queue: WorkQueue[str] = WorkQueue("q", metrics_provider=provider)
    queue.add("a")
    provider.new_adds_metric("q").inc()
    provider.new_depth_metric("q").inc()
    provider.new_latency_metric("q").observe(0.5)
    assert _sample(registry, "workqueue_adds_total") == 2
    assert _sample(registry, "workqueue_depth") == 2
    assert _sample(registry, "workqueue_queue_duration_seconds_count") == 1
    assert _sample(registry, "workqueue_queue_duration_seconds_bucket", le="1.0") == 1

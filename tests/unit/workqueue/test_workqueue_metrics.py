"""Work-queue metrics: upstream's metrics cases with a recording provider, and the Prometheus export."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from kubeloop.runtime.workqueue import (
    UNFINISHED_WORK_UPDATE_PERIOD,
    DelayingQueue,
    PrometheusMetricsProvider,
    WorkQueue,
)
from kubeloop.testing.clock import FakeClock


class _RecordedMetric:
    """Remembers every call a queue makes on one metric."""

    def __init__(self) -> None:
        self.incs = 0
        self.decs = 0
        self.sets: list[float] = []
        self.observations: list[float] = []

    def inc(self) -> None:
        self.incs += 1

    def dec(self) -> None:
        self.decs += 1

    def set(self, value: float) -> None:
        self.sets.append(value)

    def observe(self, value: float) -> None:
        self.observations.append(value)

    @property
    def value(self) -> float:
        return self.sets[-1] if self.sets else float(self.incs - self.decs)


class _RecordingProvider:
    """A provider handing out one `_RecordedMetric` per metric and noting the names asked for."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.depth = _RecordedMetric()
        self.adds = _RecordedMetric()
        self.latency = _RecordedMetric()
        self.work_duration = _RecordedMetric()
        self.unfinished = _RecordedMetric()
        self.longest = _RecordedMetric()
        self.retries = _RecordedMetric()

    def _hand_out(self, name: str, metric: _RecordedMetric) -> _RecordedMetric:
        self.names.append(name)
        return metric

    def new_depth_metric(self, name: str) -> _RecordedMetric:
        return self._hand_out(name, self.depth)

    def new_adds_metric(self, name: str) -> _RecordedMetric:
        return self._hand_out(name, self.adds)

    def new_latency_metric(self, name: str) -> _RecordedMetric:
        return self._hand_out(name, self.latency)

    def new_work_duration_metric(self, name: str) -> _RecordedMetric:
        return self._hand_out(name, self.work_duration)

    def new_unfinished_work_seconds_metric(self, name: str) -> _RecordedMetric:
        return self._hand_out(name, self.unfinished)

    def new_longest_running_processor_seconds_metric(self, name: str) -> _RecordedMetric:
        return self._hand_out(name, self.longest)

    def new_retries_metric(self, name: str) -> _RecordedMetric:
        return self._hand_out(name, self.retries)


async def test_unfinished_work_updater_stops_at_shutdown(fake_clock: FakeClock) -> None:
    provider = _RecordingProvider()
    queue: WorkQueue[str] = WorkQueue("test", clock=fake_clock, metrics_provider=provider)
    await fake_clock.wait_for_waiters()

    fake_clock.step(UNFINISHED_WORK_UPDATE_PERIOD)
    await fake_clock.wait_for_waiters()
    assert len(provider.unfinished.sets) == 1

    queue.shutdown()
    await asyncio.sleep(0)
    assert not fake_clock.has_waiters(), "the updater's sleep is withdrawn at shutdown"
    fake_clock.step(3600)
    await asyncio.sleep(0)
    assert len(provider.unfinished.sets) == 1


async def test_metrics_follow_adds_gets_and_dones(fake_clock: FakeClock) -> None:
    provider = _RecordingProvider()
    queue: WorkQueue[str] = WorkQueue("test", clock=fake_clock, metrics_provider=provider)
    await fake_clock.wait_for_waiters()

    queue.add("foo")
    assert provider.adds.value == 1
    assert provider.depth.value == 1

    fake_clock.step(50e-6)
    assert await queue.get() == ("foo", False)
    assert provider.latency.observations == [pytest.approx(50e-6)]

    for _ in range(5):
        queue.add("foo")  # re-added while held: counted once
    assert provider.adds.value == 2
    assert provider.depth.value == 1

    fake_clock.step(25e-6)
    queue.done("foo")
    assert provider.work_duration.observations == [pytest.approx(25e-6)]
    assert provider.depth.value == 1, "the re-added item is back in the queue"

    assert await queue.get() == ("foo", False)
    assert provider.latency.observations == [pytest.approx(50e-6), pytest.approx(25e-6)], (
        "queue latency runs from the re-add"
    )

    fake_clock.step(UNFINISHED_WORK_UPDATE_PERIOD)
    await fake_clock.wait_for_waiters()
    assert provider.unfinished.value == pytest.approx(UNFINISHED_WORK_UPDATE_PERIOD)
    assert provider.longest.value == pytest.approx(UNFINISHED_WORK_UPDATE_PERIOD)

    queue.done("foo")
    assert provider.work_duration.observations[-1] == pytest.approx(UNFINISHED_WORK_UPDATE_PERIOD)
    assert len(provider.work_duration.observations) == 2
    queue.shutdown()


async def test_unfinished_work_sums_ages_and_reports_the_oldest(fake_clock: FakeClock) -> None:
    provider = _RecordingProvider()
    queue: WorkQueue[str] = WorkQueue("test", clock=fake_clock, metrics_provider=provider)
    await fake_clock.wait_for_waiters()
    queue.add("old")
    await queue.get()
    fake_clock.step(0.2)
    queue.add("young")
    await queue.get()
    fake_clock.step(0.3)  # the updater's first tick: old is 0.5 s, young 0.3 s
    await fake_clock.wait_for_waiters()
    assert provider.unfinished.value == pytest.approx(0.8)
    assert provider.longest.value == pytest.approx(0.5)
    queue.shutdown()


def test_unnamed_queues_have_no_metrics(fake_clock: FakeClock) -> None:
    provider = _RecordingProvider()
    queue: DelayingQueue[str] = DelayingQueue(clock=fake_clock, metrics_provider=provider)
    queue.add("a")
    queue.add_after("b", 1)
    assert provider.names == []
    assert not queue._metrics
    assert fake_clock.waiter_count() == 1, "only the delaying timer, no metrics updater"


def test_retries_count_every_add_after_but_none_after_shutdown(fake_clock: FakeClock) -> None:
    provider = _RecordingProvider()
    queue: DelayingQueue[str] = DelayingQueue("test", clock=fake_clock, metrics_provider=provider)
    queue.add_after("a", 0)
    queue.add_after("a", 1)
    queue.add_after("a", 2)
    assert provider.retries.incs == 3
    queue.shutdown()
    queue.add_after("a", 1)
    assert provider.retries.incs == 3
    assert set(provider.names) == {"test"}


def test_a_queue_built_outside_the_loop_starts_its_updater_at_the_first_get() -> None:
    clock = FakeClock()
    provider = _RecordingProvider()
    queue: WorkQueue[str] = WorkQueue("test", clock=clock, metrics_provider=provider)
    assert not clock.has_waiters()

    async def work() -> None:
        queue.add("a")
        await queue.get()
        await clock.wait_for_waiters()
        clock.step(UNFINISHED_WORK_UPDATE_PERIOD)
        await clock.wait_for_waiters()
        queue.shutdown()

    asyncio.run(work())
    assert provider.unfinished.sets == [pytest.approx(UNFINISHED_WORK_UPDATE_PERIOD)]


def _sample(registry: CollectorRegistry, name: str, labels: dict[str, str]) -> float | None:
    return registry.get_sample_value(name, labels)


async def test_prometheus_export_uses_client_go_names(fake_clock: FakeClock) -> None:
    registry = CollectorRegistry()
    provider = PrometheusMetricsProvider(registry)
    queue: DelayingQueue[str] = DelayingQueue("jobs", clock=fake_clock, metrics_provider=provider)
    labels = {"name": "jobs"}
    queue.add("a")
    queue.add("b")
    queue.add_after("c", 0)
    fake_clock.step(0.002)
    await queue.get()
    fake_clock.step(0.03)
    queue.done("a")
    fake_clock.step(UNFINISHED_WORK_UPDATE_PERIOD)
    await fake_clock.wait_for_waiters()

    assert _sample(registry, "workqueue_depth", labels) == 2
    assert _sample(registry, "workqueue_adds_total", labels) == 3
    assert _sample(registry, "workqueue_retries_total", labels) == 1
    assert _sample(registry, "workqueue_queue_duration_seconds_count", labels) == 1
    assert _sample(registry, "workqueue_queue_duration_seconds_sum", labels) == pytest.approx(0.002)
    assert _sample(registry, "workqueue_queue_duration_seconds_bucket", {**labels, "le": "0.001"}) == 0
    assert _sample(registry, "workqueue_queue_duration_seconds_bucket", {**labels, "le": "0.01"}) == 1
    assert _sample(registry, "workqueue_queue_duration_seconds_bucket", {**labels, "le": "+Inf"}) == 1
    assert _sample(registry, "workqueue_work_duration_seconds_bucket", {**labels, "le": "0.01"}) == 0
    assert _sample(registry, "workqueue_work_duration_seconds_bucket", {**labels, "le": "0.1"}) == 1
    assert _sample(registry, "workqueue_work_duration_seconds_sum", labels) == pytest.approx(0.03)
    assert _sample(registry, "workqueue_unfinished_work_seconds", labels) == 0
    assert _sample(registry, "workqueue_longest_running_processor_seconds", labels) == 0
    queue.shutdown()


def test_prometheus_buckets_run_from_ten_nanoseconds_to_a_thousand_seconds() -> None:
    registry = CollectorRegistry()
    provider = PrometheusMetricsProvider(registry)
    provider.new_latency_metric("q").observe(5000)
    bounds = [
        sample.labels["le"]
        for metric in registry.collect()
        if metric.name == "workqueue_queue_duration_seconds"
        for sample in metric.samples
        if sample.name.endswith("_bucket")
    ]
    assert bounds == ["1e-08", "1e-07", "1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1.0", "10.0",
                      "100.0", "1000.0", "+Inf"]  # fmt: skip
    assert _sample(registry, "workqueue_queue_duration_seconds_bucket", {"name": "q", "le": "1000.0"}) == 0
    assert _sample(registry, "workqueue_queue_duration_seconds_bucket", {"name": "q", "le": "+Inf"}) == 1


def test_prometheus_controller_label_carries_the_queue_name() -> None:
    registry = CollectorRegistry()
    provider = PrometheusMetricsProvider(registry, label_names=("name", "controller"))
    queue: WorkQueue[str] = WorkQueue("deployment", metrics_provider=provider)
    queue.add("ns/a")
    labels = {"name": "deployment", "controller": "deployment"}
    assert _sample(registry, "workqueue_adds_total", labels) == 1


def test_queues_sharing_a_name_share_their_series() -> None:
    registry = CollectorRegistry()
    provider = PrometheusMetricsProvider(registry)
    first: WorkQueue[str] = WorkQueue("same", metrics_provider=provider)
    second: WorkQueue[str] = WorkQueue("same", metrics_provider=provider)
    first.add("a")
    second.add("a")
    assert _sample(registry, "workqueue_adds_total", {"name": "same"}) == 2


def test_a_second_provider_on_one_registry_is_refused() -> None:
    registry = CollectorRegistry()
    PrometheusMetricsProvider(registry)
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        PrometheusMetricsProvider(registry)


def test_a_provider_needs_a_label() -> None:
    with pytest.raises(ValueError, match="label"):
        PrometheusMetricsProvider(CollectorRegistry(), label_names=())


async def test_prometheus_recorder_matches_the_generic_one(fake_clock: FakeClock) -> None:
    """The upstream metrics scenario again, through the Prometheus provider's inline recorder."""
    registry = CollectorRegistry()
    queue: WorkQueue[str] = WorkQueue(
        "test", clock=fake_clock, metrics_provider=PrometheusMetricsProvider(registry)
    )
    labels = {"name": "test"}

    def sample(name: str) -> float | None:
        return _sample(registry, name, labels)

    await fake_clock.wait_for_waiters()
    queue.add("foo")
    assert (sample("workqueue_adds_total"), sample("workqueue_depth")) == (1, 1)
    fake_clock.step(50e-6)
    await queue.get()
    assert sample("workqueue_queue_duration_seconds_sum") == pytest.approx(50e-6)
    for _ in range(5):
        queue.add("foo")
    assert (sample("workqueue_adds_total"), sample("workqueue_depth")) == (2, 1)
    fake_clock.step(25e-6)
    queue.done("foo")
    assert sample("workqueue_work_duration_seconds_sum") == pytest.approx(25e-6)
    assert sample("workqueue_depth") == 1
    await queue.get()
    assert sample("workqueue_queue_duration_seconds_sum") == pytest.approx(75e-6)
    assert sample("workqueue_queue_duration_seconds_count") == 2
    assert _sample(registry, "workqueue_queue_duration_seconds_bucket", {**labels, "le": "1e-05"}) == 0
    assert _sample(registry, "workqueue_queue_duration_seconds_bucket", {**labels, "le": "0.0001"}) == 2

    queue.add("bar")
    await queue.get()
    fake_clock.step(UNFINISHED_WORK_UPDATE_PERIOD)
    await fake_clock.wait_for_waiters()
    assert sample("workqueue_unfinished_work_seconds") == pytest.approx(2 * UNFINISHED_WORK_UPDATE_PERIOD)
    assert sample("workqueue_longest_running_processor_seconds") == pytest.approx(UNFINISHED_WORK_UPDATE_PERIOD)
    queue.done("foo")
    assert sample("workqueue_work_duration_seconds_count") == 2
    assert sample("workqueue_work_duration_seconds_sum") == pytest.approx(25e-6 + UNFINISHED_WORK_UPDATE_PERIOD)
    queue.shutdown()

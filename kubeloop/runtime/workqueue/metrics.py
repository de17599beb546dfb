"""How work queues report metrics, and the recorder that feeds them.

A `MetricsProvider` hands each named queue seven metric objects (one constructor per metric,
given the queue's name), exactly the shape of client-go's provider interface, so a test can
plug in recording fakes and a controller manager can plug in Prometheus
(`kubeloop.runtime.workqueue.prometheus.PrometheusMetricsProvider`). Unnamed queues get no
metrics at all: no provider call, no clock reads, no background task.

What a named queue records (client-go's rules):
- add (only when the item was not already pending): adds +1, depth +1, and the add time; an
  item re-added while being processed therefore counts in depth although `len(queue)` does not
  show it yet, and its queue latency runs from that re-add;
- get: depth -1, the processing start time, and the time since the add in the latency histogram;
- done: the time since the get in the work-duration histogram;
- every 500 ms: the summed and the largest age of the items being processed.

The queue keeps the add and start times itself, as the values of its `dirty` and `processing`
dicts (they live exactly as long as client-go's two timestamp maps), and hands a
`QueueMetricsRecorder` only the resulting numbers. A recorder that is also a
`kubeloop.runtime.workqueue.batch.BatchingRecorder` (the Prometheus provider's) is not called at
all: the queue bumps its adds counter and appends durations to its histograms' pending lists
inline, and the histograms count them into buckets in batches.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from kubeloop.runtime.workqueue.prometheus import PrometheusMetricsProvider


class GaugeMetric(Protocol):
    """A value that goes up and down by one."""

    def inc(self) -> None: ...
    def dec(self) -> None: ...


class SettableGaugeMetric(Protocol):
    """A value that is set outright."""

    def set(self, value: float) -> None: ...


class CounterMetric(Protocol):
    """A value that only goes up by one."""

    def inc(self) -> None: ...


class HistogramMetric(Protocol):
    """A distribution of observed values (seconds, here)."""

    def observe(self, value: float) -> None: ...


class MetricsProvider(Protocol):
    """Makes the metric objects of one named queue. Called once per metric per queue."""

    def new_depth_metric(self, name: str) -> GaugeMetric: ...
    def new_adds_metric(self, name: str) -> CounterMetric: ...
    def new_latency_metric(self, name: str) -> HistogramMetric: ...
    def new_work_duration_metric(self, name: str) -> HistogramMetric: ...
    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric: ...
    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric: ...
    def new_retries_metric(self, name: str) -> CounterMetric: ...


class QueueMetricsRecorder(Protocol):
    """What a named queue reports, already reduced to numbers."""

    def added(self) -> None:
        """An item became pending (it was not already)."""

    def got(self, waited: float | None) -> None:
        """An item was handed out after `waited` seconds pending (None: no add time known)."""

    def finished(self, worked: float) -> None:
        """An item was done after `worked` seconds of processing."""

    def update_unfinished_work(self, now: float, start_times: Iterable[float]) -> None:
        """Refresh the unfinished-work gauges from the start times of the items in process."""


@runtime_checkable
class QueueMetricsRecorderFactory(Protocol):
    """Optional extra of a provider: a whole recorder at once, instead of seven metric objects.

    A provider that keeps its numbers itself (as `PrometheusMetricsProvider` does) can then
    update them inline, without one method call per metric per operation (see
    `bench/workqueue.py`), or let the queue do so (`BatchingRecorder`). Its recorder must
    record exactly what `QueueMetrics` records.
    """

    def new_queue_metrics(self, name: str) -> QueueMetricsRecorder: ...


def new_queue_metrics(provider: MetricsProvider, name: str) -> QueueMetricsRecorder:
    """The recorder of the queue `name`: the provider's own if it offers one, else `QueueMetrics`."""
    if isinstance(provider, QueueMetricsRecorderFactory):
        return provider.new_queue_metrics(name)
    return QueueMetrics(provider, name)


class QueueMetrics:
    """A recorder over a provider's seven metric objects (any `MetricsProvider`)."""

    __slots__ = ("_adds", "_depth", "_latency", "_longest_running", "_unfinished_work", "_work_duration")

    def __init__(self, provider: MetricsProvider, name: str) -> None:
        self._depth = provider.new_depth_metric(name)
        self._adds = provider.new_adds_metric(name)
        self._latency = provider.new_latency_metric(name)
        self._work_duration = provider.new_work_duration_metric(name)
        self._unfinished_work = provider.new_unfinished_work_seconds_metric(name)
        self._longest_running = provider.new_longest_running_processor_seconds_metric(name)

    def added(self) -> None:
        self._adds.inc()
        self._depth.inc()

    def got(self, waited: float | None) -> None:
        self._depth.dec()
        if waited is not None:
            self._latency.observe(waited)

    def finished(self, worked: float) -> None:
        self._work_duration.observe(worked)

    def update_unfinished_work(self, now: float, start_times: Iterable[float]) -> None:
        total = 0.0
        longest = 0.0
        for started in start_times:
            age = now - started
            total += age
            if age > longest:
                longest = age
        self._unfinished_work.set(total)
        self._longest_running.set(longest)


_default_provider: MetricsProvider | None = None


def set_default_metrics_provider(provider: MetricsProvider) -> None:
    """Use `provider` for named queues created from now on without an explicit provider.

    Unlike client-go's `SetProvider` (first call wins) a later call replaces the default; a
    controller manager that wants extra labels calls this before it creates its queues.
    """
    global _default_provider
    _default_provider = provider


def default_metrics_provider() -> MetricsProvider:
    """The provider for named queues created without one.

    Unless `set_default_metrics_provider` chose another, this is a Prometheus provider on
    prometheus_client's global registry with the `name` label (what Kubernetes components
    export), created on first use so importing kubeloop registers nothing.
    """
    global _default_provider
    if _default_provider is None:
        _default_provider = PrometheusMetricsProvider()
    return _default_provider

"""Work-queue metrics exported through prometheus_client, under client-go's names.

Exported families (subsystem `workqueue`), one series per queue name:

| family | type |
|---|---|
| `workqueue_depth` | gauge |
| `workqueue_adds_total` | counter |
| `workqueue_queue_duration_seconds` | histogram, buckets 1e-8 ... 1e3 s (x10 steps) |
| `workqueue_work_duration_seconds` | histogram, same buckets |
| `workqueue_unfinished_work_seconds` | gauge |
| `workqueue_longest_running_processor_seconds` | gauge |
| `workqueue_retries_total` | counter |

Every label in `label_names` carries the queue name: the default `("name",)` is what
Kubernetes components export; controller-runtime exports `("name", "controller")`, both set to
the controller's name, and a manager gets that with `label_names=("name", "controller")`.

Why not prometheus_client's own `Counter`/`Histogram`: each of their updates takes a lock and
walks label machinery, which costs more than the queue operation it measures (measured in
`bench/workqueue.py`). Here the metric objects are plain Python numbers updated on the event
loop's thread, histograms take raw observations counted into buckets in batches
(`kubeloop.runtime.workqueue.batch`), and a custom collector turns them into metric families
when scraped. A scrape from another thread may see one series a few updates behind another;
each value on its own is consistent.

Queues sharing a name share their series, as children of a Prometheus metric vector do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from kubeloop.runtime.workqueue.batch import BatchedHistogram

DURATION_BUCKETS: tuple[float, ...] = tuple(float(f"1e{exponent}") for exponent in range(-8, 4))
"""Upper bounds of the duration histograms: 1e-8 s to 1e3 s, twelve buckets, as controller-runtime."""

# The `le` label of each bucket, spelled as prometheus_client spells its own (Go float format).
_BUCKET_LABELS: tuple[str, ...] = tuple(repr(bound) for bound in DURATION_BUCKETS)


class _Value:
    """A gauge or counter: one float, changed in place."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self) -> None:
        self.value += 1.0

    def dec(self) -> None:
        self.value -= 1.0

    def set(self, value: float) -> None:
        self.value = value


class _QueueSeries:
    """The metrics of one queue name, and the batching recorder of the queues of that name.

    Two sets of numbers, summed when scraped: the seven metric objects a `MetricsProvider`
    hands out one by one (`depth` ... `retries`, updated by whoever holds them), and the
    batching recorder's own (`adds`, `unmatched_gets`, `latency_batch`, `work_batch`), which
    work queues update inline (`kubeloop.runtime.workqueue.batch.BatchingRecorder`). The
    recorder keeps no depth: it is the adds minus the gets, and every get is either a latency
    observation or an unmatched get (an item handed out with no add time, after misuse).
    """

    __slots__ = (
        "adds",
        "depth",
        "extra_adds",
        "latency",
        "latency_batch",
        "longest_running",
        "retries",
        "unfinished_work",
        "unmatched_gets",
        "work_batch",
        "work_duration",
    )

    def __init__(self) -> None:
        self.depth = _Value()
        self.latency = BatchedHistogram(DURATION_BUCKETS)
        self.work_duration = BatchedHistogram(DURATION_BUCKETS)
        self.unfinished_work = _Value()
        self.longest_running = _Value()
        self.retries = _Value()
        self.adds = 0
        self.unmatched_gets = 0
        self.latency_batch = BatchedHistogram(DURATION_BUCKETS)
        self.work_batch = BatchedHistogram(DURATION_BUCKETS)
        # The adds counter handed out by `new_adds_metric`, apart from the recorder's `adds`.
        self.extra_adds = _Value()

    # `QueueMetricsRecorder`, for callers that do not record inline.
    def added(self) -> None:
        self.adds += 1

    def got(self, waited: float | None) -> None:
        if waited is None:
            self.unmatched_gets += 1
        else:
            self.latency_batch.pending.append(waited)

    def finished(self, worked: float) -> None:
        self.work_batch.pending.append(worked)

    def update_unfinished_work(self, now: float, start_times: Iterable[float]) -> None:
        ages = [now - started for started in start_times]
        self.unfinished_work.value = sum(ages)
        self.longest_running.value = max(ages, default=0.0)

    def fold(self) -> None:
        self.latency_batch.fold()
        self.work_batch.fold()

    def exported(self) -> tuple[float, float, _Snapshot, _Snapshot]:
        """(adds, depth, latency, work duration) as scraped: both sets of numbers summed."""
        latency = _merge(self.latency.snapshot(), self.latency_batch.snapshot())
        work = _merge(self.work_duration.snapshot(), self.work_batch.snapshot())
        adds = self.adds
        gets = self.latency_batch.snapshot()[1] + self.unmatched_gets
        return self.extra_adds.value + adds, self.depth.value + adds - gets, latency, work


_Snapshot = tuple[tuple[int, ...], int, float]


def _merge(first: _Snapshot, second: _Snapshot) -> _Snapshot:
    return (
        tuple(a + b for a, b in zip(first[0], second[0])),
        first[1] + second[1],
        first[2] + second[2],
    )


class PrometheusMetricsProvider:
    """A `MetricsProvider` whose metrics a prometheus_client registry collects.

    `registry` defaults to prometheus_client's global one; tests pass their own
    `CollectorRegistry()` so they do not collide. Registering two providers on one registry
    fails with prometheus_client's duplicate-name `ValueError`.
    """

    def __init__(
        self,
        registry: CollectorRegistry | None = REGISTRY,
        *,
        label_names: Sequence[str] = ("name",),
    ) -> None:
        if not label_names:
            raise ValueError("label_names must name at least one label for the queue name")
        self.label_names: tuple[str, ...] = tuple(label_names)
        self._series: dict[str, _QueueSeries] = {}
        self._collector = _WorkQueueCollector(self)
        if registry is not None:
            registry.register(self._collector)

    @property
    def collector(self) -> Collector:
        """The collector to register by hand when the provider was made with `registry=None`."""
        return self._collector

    def series_items(self) -> list[tuple[str, _QueueSeries]]:
        # list() of a dict's items is one C call, so it is safe against the loop thread adding a
        # queue name while another thread scrapes.
        return list(self._series.items())

    def _series_for(self, name: str) -> _QueueSeries:
        series = self._series.get(name)
        if series is None:
            series = self._series[name] = _QueueSeries()
        return series

    def new_queue_metrics(self, name: str) -> _QueueSeries:
        """The batching recorder for the queue `name` (see `QueueMetricsRecorderFactory`)."""
        return self._series_for(name)

    def new_depth_metric(self, name: str) -> _Value:
        return self._series_for(name).depth

    def new_adds_metric(self, name: str) -> _Value:
        return self._series_for(name).extra_adds

    def new_latency_metric(self, name: str) -> BatchedHistogram:
        return self._series_for(name).latency

    def new_work_duration_metric(self, name: str) -> BatchedHistogram:
        return self._series_for(name).work_duration

    def new_unfinished_work_seconds_metric(self, name: str) -> _Value:
        return self._series_for(name).unfinished_work

    def new_longest_running_processor_seconds_metric(self, name: str) -> _Value:
        return self._series_for(name).longest_running

    def new_retries_metric(self, name: str) -> _Value:
        return self._series_for(name).retries


class _WorkQueueCollector(Collector):
    """Turns a provider's plain numbers into Prometheus metric families at scrape time."""

    def __init__(self, provider: PrometheusMetricsProvider) -> None:
        self._provider = provider

    def describe(self) -> Iterable[Metric]:
        # Naming the families up front lets the registry reject a second provider at register
        # time instead of exporting every family twice.
        return _Families(self._provider.label_names).all()

    def collect(self) -> Iterable[Metric]:
        families = _Families(self._provider.label_names)
        width = len(self._provider.label_names)
        for name, series in self._provider.series_items():
            labels = [name] * width
            adds, depth, latency, work_duration = series.exported()
            families.depth.add_metric(labels, depth)
            families.adds.add_metric(labels, adds)
            _add_histogram(families.latency, labels, latency)
            _add_histogram(families.work_duration, labels, work_duration)
            families.unfinished_work.add_metric(labels, series.unfinished_work.value)
            families.longest_running.add_metric(labels, series.longest_running.value)
            families.retries.add_metric(labels, series.retries.value)
        return families.all()


class _Families:
    """The seven empty metric families, ready to receive one sample set per queue name."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.depth = GaugeMetricFamily("workqueue_depth", "Current depth of the work queue.", labels=labels)
        self.adds = CounterMetricFamily("workqueue_adds", "Total adds handled by the work queue.", labels=labels)
        self.latency = HistogramMetricFamily(
            "workqueue_queue_duration_seconds",
            "Seconds an item waits in the work queue before it is handed to a worker.",
            labels=labels,
        )
        self.work_duration = HistogramMetricFamily(
            "workqueue_work_duration_seconds",
            "Seconds a worker takes to process an item from the work queue.",
            labels=labels,
        )
        self.unfinished_work = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "Summed age in seconds of the items being processed right now; large values point at stuck workers.",
            labels=labels,
        )
        self.longest_running = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "Age in seconds of the longest-running item being processed right now.",
            labels=labels,
        )
        self.retries = CounterMetricFamily(
            "workqueue_retries", "Total retries handled by the work queue.", labels=labels
        )

    def all(self) -> list[Metric]:
        return [
            self.depth,
            self.adds,
            self.latency,
            self.work_duration,
            self.unfinished_work,
            self.longest_running,
            self.retries,
        ]


def _add_histogram(family: HistogramMetricFamily, labels: list[str], histogram: _Snapshot) -> None:
    cumulative, count, total = histogram
    buckets: list[tuple[str, float]] = list(zip(_BUCKET_LABELS, cumulative))
    buckets.append(("+Inf", count))
    family.add_metric(labels, buckets, total)

"""The API server's Prometheus metrics, under kube-apiserver 1.33's names and labels.

Served at ``GET /metrics`` (behind the bearer token, like every non-public path). Families:

| family | type | labels |
|---|---|---|
| ``apiserver_request_total`` | counter | REQUEST labels, code |
| ``apiserver_request_duration_seconds`` | histogram | REQUEST labels |
| ``apiserver_storage_objects`` | gauge | resource (``pods``, ``deployments.apps``) |
| ``apiserver_watch_events_total`` | counter | group, version, kind |
| ``apiserver_watch_events_sizes`` | histogram | group, version, kind |

where REQUEST labels are verb, dry_run, group, version, resource, subresource, scope and
component (always ``apiserver``), plus prometheus_client's ``process_*`` families. As upstream (``k8s.io/apiserver``
``pkg/endpoints/metrics``, ``MonitorRequest``): a resource request is recorded once its handler
has answered, a watch therefore when it ends (its duration is the watch's lifetime, as
upstream's, whose histogram has WATCH series too); requests that reach no handler (unknown
paths, verbs a resource does not serve, discovery) are not recorded. Labels come from
:mod:`kubeloop.server.request_labels`. ``apiserver_storage_objects`` is read from the store
when scraped (upstream polls every minute), one series per stored resource, 0 when empty.
``apiserver_watch_events_total`` counts every event line sent to a watcher (initial ADDED
events, changes, bookmarks, errors), as ``pkg/endpoints/handlers/watch.go``;
``apiserver_watch_events_sizes`` observes the size of the event's object each time one is
encoded: once per change however many watchers share it, as upstream's cached encoding does.
1.33 labels the watch families by kind; later releases moved them to ``resource``.

Cost: every update is a few plain-number operations on the event loop's thread (one dict
look-up on a label tuple, a ``bisect`` over the buckets, two additions); a custom collector
turns them into metric families only when scraped, as
:mod:`kubeloop.runtime.workqueue.prometheus` does and for the same reason (prometheus_client's
own metric objects take a lock and walk label machinery on every update). Each server owns its
:class:`ApiMetrics` and registry, so several servers can run in one process.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from aiohttp import web
from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from kubeloop.server.request_labels import dry_run_label, group_resource, request_scope, request_verb

if TYPE_CHECKING:
    from kubeloop.server.registry import Registry
    from kubeloop.server.routing import Target
    from kubeloop.server.storage import Storage

COMPONENT = "apiserver"

REQUEST_DURATION_BUCKETS: tuple[float, ...] = (
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0,
    30.0, 45.0, 60.0)
"""Upper bounds of ``apiserver_request_duration_seconds``, upstream's."""

WATCH_EVENT_SIZE_BUCKETS: tuple[float, ...] = tuple(1024.0 * 2 ** i for i in range(8))
"""Upper bounds of ``apiserver_watch_events_sizes``: 1 KiB to 128 KiB, doubling, upstream's."""

REQUEST_LABELS = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
WATCH_LABELS = ("group", "version", "kind")

RequestKey = tuple[str, str, str, str, str, str, str]
"""verb, dry_run, group, version, resource, subresource, scope (component is constant)."""


class _Histogram:
    """Per-bucket (not cumulative) counts, the last one past every bound, and the sum."""

    __slots__ = ("counts", "total")

    def __init__(self, bounds: int) -> None:
        self.counts = [0] * (bounds + 1)
        self.total = 0.0

    def family_buckets(self, bounds: tuple[float, ...]) -> list[tuple[str, float]]:
        buckets: list[tuple[str, float]] = []
        cumulative = 0
        for bound, count in zip(bounds, self.counts, strict=False):
            cumulative += count
            buckets.append((_float_text(bound), cumulative))
        buckets.append(("+Inf", cumulative + self.counts[-1]))
        return buckets


class _RequestSeries(_Histogram):
    """One request label set: its duration histogram and its count per response code."""

    __slots__ = ("codes",)

    def __init__(self) -> None:
        super().__init__(len(REQUEST_DURATION_BUCKETS))
        self.codes: dict[int, int] = {}


class WatchSeries(_Histogram):
    """One watched (group, version, kind): events sent and the sizes of encoded objects."""

    __slots__ = ("events",)

    def __init__(self) -> None:
        super().__init__(len(WATCH_EVENT_SIZE_BUCKETS))
        self.events = 0

    def observe_size(self, size: int) -> None:
        self.counts[bisect.bisect_left(WATCH_EVENT_SIZE_BUCKETS, size)] += 1
        self.total += size


def _float_text(value: float) -> str:
    """A bucket bound as prometheus_client spells its own (``0.005``, ``1.0``, ``1024.0``)."""
    return repr(float(value))


class ApiMetrics:
    """The metrics of one API server; updated from its event loop only."""

    def __init__(self) -> None:
        self._requests: dict[RequestKey, _RequestSeries] = {}
        self._watches: dict[tuple[str, str, str], WatchSeries] = {}
        self.object_counts: Callable[[], Iterable[tuple[str, int]]] = tuple
        """Stored objects per ``resource`` label, read when scraped (the server sets it)."""
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_Collector(self))
        ProcessCollector(registry=self.registry)

    def observe_request(self, request: web.Request, target: Target, code: int, seconds: float) -> None:
        """Record one answered resource request."""
        method = request.method
        query = request.query  # parsed (and cached on the request) by the handlers already
        scope = request_scope(method, target.namespace, target.name)
        if method == "GET":
            verb = request_verb(method, scope, query.get("watch"), None)
        elif method == "PATCH":
            verb = request_verb(method, scope, None, request.headers.get("Content-Type"))
        else:
            verb = request_verb(method, scope, None, None)
        dry_run_values = query.getall("dryRun", None)
        dry_run = dry_run_label(dry_run_values) if dry_run_values else ""
        info = target.info
        key = (verb, dry_run, info.group, info.version, info.resource, target.subresource or "", scope)
        series = self._requests.get(key)
        if series is None:
            series = self._requests[key] = _RequestSeries()
        codes = series.codes
        codes[code] = codes.get(code, 0) + 1
        series.counts[bisect.bisect_left(REQUEST_DURATION_BUCKETS, seconds)] += 1
        series.total += seconds

    def watch_series(self, group: str, version: str, kind: str) -> WatchSeries:
        """The series a watch of this kind updates (looked up once per watch)."""
        key = (group, version, kind)
        series = self._watches.get(key)
        if series is None:
            series = self._watches[key] = WatchSeries()
        return series

    def families(self) -> Iterator[Metric]:
        requests = CounterMetricFamily("apiserver_request_total", "Requests answered, by verb, dry run value, group, "
                                       "version, resource, subresource, scope, component and HTTP code.",
                                       labels=(*REQUEST_LABELS, "code"))
        durations = HistogramMetricFamily("apiserver_request_duration_seconds", "Seconds from a request's arrival "
                                          "to its answer (a watch's whole lifetime).", labels=REQUEST_LABELS)
        for key, series in list(self._requests.items()):
            labels = [*key, COMPONENT]
            for code, count in sorted(series.codes.items()):
                requests.add_metric([*labels, str(code)], count)
            durations.add_metric(labels, series.family_buckets(REQUEST_DURATION_BUCKETS), series.total)
        yield requests
        yield durations
        objects = GaugeMetricFamily("apiserver_storage_objects", "Objects stored, by resource.", labels=("resource",))
        for resource, count in self.object_counts():
            objects.add_metric([resource], count)
        yield objects
        events = CounterMetricFamily("apiserver_watch_events_total", "Events sent to watchers, by group, version "
                                     "and kind.", labels=WATCH_LABELS)
        sizes = HistogramMetricFamily("apiserver_watch_events_sizes", "Bytes of each encoded watch event's object.",
                                      labels=WATCH_LABELS)
        for watch_key, watch in list(self._watches.items()):
            events.add_metric(list(watch_key), watch.events)
            sizes.add_metric(list(watch_key), watch.family_buckets(WATCH_EVENT_SIZE_BUCKETS), watch.total)
        yield events
        yield sizes

    def exposition(self) -> bytes:
        """Every family in the Prometheus text format."""
        return generate_latest(self.registry)


class _Collector(Collector):
    def __init__(self, metrics: ApiMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterable[Metric]:
        return self._metrics.families()


def stored_object_counts(registry: Registry, storage: Storage) -> Iterator[tuple[str, int]]:
    """Objects per stored resource (every served resource that can be listed), sorted."""
    stored = {info.resource_type for group in registry.groups() for version in registry.versions(group)
              for info in registry.resources(group, version) if "list" in info.verbs}
    for rt in sorted(stored, key=lambda rt: (rt.group, rt.resource)):
        yield group_resource(rt.group, rt.resource), storage.count(rt)


def metrics_response(metrics: ApiMetrics) -> web.Response:
    # The text format kube-apiserver serves (0.0.4): what every Prometheus version scrapes.
    return web.Response(body=metrics.exposition(), headers={"Content-Type": CONTENT_TYPE_PLAIN_0_0_4})

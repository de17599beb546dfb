"""Request metrics: a hook the client calls once per HTTP attempt.

The client only knows the :class:`RequestMetrics` protocol; a manager plugs in
:class:`PrometheusRequestMetrics` to export client-go's names
(``rest_client_requests_total{code,method,host}`` and
``rest_client_request_duration_seconds{verb,host}``), and tests use
:class:`CountingRequestMetrics`. ``code`` is the HTTP status as a string, or ``<error>`` when
no answer came back, as in client-go.
"""

from __future__ import annotations

from collections import Counter as _Tally
from typing import Protocol

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

ERROR_CODE = "<error>"


class RequestMetrics(Protocol):
    def observe(self, method: str, host: str, code: str, seconds: float) -> None:
        """Record one attempt: HTTP ``method``, server ``host``, status ``code``, duration."""
        ...


class CountingRequestMetrics:
    """Counts attempts by ``(method, code)`` in memory."""

    def __init__(self) -> None:
        self.counts: _Tally[tuple[str, str]] = _Tally()

    def observe(self, method: str, host: str, code: str, seconds: float) -> None:
        self.counts[(method, code)] += 1


class PrometheusRequestMetrics:
    """client-go's REST client metrics on a prometheus_client registry (injectable)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        target = registry if registry is not None else REGISTRY
        self.requests = Counter(
            "rest_client_requests_total",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            ["code", "method", "host"],
            registry=target,
        )
        self.latency = Histogram(
            "rest_client_request_duration_seconds",
            "Request latency in seconds, broken down by verb and host.",
            ["verb", "host"],
            buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0),
            registry=target,
        )

    def observe(self, method: str, host: str, code: str, seconds: float) -> None:
        self.requests.labels(code, method, host).inc()
        self.latency.labels(method, host).observe(seconds)

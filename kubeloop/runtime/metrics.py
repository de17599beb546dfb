"""Prometheus metrics of the controller runtime, with controller-runtime's names.

One :class:`RuntimeMetrics` per registry holds the metric families; controllers take labelled
children from it. Tests pass their own ``CollectorRegistry`` so they never collide on the
process-wide default one.
"""

from __future__ import annotations

from typing import ClassVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

RECONCILE_TIME_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
    1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0, 25.0, 30.0,
    40.0, 50.0, 60.0,
)  # fmt: skip
RESULTS = ("success", "error", "requeue", "requeue_after")


class RuntimeMetrics:
    """The ``controller_runtime_*`` and ``leader_election_*`` families of one registry."""

    _by_registry: ClassVar[dict[int, RuntimeMetrics]] = {}

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.reconcile_total = Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller",
            ["controller", "result"],
            registry=registry,
        )
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller",
            ["controller"],
            registry=registry,
        )
        self.terminal_errors = Counter(
            "controller_runtime_terminal_reconcile_errors_total",
            "Total number of terminal reconciliation errors per controller",
            ["controller"],
            registry=registry,
        )
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            ["controller"],
            buckets=RECONCILE_TIME_BUCKETS,
            registry=registry,
        )
        self.active_workers = Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            ["controller"],
            registry=registry,
        )
        self.max_concurrent = Gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            ["controller"],
            registry=registry,
        )
        self.leader = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 master.",
            ["name"],
            registry=registry,
        )
        self.leader_slowpath = Counter(
            "leader_election_slowpath_total",
            "Total number of slow path exercised in renewing leader leases.",
            ["name"],
            registry=registry,
        )

    @classmethod
    def for_registry(cls, registry: CollectorRegistry) -> RuntimeMetrics:
        metrics = cls._by_registry.get(id(registry))
        if metrics is None or metrics.registry is not registry:
            metrics = cls(registry)
            cls._by_registry[id(registry)] = metrics
        return metrics

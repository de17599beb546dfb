"""Fixtures: the embedded cluster (API server, simulated kubelet, ReplicaSet, Deployment and
garbage-collector controllers) and invariant monitors checked when each test ends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from deployment_e2e_kit import StartMonitor

from kubeloop.runtime.informers.mutation import ENV_VAR
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config
from kubeloop.testing.monitor import DeploymentMonitor
from kubeloop.testing.replicaset_monitor import ReplicaSetMonitor


@pytest.fixture
def kubeloop_cluster_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ClusterConfig:
    # Every informer checks that nobody changed a cached object (checked when the cluster stops).
    monkeypatch.setenv(ENV_VAR, "true")
    return ClusterConfig(data_dir=tmp_path / "cluster", kubelet=quick_kubelet_config(),
                         controllers=("replicaset", "deployment", "garbagecollector"))


@pytest.fixture
async def monitor_for(kubeloop_cluster: EmbeddedCluster) -> AsyncIterator[StartMonitor]:
    """``await monitor_for("web")`` starts a :class:`DeploymentMonitor` for that Deployment;
    every monitor is stopped and checked (no invariant violated) when the test ends."""
    started: list[DeploymentMonitor] = []

    async def start(name: str) -> DeploymentMonitor:
        monitor = DeploymentMonitor(kubeloop_cluster.client, name)
        await monitor.start()
        started.append(monitor)
        return monitor

    yield start
    for monitor in started:
        await monitor.stop()
    for monitor in started:
        monitor.check()


@pytest.fixture
async def replica_set_monitor(kubeloop_cluster: EmbeddedCluster) -> AsyncIterator[ReplicaSetMonitor]:
    """A :class:`ReplicaSetMonitor` over the namespace, checked when the test ends."""
    monitor = ReplicaSetMonitor(kubeloop_cluster.client)
    await monitor.start()
    yield monitor
    await monitor.stop()
    monitor.check()

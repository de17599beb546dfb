"""Fixtures: the embedded cluster (API server, simulated kubelet, the CloneSet controller and
the garbage collector) and the invariant monitor."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from acceptance_kit import PodHistory
from cloneset_monitor import CloneSetMonitor

from kubeloop.runtime.informers.mutation import ENV_VAR
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config


@pytest.fixture
def kubeloop_cluster_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ClusterConfig:
    # Every informer checks that nobody changed a cached object (checked when the cluster stops).
    monkeypatch.setenv(ENV_VAR, "true")
    # The garbage collector removes PVCs that disablePVCReuse hands over to finished pods.
    return ClusterConfig(data_dir=tmp_path / "cluster", kubelet=quick_kubelet_config(),
                         controllers=["cloneset", "garbagecollector"], component_identities=True)


@pytest.fixture
async def cluster(kubeloop_cluster: EmbeddedCluster) -> EmbeddedCluster:
    """The plugin's running cluster, under a short name."""
    return kubeloop_cluster


@pytest.fixture
async def monitor(cluster: EmbeddedCluster) -> AsyncIterator[CloneSetMonitor]:
    """An invariant monitor for the CloneSet named ``e2e``; checked when the test ends."""
    watcher = CloneSetMonitor(cluster.client, "e2e")
    await watcher.start()
    yield watcher
    await watcher.stop()
    watcher.check()


@pytest.fixture
async def history(cluster: EmbeddedCluster) -> AsyncIterator[PodHistory]:
    """Every event of the CloneSet's pods from before the test creates anything."""
    recorder = PodHistory(cluster.client)
    await recorder.start()
    yield recorder
    await recorder.stop()

"""Fixtures: a whole embedded cluster (API server, simulated kubelet, Deployment controllers)
and a dashboard serving it, as ``kubeloop up`` runs them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubeloop.dashboard import start_dashboard
from kubeloop.runtime.informers.mutation import ENV_VAR
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config


@pytest.fixture
def kubeloop_cluster_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ClusterConfig:
    # Every informer of the test process (the dashboard's included) checks, when it stops, that
    # nobody changed a cached object: the dashboard must only read what it is handed.
    monkeypatch.setenv(ENV_VAR, "true")
    return ClusterConfig(data_dir=tmp_path / "cluster", kubelet=quick_kubelet_config(),
                         controllers=["replicaset", "deployment", "garbagecollector"])


@pytest.fixture
async def dashboard_url(kubeloop_cluster: EmbeddedCluster) -> AsyncIterator[str]:
    url, stop = await start_dashboard(kubeloop_cluster.client, "127.0.0.1", 0)
    try:
        yield url
    finally:
        await stop()

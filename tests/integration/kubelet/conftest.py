"""Fixtures: a quick in-process cluster (kubelet only unless a test asks for controllers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_thread import ClusterThread

from kubeloop.testing.cluster import ClusterConfig, quick_kubelet_config


@pytest.fixture
def kube(tmp_path: Path) -> Iterator[ClusterThread]:
    """Server and simulated kubelet, no controllers: pods are created by the tests themselves."""
    cluster = ClusterThread(ClusterConfig(data_dir=tmp_path / "cluster", kubelet=quick_kubelet_config(),
                                          controllers=()))
    try:
        yield cluster
    finally:
        cluster.stop()

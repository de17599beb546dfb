"""pytest plugin registered under the ``kubeloop`` entry point.

Fixtures are added here as the pieces they wrap land.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pytest

from kubeloop.testing.clock import FakeClock

if TYPE_CHECKING:
    from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster


@pytest.fixture
def fake_clock() -> FakeClock:
    """A `FakeClock` at time 0 that moves only when the test calls `step` or `set_time`."""
    return FakeClock()


# -- the embedded cluster -----------------------------------------------------------------
# Imported lazily: loading this plugin (in every pytest run of a project that installs
# kubeloop) must not start importing the server, the kubelet and the controllers.

F = TypeVar("F", bound=Callable[..., Any])


def _async_fixture() -> Callable[[F], F]:
    """pytest-asyncio's fixture decorator (right in its strict mode too), else pytest's own."""
    try:
        import pytest_asyncio
    except ImportError:
        return cast("Callable[[F], F]", pytest.fixture)
    return cast("Callable[[F], F]", pytest_asyncio.fixture)


@pytest.fixture
def kubeloop_cluster_config(tmp_path: Path) -> ClusterConfig:
    """What ``kubeloop_cluster`` runs: every controller and a quick kubelet, in memory.

    Override this fixture in your ``conftest.py`` to choose controllers, nodes or pod delays.
    """
    from kubeloop.testing.cluster import ClusterConfig, quick_kubelet_config

    return ClusterConfig(data_dir=tmp_path / "kubeloop-cluster", kubelet=quick_kubelet_config())


@_async_fixture()
async def kubeloop_cluster(kubeloop_cluster_config: ClusterConfig) -> AsyncIterator[EmbeddedCluster]:
    """A running in-process cluster (API server on a free port, kubelet, controllers), stopped afterwards.

    Yields an :class:`~kubeloop.testing.cluster.EmbeddedCluster`: ``.client`` (a kubeloop
    ``ApiClient``), ``.kubeconfig_path`` (for any other client), and ``wait_for`` /
    ``wait_for_condition`` / ``wait_deleted`` helpers. Its caches have synced and its nodes
    are registered when the test starts.
    """
    from kubeloop.testing.cluster import EmbeddedCluster

    cluster = EmbeddedCluster(kubeloop_cluster_config)
    await cluster.start()
    try:
        await cluster.wait_ready()
        yield cluster
    finally:
        await cluster.stop()

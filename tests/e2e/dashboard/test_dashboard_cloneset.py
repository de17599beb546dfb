"""A CloneSet rollout held by a partition, as the dashboard's feed sees it through real watches."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kubeloop.dashboard.feed import DashboardFeed, watch_cluster
from kubeloop.dashboard.model import ClusterModel
from kubeloop.runtime.informers.mutation import ENV_VAR
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config

CLONESETS = "clonesets.apps.kruise.io"


@pytest.fixture
def kubeloop_cluster_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ClusterConfig:
    monkeypatch.setenv(ENV_VAR, "true")  # the dashboard must never change a cached object
    return ClusterConfig(data_dir=tmp_path / "cluster", kubelet=quick_kubelet_config(), controllers=["cloneset"])


@pytest.fixture
async def feed(kubeloop_cluster: EmbeddedCluster) -> AsyncIterator[DashboardFeed]:
    client = kubeloop_cluster.client
    dashboard_feed = DashboardFeed(ClusterModel(namespace="default"), interval=0.01)
    stop = await watch_cluster(client, dashboard_feed, namespace="default")
    dashboard_feed.start()
    try:
        yield dashboard_feed
    finally:
        await dashboard_feed.stop()
        await stop()


async def view_when(feed: DashboardFeed, check: Any, timeout: float = 60.0) -> dict[str, Any]:
    """The CloneSet's view once ``check(view)`` holds, following the feed's messages."""
    async with asyncio.timeout(timeout):
        async for _ in feed.subscribe():
            views = [v for v in feed.views() if v["kind"] == "CloneSet"]
            if views and check(views[0]):
                return views[0]
    raise AssertionError("the feed stopped")


def cloneset(image: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "default"},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "cs"}},
            "template": {"metadata": {"labels": {"app": "cs"}},
                         "spec": {"containers": [{"name": "app", "image": image}]}},
            "updateStrategy": {"type": "ReCreate", "partition": 2, "maxUnavailable": 1},
        },
    }


@pytest.mark.e2e
async def test_partitioned_cloneset_rollout(kubeloop_cluster: EmbeddedCluster, feed: DashboardFeed) -> None:
    client = kubeloop_cluster.client
    await client.create(CLONESETS, cloneset("registry.example/cs:1"), namespace="default")
    first = await view_when(feed, lambda v: v["rollout"]["phase"] == "complete" and
                            [p["state"] for p in v["pods"]] == ["available"] * 4)
    assert [(r["revision"], r["isUpdate"]) for r in first["revisions"]] == [(1, True)]

    current = await client.get(CLONESETS, "cs", namespace="default")
    current["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/cs:2"
    await client.update(CLONESETS, current, namespace="default")

    # The partition keeps two pods on revision 1: the rollout completes with both revisions live.
    done = await view_when(feed, lambda v: v["rollout"]["phase"] == "complete" and len(v["revisions"]) == 2
                           and [p["state"] for p in v["pods"]] == ["available"] * 4
                           and v["revisions"][0]["current"] == 2)
    new, old = done["revisions"]
    assert (new["revision"], new["isUpdate"], new["desired"], new["image"]) == (2, True, 2, "registry.example/cs:2")
    assert (old["revision"], old["isUpdate"], old["current"]) == (1, False, 2)
    assert done["progress"]["expectedUpdated"] == 2
    assert done["rollout"]["message"] == 'cloneset "cs" successfully rolled out'
    assert [p["revision"] for p in done["pods"]] == [new["id"]] * 2 + [old["id"]] * 2

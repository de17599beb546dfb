"""The kubelet's report of an unchanged pod, compared with the status the API server stored,
asks for no write (kubeloop/kubelet/podstatus.py, ``same_status``): the embedded server answers
conditions without the ``lastProbeTime: null`` the kubelet sends, and a plain comparison made
every later event of a running pod cost a PUT of an unchanged status."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kubeloop.client import PODS, ApiClient, load_kubeconfig
from kubeloop.kubelet.agent import ACTIVE_ON_NODE_INDEX, NODE_INDEX, Kubelet, _active_on_node_index, _pod_node_index
from kubeloop.kubelet.behaviour import PodBehaviour
from kubeloop.kubelet.containers import BackOff
from kubeloop.kubelet.podstate import advance_pod, new_pod_memo
from kubeloop.kubelet.podstatus import render_status, same_status
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.informers.store import Indexer
from kubeloop.server.app import KubeServer, ServerConfig
from kubeloop.testing.cluster import quick_kubelet_config

T0 = 1_700_000_000.0
AT_ONCE = PodBehaviour(start_delay=0.0, ready_delay=0.0, termination_delay=0.0)


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[ApiClient]:
    server = KubeServer(ServerConfig(data_dir=tmp_path / "data", port=0, memory=True))
    await server.start()
    async with ApiClient(load_kubeconfig(str(server.kubeconfig_path))) as api:
        yield api
    await server.stop()


async def test_a_stored_report_renders_the_same(client: ApiClient) -> None:
    pod = await client.create(PODS, {"metadata": {"name": "p"},
                                     "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}],
                                              "readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}},
                              namespace="default")
    ids = itertools.count(1)
    memo = new_pod_memo(pod, "node-1", "10.0.0.2", "10.244.1.2", T0)
    memo, _ = advance_pod(pod, memo, AT_ONCE, T0, lambda: f"containerd://{next(ids)}", BackOff())
    reported = render_status(pod, memo, AT_ONCE, T0)
    assert reported["phase"] == "Running"
    stored = await client.update_status(PODS, {**pod, "status": reported}, namespace="default")
    # A later event (a label, another writer's condition) brings the stored pod back.
    again = render_status(stored, memo, AT_ONCE, T0 + 5)
    assert same_status(again, stored["status"])
    # ... and a real change still asks for a write.
    assert not same_status(again, {**stored["status"], "phase": "Pending"})


class _Informer:
    """The kubelet's pod informer as its reconcile reads it: an indexer with the kubelet's indexes."""

    def __init__(self) -> None:
        self.indexer = Indexer({NODE_INDEX: _pod_node_index, ACTIVE_ON_NODE_INDEX: _active_on_node_index})


async def test_the_kubelet_does_not_rewrite_a_report_the_server_stored(client: ApiClient) -> None:
    """The agent's reconcile, fed back what the server stored, asks for no second write (the
    informer brings every later event of the pod the same way)."""
    kubelet = Kubelet(client, quick_kubelet_config(), wall=lambda: T0,
                      new_container_id=lambda: "containerd://1")
    pod = await client.create(PODS, {"metadata": {"name": "q"},
                                     "spec": {"nodeName": kubelet.nodes[0].name,
                                              "containers": [{"name": "c", "image": "nginx"}]}},
                              namespace="default")
    informer = _Informer()
    kubelet._pods = informer  # type: ignore[assignment]
    writes: list[dict[str, Any]] = []
    update_status = client.update_status

    async def counted(resource: Any, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        writes.append(body)
        written: dict[str, Any] = await update_status(resource, body, **kwargs)
        return written

    client.update_status = counted  # type: ignore[method-assign]
    for _ in range(3):
        informer.indexer.upsert(await client.get(PODS, "q", namespace="default"))
        await kubelet.reconcile(Request.for_object(pod))
    stored = await client.get(PODS, "q", namespace="default")
    assert stored["status"]["phase"] == "Running"
    assert {c["type"]: c["status"] for c in stored["status"]["conditions"]}["Ready"] == "True"
    assert len(writes) == 1, [w["status"].get("phase") for w in writes]

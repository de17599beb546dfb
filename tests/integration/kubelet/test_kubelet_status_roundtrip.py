"""The kubelet's report of an unchanged pod, compared with the status the API server stored,
asks for no write (kubeloop/kubelet/podstatus.py, ``same_status``): the embedded server answers
conditions without the ``lastProbeTime: null`` the kubelet sends, and a plain comparison made
every later event of a running pod cost a PUT of an unchanged status."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubeloop.client import PODS, ApiClient, load_kubeconfig
from kubeloop.kubelet.behaviour import PodBehaviour
from kubeloop.kubelet.containers import BackOff
from kubeloop.kubelet.podstate import advance_pod, new_pod_memo
from kubeloop.kubelet.podstatus import render_status, same_status
from kubeloop.server.app import KubeServer, ServerConfig

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

"""End-to-end CloneSet creation with host networking (kruise ``test/e2e/apps/cloneset.go``,
hostNetwork with a default host port) on the
embedded cluster, under the invariant monitor.

The pods' host ports are the API server's pod defaulting (a host-network pod's port without a
host port takes its container port), not the controller's: the CloneSet's template keeps its
ports as written.
"""

from __future__ import annotations

from cloneset_monitor import CloneSetMonitor
from test_cloneset_e2e import NS, Obj, get, new_cloneset, pods, progressing, wait_status

from kubeloop.api import kruise
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.testing.cluster import EmbeddedCluster


def host_network_cloneset() -> Obj:
    body = new_cloneset(1, progressDeadlineSeconds=600)
    template_spec = body["spec"]["template"]["spec"]
    template_spec["hostNetwork"] = True
    template_spec["containers"][0]["ports"] = [{"containerPort": 80}]
    return body


async def test_e1_host_network_pods_get_host_ports(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    await client.create(CLONESETS, host_network_cloneset(), namespace=NS)
    await wait_status(cluster, lambda s: s.get("readyReplicas") == 1, timeout=60)
    found = await pods(client)
    assert len(found) == 1
    for pod in found:
        assert pod["spec"]["hostNetwork"] is True
        ports = [port for container in pod["spec"]["containers"] for port in container.get("ports") or []]
        assert ports and all(port["hostPort"] == 80 for port in ports)
    template_ports = (await get(client))["spec"]["template"]["spec"]["containers"][0]["ports"]
    assert template_ports == [{"containerPort": 80, "protocol": "TCP"}]
    await wait_status(cluster, lambda s: progressing(s) == ("True", kruise.REASON_AVAILABLE), timeout=60)
    monitor.check()

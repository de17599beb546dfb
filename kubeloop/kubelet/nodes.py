"""The simulated nodes: their objects, heartbeat leases and addresses.

Node ``i`` (1-based) of ``N`` is ``kubeloop-node-i`` in zone ``zones[(i-1) % len(zones)]``,
so zones fill round-robin; its InternalIP is ``10.0.0.(i+1)`` and its pods take addresses
from ``10.244.i.0/24``. Each node renews a Lease in ``kube-node-lease`` as its heartbeat,
the way kubelets have since Kubernetes 1.14, and reports its status (Ready, capacity) when
it registers and then every few minutes.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop._version import __version__
from kubeloop.kubelet.podstatus import format_time_of

NODE_NAME_PREFIX = "kubeloop-node-"
HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
NODE_LEASE_NAMESPACE = "kube-node-lease"
DEFAULT_ZONES = ("zone-a", "zone-b", "zone-c")
KUBELET_VERSION = "v1.33.0"


@dataclass(frozen=True)
class NodeShape:
    """What every simulated node offers (``capacity`` equals ``allocatable``)."""

    cpu: str = "8"
    memory: str = "32Gi"
    pods: int = 110
    ephemeral_storage: str = "100Gi"

    def resources(self) -> dict[str, str]:
        return {"cpu": self.cpu, "memory": self.memory, "pods": str(self.pods),
                "ephemeral-storage": self.ephemeral_storage}


@dataclass(frozen=True)
class SimNode:
    """One simulated node's identity."""

    index: int
    name: str
    zone: str
    internal_ip: str
    pod_cidr: str


def sim_nodes(count: int, zones: Iterable[str] = DEFAULT_ZONES) -> list[SimNode]:
    """Nodes ``kubeloop-node-1..count``, zones round-robin (at most 250 nodes: one /24 each)."""
    zone_list = list(zones) or list(DEFAULT_ZONES)
    if not 0 <= count <= 250:
        raise ValueError(f"the simulated kubelet runs 0 to 250 nodes, not {count}")
    return [SimNode(i, f"{NODE_NAME_PREFIX}{i}", zone_list[(i - 1) % len(zone_list)], f"10.0.0.{i + 1}",
                    f"10.244.{i}.0/24") for i in range(1, count + 1)]


def node_labels(node: SimNode) -> dict[str, str]:
    return {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        HOSTNAME_LABEL: node.name,
        ZONE_LABEL: node.zone,
    }


def node_status(node: SimNode, shape: NodeShape, now: float, previous: Mapping[str, Any] | None = None
                ) -> dict[str, Any]:
    """The node's status at ``now``: healthy and Ready, with heartbeat times of ``now``.

    Transition times are kept from ``previous`` (the stored status) when a condition did not
    change, as a kubelet does.
    """
    stamp = format_time_of(now)
    # A stored status of the wrong shape (written before typed decoding refused it) is ignored,
    # and replaced by this one: the node repairs itself rather than failing every heartbeat.
    conditions = previous.get("conditions") if isinstance(previous, Mapping) else None
    old = {str(c.get("type")): c for c in conditions if isinstance(c, Mapping)} if isinstance(conditions, list) else {}

    def condition(condition_type: str, status: str, reason: str, message: str) -> dict[str, Any]:
        before = old.get(condition_type)
        since = before.get("lastTransitionTime") if before and before.get("status") == status else None
        return {"type": condition_type, "status": status, "reason": reason, "message": message,
                "lastHeartbeatTime": stamp, "lastTransitionTime": since or stamp}

    return {
        "capacity": shape.resources(),
        "allocatable": shape.resources(),
        "conditions": [
            condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "simulated node has memory to spare"),
            condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "simulated node has disk to spare"),
            condition("PIDPressure", "False", "KubeletHasSufficientPID", "simulated node has process ids to spare"),
            condition("Ready", "True", "KubeletReady", "simulated kubelet is posting ready status"),
        ],
        "addresses": [{"type": "InternalIP", "address": node.internal_ip}, {"type": "Hostname", "address": node.name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": f"kubeloop-{node.index}",
            "systemUUID": f"kubeloop-{node.index}",
            "bootID": f"kubeloop-{node.index}",
            "kernelVersion": "simulated",
            "osImage": f"kubeloop {__version__}",
            "containerRuntimeVersion": "simulated://1.0",
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": KUBELET_VERSION,
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    }


def node_object(node: SimNode, shape: NodeShape, now: float) -> dict[str, Any]:
    """A new Node object for registration."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": node_labels(node)},
        "spec": {"podCIDR": node.pod_cidr, "podCIDRs": [node.pod_cidr]},
        "status": node_status(node, shape, now),
    }


def lease_object(node_name: str, node_uid: str, duration_seconds: int, renew_time: str) -> dict[str, Any]:
    """The node's heartbeat Lease, owned by its Node (so it goes when the Node does)."""
    metadata: dict[str, Any] = {"name": node_name, "namespace": NODE_LEASE_NAMESPACE}
    if node_uid:
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": node_uid}]
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": metadata,
        "spec": {"holderIdentity": node_name, "leaseDurationSeconds": duration_seconds, "renewTime": renew_time},
    }


def free_pod_ip(node: SimNode, used: Iterable[str]) -> str:
    """The lowest address of the node's pod range not in ``used`` (.1 is the gateway)."""
    taken = set(used)
    for address in _pod_addresses(node.pod_cidr):
        if address not in taken:
            return address
    raise RuntimeError(f"node {node.name} has no free pod address left in {node.pod_cidr}")


@functools.lru_cache(maxsize=1024)
def _pod_addresses(pod_cidr: str) -> tuple[str, ...]:
    """The addresses pods may take in ``pod_cidr``, lowest first (all hosts but the gateway)."""
    return tuple(str(host) for host in ipaddress.ip_network(pod_cidr).hosts())[1:]

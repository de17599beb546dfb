"""Settings of the simulated kubelet (the ``kubeloop kubelet`` / ``kubeloop up`` options)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubeloop.kubelet.behaviour import BehaviourDefaults
from kubeloop.kubelet.containers import BackOff
from kubeloop.kubelet.nodes import DEFAULT_ZONES, NodeShape
from kubeloop.kubelet.scheduling import DEFAULT_SCHEDULER


@dataclass(frozen=True)
class KubeletConfig:
    """How many nodes to simulate and how their pods behave."""

    nodes: int = 3
    """Nodes ``kubeloop-node-1..nodes``."""
    zones: tuple[str, ...] = DEFAULT_ZONES
    """Zone labels, given to the nodes round-robin."""
    shape: NodeShape = field(default_factory=NodeShape)
    """Capacity (= allocatable) of every node."""
    defaults: BehaviourDefaults = field(default_factory=BehaviourDefaults)
    """Pod behaviour when the pod's ``sim.kubeloop.io/*`` annotations say nothing."""
    back_off: BackOff = field(default_factory=BackOff)
    """Restart back-off of crashing containers and retry back-off of failing image pulls."""
    scheduler_name: str = DEFAULT_SCHEDULER
    """Pods naming another scheduler are left Pending."""
    lease_duration_seconds: int = 40
    """``spec.leaseDurationSeconds`` of the node heartbeat Leases."""
    heartbeat_interval: float = 10.0
    """Seconds between Lease renewals (a quarter of the lease duration upstream)."""
    status_report_interval: float = 60.0
    """Seconds between node status reports when nothing changed."""
    unschedulable_retry: float = 5.0
    """Seconds before a pod no node could take is tried again (node changes retry at once)."""
    workers: int = 4
    """Pods reconciled concurrently."""
    control_plane_pods: bool = False
    """Publish mirror pods for the in-process control plane in ``kube-system`` on the first node
    (:mod:`kubeloop.kubelet.staticpods`), as a kind node does; only for the embedded cluster."""

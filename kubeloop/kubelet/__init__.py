"""The simulated node agent: schedules pods onto fake nodes and moves them through their lives.

:class:`Kubelet` is the I/O shell (an API client on the kubeloop runtime); the behaviour lives
in pure modules: :mod:`.behaviour` (the ``sim.kubeloop.io/*`` annotations), :mod:`.containers`
(one container's state machine), :mod:`.podstate` (the kubelet's memory of a pod),
:mod:`.podstatus` (the status drawn from it), :mod:`.scheduling` (node choice),
:mod:`.nodes` (Node and Lease objects), :mod:`.images` (reported image names and ids),
:mod:`.envmeta` (env read from pod metadata and the ``runtime-containers-meta`` report) and
:mod:`.launchpriority` (container launch-priority barriers).
"""

from kubeloop.kubelet.agent import Kubelet
from kubeloop.kubelet.behaviour import BehaviourDefaults, PodBehaviour, pod_behaviour
from kubeloop.kubelet.config import KubeletConfig
from kubeloop.kubelet.containers import BackOff
from kubeloop.kubelet.nodes import NodeShape, SimNode, sim_nodes

__all__ = [
    "BackOff",
    "BehaviourDefaults",
    "Kubelet",
    "KubeletConfig",
    "NodeShape",
    "PodBehaviour",
    "SimNode",
    "pod_behaviour",
    "sim_nodes",
]

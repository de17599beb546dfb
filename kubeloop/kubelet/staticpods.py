"""Mirror pods in ``kube-system`` for the control plane the embedded cluster runs in-process.

A kind or kubeadm node runs kube-apiserver, kube-controller-manager and kube-scheduler as
static pods, and its kubelet publishes each as a *mirror pod* in ``kube-system``
(``<component>-<node>``, labels ``component`` and ``tier: control-plane``, the
``kubernetes.io/config.*`` annotations, owned by the Node), so ``kubectl get pods -n
kube-system`` and tools that look there (for the API server's pod, its image tag, the
``component`` label) find them. In kubeloop the same roles are played by the embedded API
server, kubeloop's controllers and the simulated kubelet's scheduler; :func:`control_plane_pods`
describes mirror pods standing for them, run (and kept Ready) by the simulated kubelet like any
other pod on the first node. ``kubeloop up`` asks for them; a kubelet pointed at a real cluster
never creates them.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kubeloop.kubelet.nodes import KUBELET_VERSION

COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
NAMESPACE = "kube-system"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def control_plane_pods(node_name: str, node_uid: str, seen: str) -> list[dict[str, Any]]:
    """The mirror pods of the control plane on ``node_name`` (whose uid owns them); ``seen`` is
    the ``kubernetes.io/config.seen`` time (RFC 3339)."""
    pods = []
    for component in COMPONENTS:
        image = f"registry.k8s.io/{component}:{KUBELET_VERSION}"
        config_hash = hashlib.sha256(f"{component}\n{image}\n{node_name}".encode()).hexdigest()[:32]
        pods.append({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{component}-{node_name}",
                "namespace": NAMESPACE,
                "labels": {"component": component, "tier": "control-plane"},
                "annotations": {"kubernetes.io/config.hash": config_hash, MIRROR_ANNOTATION: config_hash,
                                "kubernetes.io/config.seen": seen, "kubernetes.io/config.source": "file"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": node_uid,
                                     "controller": True}],
            },
            "spec": {
                "nodeName": node_name,
                "priorityClassName": "system-node-critical",
                "priority": 2000001000,
                "hostNetwork": True,
                "containers": [{"name": component, "image": image, "command": [component],
                                "imagePullPolicy": "IfNotPresent"}],
                "tolerations": [{"operator": "Exists", "effect": "NoExecute"}],
                "restartPolicy": "Always",
            },
        })
    return pods

"""kube-controller-manager feature gates kubeloop models, and how a gate map switches them.

Upstream's gates live in ``pkg/features/kube_features.go``; ``AllAlpha`` and ``AllBeta`` switch
every gate of their stage (``k8s.io/component-base/featuregate``). Here apart from the
controllers' registry (:mod:`kubeloop.controllers`) so a controller reads its gate without
importing the registry, which names every other controller.
"""

from __future__ import annotations

from collections.abc import Mapping

KUBE_GATES: dict[str, bool] = {"DeploymentReplicaSetTerminatingReplicas": True}
"""kube-controller-manager gates kubeloop models -> alpha (True) or beta; off by default, as in
Kubernetes 1.33: ``DeploymentReplicaSetTerminatingReplicas`` makes the ReplicaSet controller
report ``status.terminatingReplicas`` (and so the Deployment controller, which sums them)."""


def kube_gate(feature_gates: Mapping[str, bool] | None, name: str) -> bool:
    """Whether the kube-controller-manager gate ``name`` is on: named explicitly, or switched by
    ``AllAlpha`` / ``AllBeta`` for its stage; off otherwise."""
    gates = feature_gates or {}
    if name in gates:
        return bool(gates[name])
    return bool(gates.get("AllAlpha" if KUBE_GATES[name] else "AllBeta", False))

"""What the simulated kubelet may do: the RBAC rules of the calls it makes.

It reads pods and nodes through the shared cache, registers and heartbeats its nodes (Node
objects, their status, and their Leases in ``kube-node-lease``), binds pending pods to nodes
(it is the scheduler too), writes pod status, finishes graceful deletions, publishes the
control plane's mirror pods (``kubeloop up``) and records Events.
A subset of upstream's ``system:node`` ClusterRole (kubernetes
``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`` NodeRules), without what a real
kubelet needs for volumes, secrets and certificates, which this one never reads.
"""

from __future__ import annotations

from typing import Any

Rule = dict[str, Any]

_READ = ["get", "list", "watch"]

KUBELET_RULES: tuple[Rule, ...] = (
    {"verbs": [*_READ, "create", "update", "patch"], "apiGroups": [""], "resources": ["nodes"]},
    {"verbs": ["update", "patch"], "apiGroups": [""], "resources": ["nodes/status"]},
    {"verbs": [*_READ, "create", "patch", "delete"], "apiGroups": [""], "resources": ["pods"]},
    {"verbs": ["update", "patch"], "apiGroups": [""], "resources": ["pods/status"]},
    {"verbs": ["create"], "apiGroups": [""], "resources": ["pods/binding"]},
    {"verbs": ["get", "create", "update"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"]},
    {"verbs": ["create", "update", "patch"], "apiGroups": ["", "events.k8s.io"], "resources": ["events"]},
)
"""The kubelet's rules, for a ClusterRole bound to its identity."""

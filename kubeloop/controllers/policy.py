"""What each kubeloop controller may do: the RBAC rules it needs, and nothing more.

For the controllers that have an upstream counterpart the rules are those of the
``system:controller:<name>`` ClusterRole kube-apiserver bootstraps for it
(kubernetes ``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go``:
``deployment-controller``, ``replicaset-controller``, ``generic-garbage-collector``,
``endpoint-controller``, ``endpointslice-controller``, ``clusterrole-aggregation-controller``);
the CloneSet controller's are the calls it makes (pods and their status, claims, revisions,
image pull jobs, nodes). Leader election needs the Lease of the manager in its namespace
(:data:`LEADER_ELECTION_RULES`, granted by a Role there, as upstream's
``system::leader-locking-kube-controller-manager``).

``kubeloop up`` binds the union of the running controllers' rules to the controllers'
own identity (:func:`controllers_cluster_role`), so a rule missing here fails here, with a
403, before it fails in a user's cluster.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Rule = dict[str, Any]


def rule(verbs: Iterable[str], groups: Iterable[str], resources: Iterable[str]) -> Rule:
    """A ``PolicyRule`` as JSON."""
    return {"verbs": list(verbs), "apiGroups": list(groups), "resources": list(resources)}


EVENTS_RULE = rule(("create", "update", "patch"), ("", "events.k8s.io"), ("events",))
"""Upstream's ``eventsRule()``: every controller records Events."""

READ = ("get", "list", "watch")

CONTROLLER_RULES: dict[str, tuple[Rule, ...]] = {
    "replicaset": (
        rule((*READ, "update"), ("apps", "extensions"), ("replicasets",)),
        rule(("update",), ("apps", "extensions"), ("replicasets/status",)),
        rule(("update",), ("apps", "extensions"), ("replicasets/finalizers",)),
        rule(("list", "watch", "patch", "create", "delete"), ("",), ("pods",)),
        EVENTS_RULE,
    ),
    "deployment": (
        rule((*READ, "update"), ("extensions", "apps"), ("deployments",)),
        rule(("update",), ("extensions", "apps"), ("deployments/status",)),
        rule(("update",), ("extensions", "apps"), ("deployments/finalizers",)),
        rule((*READ, "create", "update", "patch", "delete"), ("apps", "extensions"), ("replicasets",)),
        rule((*READ, "update"), ("",), ("pods",)),
        EVENTS_RULE,
    ),
    "garbagecollector": (
        rule((*READ, "patch", "update", "delete"), ("*",), ("*",)),
        EVENTS_RULE,
    ),
    "endpoint": (
        rule(READ, ("",), ("services", "pods")),
        rule((*READ, "create", "update", "delete"), ("",), ("endpoints",)),
        rule(("create",), ("",), ("endpoints/restricted",)),
        EVENTS_RULE,
    ),
    "endpointslice": (
        rule(READ, ("",), ("services", "pods", "nodes")),
        rule(("update",), ("",), ("services/finalizers",)),
        rule((*READ, "create", "update", "delete"), ("discovery.k8s.io",), ("endpointslices",)),
        EVENTS_RULE,
    ),
    "cloneset": (
        rule((*READ, "update"), ("apps.kruise.io",), ("clonesets",)),
        rule(("update",), ("apps.kruise.io",), ("clonesets/status", "clonesets/finalizers")),
        rule((*READ, "create", "delete"), ("apps.kruise.io",), ("imagepulljobs",)),
        rule((*READ, "create", "update", "patch", "delete"), ("",), ("pods",)),
        rule(("update", "patch"), ("",), ("pods/status",)),
        rule((*READ, "create", "update", "delete"), ("",), ("persistentvolumeclaims",)),
        rule((*READ, "create", "update", "patch", "delete"), ("apps",), ("controllerrevisions",)),
        rule(READ, ("",), ("nodes",)),
        EVENTS_RULE,
    ),
    "clusterroleaggregation": (
        rule(("escalate", *READ, "update", "patch"), ("rbac.authorization.k8s.io",), ("clusterroles",)),
    ),
}
"""Controller name (as :data:`kubeloop.controllers.CONTROLLERS`) -> the rules it needs."""

LEADER_ELECTION_RULES: tuple[Rule, ...] = (
    rule(("get", "create", "update"), ("coordination.k8s.io",), ("leases",)),
)
"""What a manager's leader election needs in its lease namespace (a Role there): the Lease only.
kubeloop's elector records no Events (upstream's ``system::leader-locking-kube-controller-manager``
holds no events rule either); the install's minimality test takes each rule out in turn."""


def controller_rules(names: Iterable[str]) -> list[Rule]:
    """The rules of the named controllers, in order, each rule once; KeyError for a controller
    this module does not know (every controller must declare its rules)."""
    out: list[Rule] = []
    for name in names:
        for entry in CONTROLLER_RULES[name]:
            if entry not in out:
                out.append(entry)
    return out


def controllers_cluster_role(name: str, controllers: Iterable[str]) -> dict[str, Any]:
    """A ClusterRole ``name`` granting what the named controllers need."""
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": controller_rules(controllers)}

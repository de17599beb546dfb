"""Least-privilege RBAC of an install: what the selected controllers and the webhook use, no more.

One ServiceAccount (``kubeloop-controller-manager``) runs both containers of the manager pod.
It is bound to:

* ClusterRole ``kubeloop-manager-role``: the union of the selected controllers' rules
  (:func:`kubeloop.controllers.policy.controller_rules`), so the role follows the selection;
* ClusterRole ``kubeloop-webhook-role``: :data:`kubeloop.webhook.configuration.WEBHOOK_CLUSTER_RULES`;
* Role ``kubeloop-leader-election-role`` in the install namespace:
  :data:`kubeloop.controllers.policy.LEADER_ELECTION_RULES` (the manager elects there);
* Role ``kubeloop-webhook-role`` in the install namespace:
  :data:`kubeloop.webhook.configuration.WEBHOOK_NAMESPACE_RULES` (its certificate Secret);
* with the replicaset, deployment or garbagecollector controller selected, Role
  ``kubeloop-kcm-lease-reader`` in ``kube-system``: ``get`` on the one Lease
  ``kube-controller-manager``, so ``kubeloop controllers`` can see whether kube-controller-manager
  runs (:mod:`kubeloop.controllers.coexistence`) instead of being refused the look.

Names follow OpenKruise's (``kruise-manager-role``, ``kruise-leader-election-role`` and their
``...-rolebinding``) with the ``kubeloop`` prefix.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from kubeloop.controllers.coexistence import KCM_LEASE_NAME, KCM_LEASE_NAMESPACE, conflicting
from kubeloop.controllers.policy import LEADER_ELECTION_RULES, controller_rules
from kubeloop.webhook.configuration import WEBHOOK_CLUSTER_RULES, WEBHOOK_NAMESPACE_RULES

Obj = dict[str, Any]

SERVICE_ACCOUNT = "kubeloop-controller-manager"
MANAGER_ROLE = "kubeloop-manager-role"
WEBHOOK_ROLE = "kubeloop-webhook-role"
LEADER_ELECTION_ROLE = "kubeloop-leader-election-role"
KCM_LEASE_READER_ROLE = "kubeloop-kcm-lease-reader"
_RBAC = "rbac.authorization.k8s.io"


def service_account(namespace: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": SERVICE_ACCOUNT, "namespace": namespace}}


def _role(kind: str, name: str, namespace: str | None, rules: Sequence[Obj]) -> Obj:
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": f"{_RBAC}/v1", "kind": kind, "metadata": meta, "rules": copy.deepcopy(list(rules))}


def _binding(role: Obj, namespace: str) -> Obj:
    kind = "ClusterRoleBinding" if role["kind"] == "ClusterRole" else "RoleBinding"
    meta = {**role["metadata"], "name": role["metadata"]["name"].removesuffix("-role") + "-rolebinding"}
    return {"apiVersion": f"{_RBAC}/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": _RBAC, "kind": role["kind"], "name": role["metadata"]["name"]},
            "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": namespace}]}


def manager_cluster_role(controllers: Sequence[str]) -> Obj:
    """The ClusterRole of the selected controllers: exactly their declared rules."""
    return _role("ClusterRole", MANAGER_ROLE, None, controller_rules(controllers))


def kcm_lease_reader_role() -> Obj:
    return _role("Role", KCM_LEASE_READER_ROLE, KCM_LEASE_NAMESPACE, [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [KCM_LEASE_NAME],
         "verbs": ["get"]}])


def rbac_objects(namespace: str, controllers: Sequence[str]) -> list[Obj]:
    """ServiceAccount, roles and bindings, each role followed by its binding."""
    roles = [
        manager_cluster_role(controllers),
        _role("ClusterRole", WEBHOOK_ROLE, None, WEBHOOK_CLUSTER_RULES),
        _role("Role", LEADER_ELECTION_ROLE, namespace, LEADER_ELECTION_RULES),
        _role("Role", WEBHOOK_ROLE, namespace, WEBHOOK_NAMESPACE_RULES),
    ]
    if conflicting(controllers):
        roles.append(kcm_lease_reader_role())
    out = [service_account(namespace)]
    for role in roles:
        out.extend((role, _binding(role, namespace)))
    return out

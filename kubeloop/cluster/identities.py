"""Identities of their own for the kubelet and the controllers a kubeloop cluster runs.

As kube-controller-manager with ``--use-service-account-credentials``: each component talks to
the API server as a ServiceAccount in ``kube-system`` (``kubeloop-controllers``,
``kubeloop-kubelet``), bound to a ClusterRole holding exactly the rules it declares
(:mod:`kubeloop.controllers.policy`, :mod:`kubeloop.kubelet.policy`) and, for the controllers,
a Role on their leader-election Lease. Tokens come from the TokenRequest API, as a pod's
projected token would. So with RBAC enforced, a rule a controller forgot to declare is a 403
in the embedded cluster rather than in a user's cluster.

:func:`provision` writes those objects with the administrator's client (creating what is
missing, replacing rules and subjects that drifted) and returns a client configuration per
component.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from kubeloop.client import ApiClient, ClientConfig, is_already_exists, is_not_found
from kubeloop.controllers.policy import LEADER_ELECTION_RULES, controllers_cluster_role
from kubeloop.kubelet.policy import KUBELET_RULES

Obj = dict[str, Any]

NAMESPACE = "kube-system"
CONTROLLERS_ACCOUNT = "kubeloop-controllers"
KUBELET_ACCOUNT = "kubeloop-kubelet"
TOKEN_SECONDS = 365 * 24 * 3600
"""Lifetime asked of each component token: the cluster process outlives no such span."""
_RBAC = "rbac.authorization.k8s.io/v1"


def _subject(account: str) -> list[Obj]:
    return [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]


def component_objects(controllers: Sequence[str], kubelet: bool, lease_namespace: str) -> list[tuple[str, Obj]]:
    """``(resource, body)`` of every object :func:`provision` writes, in creation order."""
    objects: list[tuple[str, Obj]] = []
    accounts = [(CONTROLLERS_ACCOUNT, "kubeloop:controllers")]
    if kubelet:
        accounts.append((KUBELET_ACCOUNT, "kubeloop:kubelet"))
    for account, _ in accounts:
        objects.append(("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                            "metadata": {"name": account, "namespace": NAMESPACE}}))
    controllers_role = controllers_cluster_role("kubeloop:controllers", controllers)
    if kubelet:
        # The kubelet reads pods and nodes through the controllers' shared caches (one
        # process, one informer per resource), so their identity lists and watches them.
        shared = {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods", "nodes"]}
        if shared not in controllers_role["rules"]:
            controllers_role["rules"].append(shared)
    objects.append(("clusterroles", controllers_role))
    if kubelet:
        objects.append(("clusterroles", {"apiVersion": _RBAC, "kind": "ClusterRole",
                                         "metadata": {"name": "kubeloop:kubelet"}, "rules": list(KUBELET_RULES)}))
    for account, role in accounts:
        objects.append(("clusterrolebindings", {
            "apiVersion": _RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": _subject(account)}))
    objects.append(("roles", {"apiVersion": _RBAC, "kind": "Role",
                              "metadata": {"name": "kubeloop:leader-election", "namespace": lease_namespace},
                              "rules": list(LEADER_ELECTION_RULES)}))
    objects.append(("rolebindings", {
        "apiVersion": _RBAC, "kind": "RoleBinding",
        "metadata": {"name": "kubeloop:leader-election", "namespace": lease_namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "kubeloop:leader-election"},
        "subjects": _subject(CONTROLLERS_ACCOUNT)}))
    return objects


async def _ensure(admin: ApiClient, resource: str, body: Obj) -> None:
    meta = body["metadata"]
    try:
        await admin.create(resource, body, namespace=meta.get("namespace"))
        return
    except Exception as exc:
        if not is_already_exists(exc):
            raise
    if resource == "serviceaccounts":
        return
    current = await admin.get(resource, meta["name"], namespace=meta.get("namespace"))
    if all(current.get(key) == body.get(key) for key in ("rules", "subjects", "roleRef")):
        return
    await admin.update(resource, {**current, **{k: v for k, v in body.items() if k != "metadata"}},
                       namespace=meta.get("namespace"))


async def _token(admin: ApiClient, account: str) -> str:
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "metadata": {"name": account, "namespace": NAMESPACE},
               "spec": {"expirationSeconds": TOKEN_SECONDS}}
    answer = await admin.create("serviceaccounts", request, namespace=NAMESPACE, subresource="token")
    token = answer.get("status", {}).get("token")
    if not isinstance(token, str) or not token:
        raise RuntimeError(f"the server issued no token for {NAMESPACE}/{account}")
    return token


def _as(config: ClientConfig, token: str) -> ClientConfig:
    return dataclasses.replace(config, token=token, token_file=None, client_cert_data=None, client_cert_file=None,
                               client_key_data=None, client_key_file=None, exec=None)


async def provision(admin: ApiClient, controllers: Sequence[str], kubelet: bool,
                    lease_namespace: str = NAMESPACE) -> tuple[ClientConfig, ClientConfig | None]:
    """Write the components' accounts, roles and bindings; returns the controllers' and the
    kubelet's client configurations (the latter None without a kubelet)."""
    for resource, body in component_objects(controllers, kubelet, lease_namespace):
        try:
            await _ensure(admin, resource, body)
        except Exception as exc:
            if not is_not_found(exc):
                raise
            raise RuntimeError(f"the server does not serve {resource}: cannot give components identities") from exc
    controllers_config = _as(admin.config, await _token(admin, CONTROLLERS_ACCOUNT))
    kubelet_config = _as(admin.config, await _token(admin, KUBELET_ACCOUNT)) if kubelet else None
    return controllers_config, kubelet_config

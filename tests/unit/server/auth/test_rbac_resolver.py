"""Which bindings apply to a user, the RBAC authorizer's decisions and reasons, and its cache."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kubeloop.server.auth.attributes import RequestAttributes
from kubeloop.server.auth.rbac.resolver import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    ROLE_BINDINGS,
    ROLES,
    RBACAuthorizer,
    aggregate,
)
from kubeloop.server.auth.user import UserInfo
from kubeloop.server.storage import ResourceType, Storage

G = "rbac.authorization.k8s.io"
ALICE = UserInfo("alice", ("devs", "system:authenticated"))
SA = UserInfo("system:serviceaccount:ns:robot", ("system:serviceaccounts", "system:serviceaccounts:ns"))


@pytest.fixture
def storage() -> Iterator[Storage]:
    store = Storage.open(None, memory=True)
    yield store
    store.close()


def _put(storage: Storage, rt: ResourceType, name: str, namespace: str = "", **fields: Any) -> None:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    storage.create(rt, {"metadata": meta, **fields})


def _role(storage: Storage, name: str, rules: list[dict[str, Any]], namespace: str = "") -> None:
    _put(storage, ROLES if namespace else CLUSTER_ROLES, name, namespace, rules=rules)


def _bind(storage: Storage, name: str, kind: str, role: str, subjects: list[dict[str, Any]],
          namespace: str = "") -> None:
    _put(storage, ROLE_BINDINGS if namespace else CLUSTER_ROLE_BINDINGS, name, namespace,
         roleRef={"apiGroup": G, "kind": kind, "name": role}, subjects=subjects)


def _user(name: str) -> dict[str, str]:
    return {"kind": "User", "apiGroup": G, "name": name}


def _group(name: str) -> dict[str, str]:
    return {"kind": "Group", "apiGroup": G, "name": name}


PODS_GET = [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]


def _get_pod(namespace: str = "ns") -> RequestAttributes:
    return RequestAttributes(True, "get", "", "", "v1", namespace, "pods", "", "p")


@pytest.mark.parametrize(("subject", "user", "subject_text"), [
    (_user("alice"), ALICE, 'User "alice"'),
    (_group("devs"), ALICE, 'Group "devs"'),
    ({"kind": "ServiceAccount", "name": "robot", "namespace": "ns"}, SA, 'ServiceAccount "robot/ns"'),
])
def test_each_subject_kind_of_a_cluster_role_binding(storage: Storage, subject: dict[str, Any], user: UserInfo,
                                                     subject_text: str) -> None:
    _role(storage, "reader", PODS_GET)
    authorizer = RBACAuthorizer(storage)
    assert authorizer.authorize(user, _get_pod()).allowed is False
    _bind(storage, "b", "ClusterRole", "reader", [subject])
    decision = authorizer.authorize(user, _get_pod())
    assert decision.allowed
    assert decision.reason == f'RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "reader" to {subject_text}'
    assert authorizer.authorize(UserInfo("bob", ("others",)), _get_pod()).allowed is False


def test_a_service_account_subject_without_namespace_is_the_role_bindings(storage: Storage) -> None:
    _role(storage, "reader", PODS_GET)
    _bind(storage, "b", "ClusterRole", "reader", [{"kind": "ServiceAccount", "name": "robot"}], namespace="ns")
    decision = RBACAuthorizer(storage).authorize(SA, _get_pod())
    assert decision.reason == 'RBAC: allowed by RoleBinding "b/ns" of ClusterRole "reader" to ServiceAccount "robot/ns"'
    # In a cluster binding it names nobody.
    _bind(storage, "c", "ClusterRole", "reader", [{"kind": "ServiceAccount", "name": "robot"}])
    assert RBACAuthorizer(storage).authorize(SA, _get_pod("other")).allowed is False


def test_a_role_binding_to_a_cluster_role_grants_only_in_its_namespace(storage: Storage) -> None:
    _role(storage, "reader", PODS_GET)
    _bind(storage, "b", "ClusterRole", "reader", [_user("alice")], namespace="ns")
    authorizer = RBACAuthorizer(storage)
    assert authorizer.authorize(ALICE, _get_pod("ns")).allowed
    assert not authorizer.authorize(ALICE, _get_pod("other")).allowed
    assert not authorizer.authorize(ALICE, _get_pod("")).allowed


def test_a_role_binding_to_a_role_reads_the_role_of_its_namespace(storage: Storage) -> None:
    _role(storage, "reader", PODS_GET, namespace="ns")
    _role(storage, "reader", [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}], namespace="other")
    _bind(storage, "b", "Role", "reader", [_user("alice")], namespace="ns")
    authorizer = RBACAuthorizer(storage)
    decision = authorizer.authorize(ALICE, _get_pod("ns"))
    assert decision.reason == 'RBAC: allowed by RoleBinding "b/ns" of Role "reader" to User "alice"'
    assert not authorizer.authorize(ALICE, RequestAttributes(True, "delete", "", "", "v1", "ns", "pods")).allowed


def test_missing_roles_are_the_reason_of_a_denial(storage: Storage) -> None:
    authorizer = RBACAuthorizer(storage)
    assert authorizer.authorize(ALICE, _get_pod()).reason == ""
    _bind(storage, "b", "ClusterRole", "gone", [_user("alice")])
    assert authorizer.authorize(ALICE, _get_pod()).reason == \
        'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found'
    _bind(storage, "c", "Role", "gone-too", [_group("devs")], namespace="ns")
    assert authorizer.authorize(ALICE, _get_pod()).reason == (
        'RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, '
        'role.rbac.authorization.k8s.io "gone-too" not found]')


def test_non_resource_urls_through_a_cluster_role_binding(storage: Storage) -> None:
    _role(storage, "probe", [{"verbs": ["get"], "nonResourceURLs": ["/healthz*"]}])
    _bind(storage, "b", "ClusterRole", "probe", [_group("system:authenticated")])
    authorizer = RBACAuthorizer(storage)
    assert authorizer.authorize(ALICE, RequestAttributes(False, "get", "/healthz/etcd")).allowed
    assert not authorizer.authorize(ALICE, RequestAttributes(False, "get", "/metrics")).allowed


def test_the_cache_follows_every_rbac_kind(storage: Storage) -> None:
    authorizer = RBACAuthorizer(storage)
    _bind(storage, "b", "ClusterRole", "reader", [_user("alice")])
    assert not authorizer.authorize(ALICE, _get_pod()).allowed
    _role(storage, "reader", PODS_GET)  # the role appears: allowed
    assert authorizer.authorize(ALICE, _get_pod()).allowed
    role = storage.get(CLUSTER_ROLES, "", "reader")
    assert role is not None
    storage.update(CLUSTER_ROLES, {**role, "rules": []})  # the role loses its rule
    assert not authorizer.authorize(ALICE, _get_pod()).allowed
    _role(storage, "ns-reader", PODS_GET, namespace="ns")
    _bind(storage, "nb", "Role", "ns-reader", [_user("alice")], namespace="ns")
    assert authorizer.authorize(ALICE, _get_pod()).allowed
    storage.delete(ROLE_BINDINGS, "ns", "nb")
    assert not authorizer.authorize(ALICE, _get_pod()).allowed


def test_rules_for_lists_cluster_then_namespace_rules_and_errors(storage: Storage) -> None:
    _role(storage, "a", PODS_GET)
    _role(storage, "b", [{"verbs": ["list"], "apiGroups": ["apps"], "resources": ["deployments"]}], namespace="ns")
    _bind(storage, "x", "ClusterRole", "a", [_user("alice")])
    _bind(storage, "y", "Role", "b", [_user("alice")], namespace="ns")
    _bind(storage, "z", "Role", "missing", [_user("alice")], namespace="ns")
    rules, errors = RBACAuthorizer(storage).resolver.rules_for(ALICE, "ns")
    assert [r.as_json() for r in rules] == [
        *PODS_GET, {"verbs": ["list"], "apiGroups": ["apps"], "resources": ["deployments"]}]
    assert errors == ['role.rbac.authorization.k8s.io "missing" not found']


@pytest.mark.parametrize(("errors", "text"), [
    (["a"], "a"), (["a", "b"], "[a, b]"), (["a", "a"], "a"), (["a", "b", "a"], "[a, b]")])
def test_aggregate_is_gos_error_aggregate(errors: list[str], text: str) -> None:
    assert aggregate(errors) == text

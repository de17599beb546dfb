"""Roles, ClusterRoles and their bindings: defaults, rules, subjects, immutable roleRef."""

from __future__ import annotations

from typing import Any

import pytest
from kinds_b_helpers import create, stored, update

RBAC = "rbac.authorization.k8s.io"


def binding(kind: str = "RoleBinding", ref_kind: str = "Role", **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "b"}
    if kind == "RoleBinding":
        meta["namespace"] = "default"
    return {"metadata": meta, "roleRef": {"kind": ref_kind, "name": "r"}, **extra}


def test_binding_defaults_api_groups_of_role_ref_users_and_groups_not_service_accounts() -> None:
    obj = binding(subjects=[{"kind": "User", "name": "u"}, {"kind": "Group", "name": "g"},
                            {"kind": "ServiceAccount", "name": "sa", "namespace": "default"}])
    assert create(RBAC, "RoleBinding", obj, namespaced=True) == []
    assert obj["roleRef"]["apiGroup"] == RBAC
    assert [s.get("apiGroup") for s in obj["subjects"]] == [RBAC, RBAC, None]


@pytest.mark.parametrize(
    ("rules", "namespaced", "expected"),
    [
        ([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}], True, []),
        ([{"apiGroups": [""], "resources": ["pods"]}], True,
         ["rules[0].verbs: Required value: verbs must contain at least one value"]),
        ([{"verbs": ["get"]}], True,
         ["rules[0].apiGroups: Required value: resource rules must supply at least one api group",
          "rules[0].resources: Required value: resource rules must supply at least one resource"]),
        ([{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}], True,
         ['rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to '
          "non-resource URLs"]),
        ([{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}], False, []),
        ([{"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]}], False,
         ['rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources '
          "and non-resource URLs"]),
    ],
)
def test_policy_rules(rules: list[dict[str, Any]], namespaced: bool, expected: list[str]) -> None:
    meta: dict[str, Any] = {"name": "r", "namespace": "default"} if namespaced else {"name": "r"}
    kind = "Role" if namespaced else "ClusterRole"
    assert create(RBAC, kind, {"metadata": meta, "rules": rules}, namespaced=namespaced) == expected


@pytest.mark.parametrize(
    ("aggregation", "expected"),
    [
        ({"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}, []),
        ({}, ["aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if "
              "aggregationRule is non-nil"]),
        ({"clusterRoleSelectors": [{"matchLabels": {"a": "b c"}}]},
         ['aggregationRule.clusterRoleSelectors[0].matchLabels: Invalid value: "b c": a valid label must be an empty '
          "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
          "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
          "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]),
    ],
)
def test_cluster_role_aggregation_rule(aggregation: dict[str, Any], expected: list[str]) -> None:
    assert create(RBAC, "ClusterRole", {"metadata": {"name": "agg"}, "aggregationRule": aggregation}) == expected


@pytest.mark.parametrize(
    ("kind", "obj", "expected"),
    [
        ("RoleBinding", binding(ref_kind="Pod"),
         ['roleRef.kind: Unsupported value: "Pod": supported values: "Role", "ClusterRole"']),
        ("ClusterRoleBinding", binding("ClusterRoleBinding", "Role"),
         ['roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"']),
        ("RoleBinding", binding(roleRef={"kind": "Role", "name": "r", "apiGroup": "x"}),
         ['roleRef.apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io"']),
        ("RoleBinding", binding(roleRef={"kind": "Role"}), ["roleRef.name: Required value"]),
        ("RoleBinding", binding(subjects=[{"kind": "Robot", "name": "x"}]),
         ['subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"']),
        ("RoleBinding", binding(subjects=[{"kind": "User"}]), ["subjects[0].name: Required value"]),
        ("RoleBinding", binding(subjects=[{"kind": "ServiceAccount", "name": "sa", "apiGroup": "v"}]),
         ['subjects[0].apiGroup: Unsupported value: "v": supported values: ""']),
        ("ClusterRoleBinding", binding("ClusterRoleBinding", "ClusterRole",
                                       subjects=[{"kind": "ServiceAccount", "name": "sa"}]),
         ["subjects[0].namespace: Required value"]),
        ("RoleBinding", binding(subjects=[{"kind": "ServiceAccount", "name": "sa"}]), []),
    ],
)
def test_binding_validation(kind: str, obj: dict[str, Any], expected: list[str]) -> None:
    assert create(RBAC, kind, obj, namespaced=kind == "RoleBinding") == expected


@pytest.mark.parametrize("kind", ["RoleBinding", "ClusterRoleBinding"])
def test_role_ref_cannot_change(kind: str) -> None:
    old = stored(RBAC, kind, binding(kind, "ClusterRole"), namespaced=kind == "RoleBinding")

    def rename(new: dict[str, Any]) -> None:
        new["roleRef"]["name"] = "other"

    def relabel(new: dict[str, Any]) -> None:
        new["metadata"]["labels"] = {"a": "b"}

    assert update(RBAC, kind, old, rename, namespaced=kind == "RoleBinding") == [
        'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", '
        'Name:"other"}: cannot change roleRef']
    assert update(RBAC, kind, old, relabel, namespaced=kind == "RoleBinding") == []


def test_rbac_names_are_path_segments() -> None:
    role = {"metadata": {"name": "system:controller:x"}, "rules": []}
    assert create(RBAC, "ClusterRole", role) == []
    assert create(RBAC, "ClusterRole", {"metadata": {"name": "a/b"}}) == [
        "metadata.name: Invalid value: \"a/b\": may not contain '/'"]
